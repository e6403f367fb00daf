import Foundation

extension NSLock {
    /// `body` under the lock (the client does not rely on Foundation's `withLock`, whose availability differs by platform).
    func locked<R>(_ body: () throws -> R) rethrows -> R {
        lock()
        defer { unlock() }
        return try body()
    }
}
