import Synchronization

/// The halt after a failed append, shared by the log's engines: once an append failed, every later one fails
/// at once with `ChatLogError.halted` until the owner has rebuilt its state from the store and calls `resume()`
/// (the later records' seqs were given out after the lost ones').
public final class AppendHalt: Sendable {
    private let halted = Mutex(false)

    public init() {}

    /// Runs `insert` (on the writer, inside the batch) unless halted; its failure halts.
    public func run<T>(_ insert: () throws -> T) throws -> T {
        guard !halted.withLock({ $0 }) else { throw ChatLogError.halted }
        do {
            return try insert()
        } catch {
            halted.withLock { $0 = true }
            throw error
        }
    }

    /// `completion`, halting first when the batch did not commit (the insert ran but nothing stuck).
    public func guarding<T>(_ completion: @escaping @Sendable (Result<T, any Error>) -> Void)
        -> @Sendable (Result<T, any Error>) -> Void {
        { [self] result in
            if case .failure = result { halted.withLock { $0 = true } }
            completion(result)
        }
    }

    public func resume() {
        halted.withLock { $0 = false }
    }
}
