import Foundation
import GRDB
import SpotterPorts

/// One dedicated thread that owns writes to SQLite: the writer skeleton (`BatchWriter`: queue, thread, group
/// commit, completions after commit) with SQLite's batch. Jobs submitted while a transaction runs are committed
/// together in the next one: durability costs one commit (one WAL fsync with synchronous=FULL) per batch, not per
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
public final class StoreWriter: Sendable {
    private let writer: BatchWriter<SQLiteBatch>
    private let checkpointer: Checkpointer?

    public init(store: Store, maxBatch: Int = 512) {
        // Without a checkpoint connection (it could not open) the writer's automatic checkpoint does the work.
        let checkpointer = store.path.flatMap { try? Checkpointer(path: $0) }
        self.checkpointer = checkpointer
        writer = BatchWriter(name: "spotter.store.writer", maxBatch: maxBatch,
                             committer: SQLiteBatch(store: store, checkpointer: checkpointer),
                             refusedAfterStop: StoreWriterError.stopped, neverRan: StoreWriterError.transactionAborted)
    }

    /// Thread-safe. `work` runs on the writer thread inside the batch transaction; `completion` runs on the
    /// writer thread after the batch committed (or failed). After `stop()`, the completion gets
    /// `StoreWriterError.stopped` at once, on the caller's thread.
    package func submit<T: Sendable>(_ work: @escaping @Sendable (Database) throws -> T,
                                     completion: @escaping @Sendable (Result<T, any Error>) -> Void) {
        writer.submit(work, completion: completion)
    }

    /// Runs `work` in the next batch and waits until that batch committed (`BatchWriter.perform`: never on the
    /// event loop or the writer thread). `afterCommit` runs on the writer thread after the commit, in commit
    /// order, before this returns.
    package func perform<T: Sendable>(_ work: @escaping @Sendable (Database) throws -> T,
                                      afterCommit: (@Sendable (T) -> Void)? = nil) throws -> T {
        try writer.perform(work, afterCommit: afterCommit)
    }

    /// Finishes queued jobs, then stops the thread. Idempotent. Jobs submitted after stop get an error.
    /// Called from the writer thread itself (in a completion), it only asks the thread to stop.
    public func stop() {
        writer.stop()
    }

    /// Batches committed so far (for tests and metrics).
    public var batchesCommitted: Int { writer.totals.batches }

    /// Jobs whose work succeeded in a committed batch.
    public var jobsCommitted: Int { writer.totals.jobs }

    /// Passes of the checkpoint thread so far (0 for an in-memory store).
    public var checkpointPasses: Int { checkpointer?.passCount ?? 0 }
}

/// SQLite's batch: one IMMEDIATE transaction, each job in its own savepoint. Used on the writer thread.
private final class SQLiteBatch: BatchCommitter {
    private let store: Store
    private let checkpointer: Checkpointer?

    init(store: Store, checkpointer: Checkpointer?) {
        self.store = store
        self.checkpointer = checkpointer
    }

    func commit(_ jobs: [WriterJob<Database>]) -> BatchOutcome {
        var ran = jobs.count
        do {
            try store.writer.writeWithoutTransaction { db in
                try db.inTransaction(.immediate) {
                    for (index, job) in jobs.enumerated() {
                        SQLiteBatch.runInSavepoint(job, db)
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
            return BatchOutcome(ran: ran, error: error)
        }
        return BatchOutcome(ran: ran, error: nil)
    }

    func close() {
        checkpointer?.stop()
    }

    /// Runs a job in its own savepoint: a job that throws rolls back only itself.
    private static func runInSavepoint(_ job: WriterJob<Database>, _ db: Database) {
        // Raw savepoint statements, prepared once per connection: GRDB's `inSavepoint` compiles its two
        // statements on every call, which cost more than a small job itself.
        do {
            try db.cachedStatement(sql: "SAVEPOINT job").execute()
        } catch {
            job.fail(error)
            return
        }
        do {
            try job.run(db)
            try db.cachedStatement(sql: "RELEASE SAVEPOINT job").execute()
        } catch {
            // Undo this job only. If SQLite already rolled the whole transaction back, the savepoint is gone
            // and the batch loop notices.
            if db.isInsideTransaction {
                try? db.cachedStatement(sql: "ROLLBACK TO SAVEPOINT job").execute()
                try? db.cachedStatement(sql: "RELEASE SAVEPOINT job").execute()
            }
            job.fail(error)
        }
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
