import Foundation
import Logging
import SpotterPorts

/// What one writer batch's jobs share: the connection, inside the batch transaction, and the next log position.
///
/// Every batch transaction first takes one transaction-scoped advisory lock (`appendLock`), so batches of every
/// process that writes to this database commit one after another: a position is given out only after every
/// smaller one was committed or rolled back, and a reader that saw position N has seen everything below it. That
/// is what makes `records(after:)` (resume) gapless with several writing processes, at the cost of one lock per
/// batch, not per record (group commit amortises it).
final class PGBatch {
    let connection: PGConnection
    private var next: Int64

    /// `next`: the position after every one in the log, read under the batch's lock.
    init(connection: PGConnection, next: Int64) {
        self.connection = connection
        self.next = next
    }

    /// Positions for `count` new records, in order, after every position already in the log.
    func takePositions(_ count: Int) throws -> ClosedRange<Int64>? {
        guard count > 0 else { return nil }
        let first = next
        next = first + Int64(count)
        return first...(first + Int64(count) - 1)
    }

    /// Forgets positions taken by a job that rolled back (they were not written).
    func rewind(to saved: Int64) { next = saved }
    var savedPosition: Int64 { next }
}

/// One thread that owns writes to PostgreSQL, as `StoreWriter` does for SQLite: the writer skeleton
/// (`BatchWriter`: jobs submitted while a batch transaction runs are committed together in the next one, and
/// completions run on the writer thread, in submission order, only after the batch COMMITTED) with PostgreSQL's
/// batch: each job in its own savepoint (a job that throws rolls back only itself). If the connection is lost,
/// every job of the batch fails with a connection error (the outcome of a COMMIT in flight is unknown: the caller
/// must not acknowledge it, and a retry must be idempotent); the next batch reconnects.
public final class PostgresWriter: Sendable {
    /// Taken by every batch transaction (pg_advisory_xact_lock): batches of all processes commit in turn.
    static let appendLock: Int64 = 0x5370_6f74_7465_72  // "Spotter"

    private let writer: BatchWriter<PostgresBatchCommitter>

    /// Connects at once (a bad URL or an unreachable server throws here, at start, not at the first write).
    public init(url: String, maxBatch: Int = 512, logger: Logger = Logger(label: "spotter.postgres")) throws {
        let committer = PostgresBatchCommitter(connection: try PGConnection(url: url), url: url, logger: logger)
        writer = BatchWriter(name: "spotter.postgres.writer", maxBatch: maxBatch, committer: committer,
                             refusedAfterStop: PostgresError(sqlState: nil, message: "the writer is stopped"),
                             neverRan: PostgresError(sqlState: nil, message: "the job did not run"))
    }

    /// Thread-safe. `work` runs on the writer thread inside the batch transaction.
    func submit<T: Sendable>(_ work: @escaping (PGBatch) throws -> T,
                             completion: @escaping @Sendable (Result<T, any Error>) -> Void) {
        writer.submit(work, completion: completion)
    }

    /// Runs `work` in the next batch and waits until that batch committed (the blocking form of `submit`, for a
    /// request's worker thread; never the event loop or the writer thread). `afterCommit` runs on the writer
    /// thread after the commit, in commit order, before this returns.
    func perform<T: Sendable>(_ work: @escaping (PGBatch) throws -> T, afterCommit: @escaping @Sendable (T) -> Void) throws -> T {
        try writer.perform(work, afterCommit: afterCommit)
    }

    /// Batches committed and the jobs whose work succeeded in them, so far (metrics).
    var totals: (batches: Int, jobs: Int) { writer.totals }

    /// Finishes queued jobs, then stops the thread and closes the connection. Idempotent.
    public func stop() {
        writer.stop()
    }
}

/// PostgreSQL's batch: one transaction under the append lock, each job in its own savepoint, on the writer's
/// connection (reopened after it broke). Used on the writer thread.
private final class PostgresBatchCommitter: BatchCommitter {
    private var connection: PGConnection?
    private let url: String
    private let logger: Logger

    init(connection: PGConnection, url: String, logger: Logger) {
        self.connection = connection
        self.url = url
        self.logger = logger
    }

    func commit(_ jobs: [WriterJob<PGBatch>]) -> BatchOutcome {
        do {
            try commit(jobs, on: try usableConnection())
            return BatchOutcome(ran: jobs.count, error: nil)
        } catch {
            if let connection, !connection.isBroken { _ = try? connection.exec("ROLLBACK") }
            logger.error("postgres batch did not commit", metadata: ["error": "\(error)", "jobs": "\(jobs.count)"])
            return BatchOutcome(ran: jobs.count, error: error)
        }
    }

    func close() {
        connection = nil
    }

    /// One transaction for the batch, in as few round trips as the protocol allows (each costs both processes
    /// a wake-up, which at small batches cost more than the rows): BEGIN, the lock and the next position in one;
    /// a job's savepoint released and the next one taken in one; none at all for a batch of one job, whose
    /// failure is the transaction's.
    private func commit(_ jobs: [WriterJob<PGBatch>], on connection: PGConnection) throws {
        let isolated = jobs.count > 1
        let start = try connection.execSimple("""
            BEGIN; SELECT pg_advisory_xact_lock(\(PostgresWriter.appendLock)); \(isolated ? "SAVEPOINT job;" : "")
            SELECT COALESCE(MAX(pos), 0) FROM log
            """)
        let context = PGBatch(connection: connection, next: (Int64(start.scalar ?? "0") ?? 0) + 1)
        for (index, job) in jobs.enumerated() {
            if isolated && index > 0 { try connection.execSimple("RELEASE SAVEPOINT job; SAVEPOINT job") }
            let saved = context.savedPosition
            try? job.run(context)  // a job's error is its own: kept for its completion
            guard !job.succeeded, isolated else { continue }
            context.rewind(to: saved)
            if !connection.isBroken { _ = try? connection.execSimple("ROLLBACK TO SAVEPOINT job") }
        }
        // A lone job that failed keeps nothing: its error may be a Swift one after some writes, which left the
        // transaction open rather than aborted, so a COMMIT would keep them. Its error is its own.
        if !isolated, let job = jobs.first, !job.succeeded {
            if !connection.isBroken { try connection.execSimple("ROLLBACK") }
            return
        }
        try connection.execSimple("COMMIT")
    }

    /// The connection, reopened if the last one broke (PostgreSQL restarted): the first batch after an outage
    /// reconnects; until the server is back each batch fails at once.
    private func usableConnection() throws -> PGConnection {
        if let connection, !connection.isBroken { return connection }
        connection = nil
        let fresh = try PGConnection(url: url)
        connection = fresh
        logger.notice("postgres writer reconnected")
        return fresh
    }
}

/// A few connections for reads that need not be ordered with appends (history, resume, load), each used by one
/// thread at a time. Blocking: never from the event loop.
final class PGReaderPool: @unchecked Sendable {
    private let url: String
    private let lock = NSLock()
    private var idle: [PGConnection] = []
    private let maxIdle: Int

    init(url: String, maxIdle: Int = 4) {
        self.url = url
        self.maxIdle = maxIdle
    }

    func read<T>(_ body: (PGConnection) throws -> T) throws -> T {
        lock.lock()
        let reused = idle.popLast()
        lock.unlock()
        let connection = try reused.flatMap { $0.isBroken ? nil : $0 } ?? PGConnection(url: url)
        let value = try body(connection)
        if !connection.isBroken {
            lock.lock()
            if idle.count < maxIdle { idle.append(connection) }
            lock.unlock()
        }
        return value
    }
}
