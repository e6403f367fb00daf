import Synchronization

/// The halt after a failed append, shared by the log's engines: once an append failed, every later one fails
/// at once with `ChatLogError.halted` until the owner has rebuilt its state from the store and calls `resume()`
/// (the later records' seqs were given out after the lost ones').
///
/// "Later" means submitted before the resume, whenever it runs: an append takes a ticket (the epoch) when it is
/// submitted, and `resume()` starts a new epoch, so an append queued behind the failed one that the writer
/// reaches only after the owner resumed (a slow writer, a fast rebuild) still fails instead of writing a seq
/// that follows a lost one (a gap in the thread).
public final class AppendHalt: Sendable {
    private struct State {
        var halted = false
        var epoch = 0
    }
    private let state = Mutex(State())

    public init() {}

    /// The epoch an append is submitted in: take it when submitting, pass it to `run`.
    public func ticket() -> Int { state.withLock { $0.epoch } }

    /// Runs `insert` (on the writer, inside the batch) unless halted or submitted before the last resume; its
    /// failure halts.
    public func run<T>(_ ticket: Int, _ insert: () throws -> T) throws -> T {
        guard state.withLock({ !$0.halted && $0.epoch == ticket }) else { throw ChatLogError.halted }
        do {
            return try insert()
        } catch {
            state.withLock { $0.halted = true }
            throw error
        }
    }

    /// `completion`, halting first when the batch did not commit (the insert ran but nothing stuck).
    public func guarding<T>(_ completion: @escaping @Sendable (Result<T, any Error>) -> Void)
        -> @Sendable (Result<T, any Error>) -> Void {
        { [self] result in
            if case .failure = result { state.withLock { $0.halted = true } }
            completion(result)
        }
    }

    public func resume() {
        state.withLock { state in
            state.halted = false
            state.epoch += 1
        }
    }
}
