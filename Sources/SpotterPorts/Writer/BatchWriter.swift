import Foundation

/// What an engine does with one batch of a `BatchWriter`, on the writer thread: the one part of the writer that
/// knows the database. SQLite's (`StoreWriter`) and PostgreSQL's (`PostgresWriter`) writers are this skeleton
/// with their own committer.
public protocol BatchCommitter: AnyObject, SendableMetatype {
    /// What a job's work gets: the connection inside the batch's transaction (and whatever else the engine shares
    /// between a batch's jobs).
    associatedtype Context

    /// Runs `jobs` in order in one transaction, each rolled back alone when it fails (`WriterJob.run` throws, or
    /// the committer calls `fail`), and commits. The outcome says how many jobs ran (the ones after are queued
    /// again, ahead of everything else) and whether the transaction committed.
    func commit(_ jobs: [WriterJob<Context>]) -> BatchOutcome

    /// The writer thread ends (stopped, its queue drained): let go of what the engine holds there.
    func close()
}

/// How a batch ended.
public struct BatchOutcome: Sendable {
    /// How many of the batch's jobs ran, from the first; the others were not touched and run in a later batch
    /// (a transaction the database aborted on its own must not run the rest outside it).
    public var ran: Int
    /// Why the transaction did not commit; nil if it did. Every job that ran then gets this error.
    public var error: (any Error)?

    public init(ran: Int, error: (any Error)?) {
        self.ran = ran
        self.error = error
    }
}

/// One dedicated thread that owns an engine's writes. Jobs submitted while a transaction runs are committed
/// together in the next one (group commit): durability costs one commit per batch, not per job.
///
/// Completions are called on the writer thread, in submission order, only after the batch transaction committed
/// (never before: acknowledge after commit), with the job's own result; a job that threw gets its error while the
/// rest of its batch commits. If the batch does not commit, every job that ran gets that error.
///
/// Call `stop()` before dropping the writer: the thread keeps the writer alive until then.
public final class BatchWriter<Committer: BatchCommitter>: @unchecked Sendable {
    public typealias Context = Committer.Context

    // Everything below `condition` is guarded by it.
    private let condition = NSCondition()
    private var queue: [WriterJob<Context>] = []
    private var stopping = false
    private var stopped = false
    private var batches = 0
    private var jobs = 0
    private var thread: Thread?

    /// Used on the writer thread only (once started).
    private let committer: Committer
    private let name: String
    private let maxBatch: Int
    private let refusedAfterStop: any Error
    private let neverRan: any Error

    /// Starts the writer thread, named `name`. `refusedAfterStop`: what a job submitted after `stop()` gets;
    /// `neverRan`: what a job of a committed batch gets if its work never ran (a committer's mistake).
    public init(name: String, maxBatch: Int, committer: Committer, refusedAfterStop: any Error, neverRan: any Error) {
        self.committer = committer
        self.name = name
        self.maxBatch = max(maxBatch, 1)
        self.refusedAfterStop = refusedAfterStop
        self.neverRan = neverRan
        let thread = Thread { [self] in run() }
        thread.name = name
        self.thread = thread
        thread.start()
    }

    /// Thread-safe. `work` runs on the writer thread inside the batch transaction; `completion` runs on the
    /// writer thread after the batch committed (or failed). After `stop()`, the completion gets `refusedAfterStop`
    /// at once, on the caller's thread.
    public func submit<T: Sendable>(_ work: @escaping (Context) throws -> T,
                                    completion: @escaping @Sendable (Result<T, any Error>) -> Void) {
        condition.lock()
        guard !stopping else {
            condition.unlock()
            completion(.failure(refusedAfterStop))
            return
        }
        queue.append(TypedJob(work: work, completion: completion))
        condition.signal()
        condition.unlock()
    }

    /// Runs `work` in the next batch and waits until that batch committed: the blocking form of `submit`, for
    /// callers on a thread that may wait (a request's worker thread; never the event loop, never the writer
    /// thread itself). `afterCommit` runs on the writer thread after the commit, in commit order, before this
    /// returns: caches of committed rows update there, so two writers cannot apply their changes out of order.
    public func perform<T: Sendable>(_ work: @escaping (Context) throws -> T,
                                     afterCommit: (@Sendable (T) -> Void)? = nil) throws -> T {
        precondition(!isWriterThread, "\(name): perform on the writer thread would wait for itself")
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

    /// Finishes queued jobs, then stops the thread and returns once the committer has closed. Idempotent. Jobs
    /// submitted after stop get `refusedAfterStop`. Called from the writer thread itself (in a completion), it only
    /// asks the thread to stop.
    public func stop() {
        condition.lock()
        defer { condition.unlock() }
        stopping = true
        condition.broadcast()
        if let thread, Thread.current === thread { return }
        while !stopped { condition.wait() }
    }

    /// Batches committed so far, and the jobs whose work succeeded in them (tests and metrics).
    public var totals: (batches: Int, jobs: Int) {
        condition.lock()
        defer { condition.unlock() }
        return (batches, jobs)
    }

    // MARK: The writer thread

    private func run() {
        while let batch = nextBatch() {
            let outcome = committer.commit(batch)
            let ran = min(max(outcome.ran, 0), batch.count)
            let completed = batch[..<ran]
            condition.lock()
            if ran < batch.count { queue.insert(contentsOf: batch[ran...], at: 0) }
            if outcome.error == nil {
                batches += 1
                jobs += completed.filter(\.succeeded).count
            }
            condition.unlock()
            for job in completed { job.finish(batchError: outcome.error, neverRan: neverRan) }
        }
        // Closed before `stop()` returns: whoever stopped the writer may remove what the engine holds next.
        committer.close()
        condition.lock()
        stopped = true
        thread = nil  // the thread's closure holds the writer: break the cycle as it ends
        condition.broadcast()
        condition.unlock()
    }

    /// Waits for jobs; nil once stopping and the queue is drained (nothing more can be queued then).
    private func nextBatch() -> [WriterJob<Context>]? {
        condition.lock()
        defer { condition.unlock() }
        while queue.isEmpty && !stopping { condition.wait() }
        if queue.isEmpty { return nil }
        let count = min(queue.count, maxBatch)
        let batch = Array(queue[..<count])
        queue.removeFirst(count)
        return batch
    }
}

/// A job as a committer sees it: run it once inside the batch's transaction; the writer completes it after the
/// batch. Used on the writer thread only once submitted.
public class WriterJob<Context> {
    /// What failed: the work's error, or the committer's around it. Nil while nothing did.
    fileprivate var failure: (any Error)?
    fileprivate var ran = false

    fileprivate init() {}

    /// Runs the work and keeps its value for the completion; what the work throws is kept and thrown again (the
    /// committer rolls the job back).
    public final func run(_ context: Context) throws {
        ran = true
        do {
            try perform(context)
        } catch {
            failure = error
            throw error
        }
    }

    /// Fails the job for what went wrong around its work (its savepoint could not be taken or released): the
    /// completion gets `error`, whatever the work returned.
    public final func fail(_ error: any Error) {
        ran = true
        failure = error
    }

    /// Whether the job ran and nothing failed.
    public final var succeeded: Bool { ran && failure == nil }

    fileprivate func perform(_ context: Context) throws {}
    fileprivate func finish(batchError: (any Error)?, neverRan: any Error) {}
}

private final class TypedJob<Context, T: Sendable>: WriterJob<Context> {
    let work: (Context) throws -> T
    let completion: @Sendable (Result<T, any Error>) -> Void
    var value: T?

    init(work: @escaping (Context) throws -> T, completion: @escaping @Sendable (Result<T, any Error>) -> Void) {
        self.work = work
        self.completion = completion
    }

    override func perform(_ context: Context) throws {
        value = try work(context)
    }

    override func finish(batchError: (any Error)?, neverRan: any Error) {
        if let batchError {
            completion(.failure(batchError))
        } else if let failure {
            completion(.failure(failure))
        } else if let value {
            completion(.success(value))
        } else {
            completion(.failure(neverRan))
        }
    }
}

/// One result handed from the writer thread to a caller waiting in `BatchWriter.perform`.
private final class ResultWaiter<T: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    private var result: Result<T, any Error>?

    func finish(_ result: Result<T, any Error>) {
        condition.lock()
        self.result = result
        condition.signal()
        condition.unlock()
    }

    func wait() -> Result<T, any Error> {
        condition.lock()
        defer { condition.unlock() }
        while result == nil { condition.wait() }
        return result!
    }
}
