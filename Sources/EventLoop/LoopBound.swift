/// A value that lives on one loop and may be carried through `@Sendable`
/// closures (such as `Loop.execute` jobs) but only read or written on that
/// loop's thread, which debug builds check on every access.
public final class LoopBound<Value>: @unchecked Sendable {
    public let loop: Loop
    private var storage: Value

    public init(_ value: Value, loop: Loop) {
        self.loop = loop
        storage = value
    }

    public var value: Value {
        get {
            loop.assertOnLoop()
            return storage
        }
        set {
            loop.assertOnLoop()
            storage = newValue
        }
    }
}
