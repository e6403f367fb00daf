import Foundation

/// One result handed from a writer thread to a waiting caller (the blocking `perform` of both engines' writers).
public final class ResultWaiter<T: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    private var result: Result<T, any Error>?

    public init() {}

    public func finish(_ result: Result<T, any Error>) {
        condition.lock()
        self.result = result
        condition.signal()
        condition.unlock()
    }

    public func wait() -> Result<T, any Error> {
        condition.lock()
        defer { condition.unlock() }
        while result == nil { condition.wait() }
        return result!
    }
}
