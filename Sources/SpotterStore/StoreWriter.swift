import Foundation
import GRDB
import SpotterPorts

/// One dedicated thread that owns writes. Jobs submitted while a transaction runs are committed together in the
/// next one (group commit): durability costs one commit (one WAL fsync with synchronous=FULL) per batch, not per
/// job.
///
/// Each job runs in its own SAVEPOINT inside the batch transaction, so a job that throws rolls back only itself;
/// its completion gets the error. Completions are called on the writer thread, in submission order, only after
/// the batch transaction COMMITTED (never before: acknowledge after commit). If the COMMIT itself fails, every
/// job of the batch gets the error.
///
/// For a database file, a second thread copies committed pages from the WAL into the file (`Checkpointer`), so
/// commits do not do it.
///
/// Call `stop()` before dropping the writer: the thread keeps the writer alive until then.
public final class StoreWriter: @unchecked Sendable {
    // Everything below `condition` is guarded by it.
    private let condition = NSCondition()
    private var queue: [any WriterJob] = []
    private var stopping = false
    private var stopped = false
    private var batches = 0
    private var jobs = 0
    private var thread: Thread?

    private let store: Store
    private let maxBatch: Int
    private let onRollback: @Sendable () -> Void
    private let checkpointer: Checkpointer?

    /// `onRollback` runs on the writer thread whenever something it wrote did not stick: after a job's savepoint
    /// rolled back (the job threw) and after a batch that did not commit: a cache of what the writer wrote would
    /// drop its contents there. No caller passes one today (the log engines keep no writer-side cache).
    public init(store: Store, maxBatch: Int = 512, onRollback: @escaping @Sendable () -> Void = {}) {
        self.store = store
        self.maxBatch = max(maxBatch, 1)
        self.onRollback = onRollback
        // Without a checkpoint connection (it could not open) the writer's automatic checkpoint does the work.
        self.checkpointer = store.path.flatMap { try? Checkpointer(path: $0) }
        let thread = Thread { [self] in self.run() }
        thread.name = "spotter.store.writer"
        self.thread = thread
        thread.start()
    }

    /// Thread-safe. `work` runs on the writer thread inside the batch transaction; `completion` runs on the
    /// writer thread after the batch committed (or failed). After `stop()`, the completion gets
    /// `StoreWriterError.stopped` at once, on the caller's thread.
    package func submit<T: Sendable>(_ work: @escaping @Sendable (Database) throws -> T,
                                    completion: @escaping @Sendable (Result<T, any Error>) -> Void) {
        condition.lock()
        guard !stopping else {
            condition.unlock()
            completion(.failure(StoreWriterError.stopped))
            return
        }
        queue.append(Job(work: work, completion: completion))
        condition.signal()
        condition.unlock()
    }

    /// Runs `work` in the next batch and waits until that batch committed: the blocking form of `submit`, for
    /// callers on a thread that may wait (a request's worker thread; never the event loop, never the writer
    /// thread itself). `afterCommit` runs on the writer thread after the commit, in commit order, before this
    /// returns: caches of committed rows update there, so two writers cannot apply their changes out of order.
    package func perform<T: Sendable>(_ work: @escaping @Sendable (Database) throws -> T,
                                     afterCommit: (@Sendable (T) -> Void)? = nil) throws -> T {
        precondition(!isWriterThread, "StoreWriter.perform on the writer thread would wait for itself")
        let done = ResultWaiter<T>()
        submit(work) { result in
            if case .success(let value) = result { afterCommit?(value) }
            done.finish(result)
        }
        return try done.wait().get()
    }

    private var isWriterThread: Bool {
        condition.lock()
        defer { condition.unlock() }
        guard let thread else { return false }
        return Thread.current === thread
    }

    /// Finishes queued jobs, then stops the thread. Idempotent. Jobs submitted after stop get an error.
    /// Called from the writer thread itself (in a completion), it only asks the thread to stop.
    public func stop() {
        condition.lock()
        defer { condition.unlock() }
        stopping = true
        condition.broadcast()
        if let thread, Thread.current === thread { return }
        while !stopped { condition.wait() }
    }

    /// Batches committed so far (for tests and metrics).
    public var batchesCommitted: Int {
        condition.lock()
        defer { condition.unlock() }
        return batches
    }

    /// Passes of the checkpoint thread so far (0 for an in-memory store).
    public var checkpointPasses: Int { checkpointer?.passCount ?? 0 }

    /// Jobs whose work succeeded in a committed batch.
    public var jobsCommitted: Int {
        condition.lock()
        defer { condition.unlock() }
        return jobs
    }

    // MARK: The writer thread

    private func run() {
        while let batch = nextBatch() {
            var ran = batch.count
            var commitError: (any Error)?
            do {
                try store.writer.writeWithoutTransaction { db in
                    try db.inTransaction(.immediate) {
                        for (index, job) in batch.enumerated() {
                            job.run(db)
                            if !job.succeeded { onRollback() }  // before the next job reads the cache
                            // SQLite may abort the whole transaction on some errors (SQLITE_FULL, IOERR…).
                            // Later jobs must not run outside it: they go back to the queue.
                            if !db.isInsideTransaction {
                                ran = index + 1
                                throw StoreWriterError.transactionAborted
                            }
                        }
                        return .commit
                    }
                }
            } catch {
                commitError = error
            }
            if commitError != nil { onRollback() }
            let completed = batch[..<ran]
            if ran < batch.count {
                condition.lock()
                queue.insert(contentsOf: batch[ran...], at: 0)
                condition.unlock()
            }
            if commitError == nil {
                let succeeded = completed.filter(\.succeeded).count
                condition.lock()
                batches += 1
                jobs += succeeded
                condition.unlock()
            }
            for job in completed { job.finish(commitError: commitError) }
        }
        checkpointer?.stop()
    }

    /// Waits for jobs; nil once stopping and the queue is drained.
    private func nextBatch() -> [any WriterJob]? {
        condition.lock()
        defer { condition.unlock() }
        while queue.isEmpty && !stopping { condition.wait() }
        if queue.isEmpty {
            stopped = true
            thread = nil  // the thread's closure holds the writer: break the cycle as it ends
            condition.broadcast()
            return nil
        }
        let count = min(queue.count, maxBatch)
        let batch = Array(queue[..<count])
        queue.removeFirst(count)
        return batch
    }
}

public enum StoreWriterError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The writer was stopped before the job was submitted.
    case stopped
    /// SQLite rolled the batch transaction back on its own; nothing of the batch was committed.
    case transactionAborted

    public var description: String {
        switch self {
        case .stopped: return "the store writer is stopped"
        case .transactionAborted: return "the batch transaction was aborted"
        }
    }
}

private protocol WriterJob {
    /// Runs the work in its own savepoint and keeps its result.
    func run(_ db: Database)
    /// Whether the work returned (rather than threw).
    var succeeded: Bool { get }
    /// Calls the completion: with the kept result, or with `commitError` if the batch did not commit.
    func finish(commitError: (any Error)?)
}

/// Used only on the writer thread once submitted.
private final class Job<T: Sendable>: WriterJob {
    let work: @Sendable (Database) throws -> T
    let completion: @Sendable (Result<T, any Error>) -> Void
    var result: Result<T, any Error>?

    init(work: @escaping @Sendable (Database) throws -> T,
         completion: @escaping @Sendable (Result<T, any Error>) -> Void) {
        self.work = work
        self.completion = completion
    }

    func run(_ db: Database) {
        // Raw savepoint statements, prepared once per connection: GRDB's `inSavepoint` compiles its two
        // statements on every call, which cost more than a small job itself.
        do {
            try db.cachedStatement(sql: "SAVEPOINT job").execute()
        } catch {
            result = .failure(error)
            return
        }
        do {
            let value = try work(db)
            try db.cachedStatement(sql: "RELEASE SAVEPOINT job").execute()
            result = .success(value)
        } catch {
            // Undo this job only. If SQLite already rolled the whole transaction back, the savepoint is gone
            // and the batch loop notices.
            if db.isInsideTransaction {
                try? db.cachedStatement(sql: "ROLLBACK TO SAVEPOINT job").execute()
                try? db.cachedStatement(sql: "RELEASE SAVEPOINT job").execute()
            }
            result = .failure(error)
        }
    }

    var succeeded: Bool {
        if case .success = result { return true }
        return false
    }

    func finish(commitError: (any Error)?) {
        if let commitError {
            completion(.failure(commitError))
        } else {
            completion(result ?? .failure(StoreWriterError.transactionAborted))
        }
    }
}
