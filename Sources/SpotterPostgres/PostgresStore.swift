import Foundation
import Logging
import SpotterPorts

/// Spotter's PostgreSQL database: the schema (migrated on open), the one writer thread every change goes through
/// (accounts and log alike, so a link change and its `link` record are one transaction, and all of them share
/// the group commit), and a few reader connections. What SQLite's `Store` + `StoreWriter` are for one process.
public final class PostgresStore: Sendable {
    public let url: String
    let writer: PostgresWriter
    let readers: PGReaderPool

    /// Connects, applies missing migrations and starts the writer. Throws `PostgresError` when the server cannot
    /// be reached or refuses the schema.
    public init(url: String, logger: Logger = Logger(label: "spotter.postgres")) throws {
        self.url = url
        try PostgresSchema.migrate(PGConnection(url: url))
        writer = try PostgresWriter(url: url, logger: logger)
        readers = PGReaderPool(url: url)
    }

    /// Finishes queued writes and closes the writer's connection.
    public func close() {
        writer.stop()
    }
}

/// The accounts on PostgreSQL (`AccountStore(engine:)`): writes are jobs of the store's one writer, each in its
/// own savepoint of a group-committed batch; reads use the reader connections.
public struct PostgresAccounts: AccountsEngine {
    let store: PostgresStore

    public init(store: PostgresStore) {
        self.store = store
    }

    public func write<T: Sendable>(_ work: @escaping @Sendable (any SQLDatabase) throws -> T,
                                   afterCommit: @escaping @Sendable (T) -> Void) throws -> T {
        try store.writer.perform({ batch in try work(PGSQLDatabase(batch.connection)) }, afterCommit: afterCommit)
    }

    public func read<T>(_ work: (any SQLDatabase) throws -> T) throws -> T {
        try store.readers.read { connection in try work(PGSQLDatabase(connection)) }
    }
}

/// A server's storage on PostgreSQL (`spotter serve --store postgres://…`): the chat and the accounts in one
/// database through one writer, attachment files in `filesDirectory` (a folder every process can read: one
/// machine, or shared storage).
public final class PostgresStorage: ServerStorage {
    public let store: PostgresStore
    private let log: PostgresChatLog
    public let filesDirectory: String?
    public let runNumber: Int64?
    /// The rate-limit counters every process on this database shares.
    public let rateLimits: (any RateLimitCounters)?

    /// Records this start in `serverRun` (its id is the run number `/healthz` shows).
    public init(store: PostgresStore, filesDirectory: String?, version: String, startedAt: Int64) throws {
        self.store = store
        log = PostgresChatLog(store: store)
        self.filesDirectory = filesDirectory
        rateLimits = PostgresRateLimits(url: store.url)
        // A write like any other: through the one writer, not a reader connection.
        runNumber = try store.writer.perform({ batch in
            Int64(try batch.connection.exec("INSERT INTO serverRun (version, startedAt) VALUES ($1, $2) RETURNING id",
                                            [version, String(startedAt)]).scalar ?? "")
        }, afterCommit: { _ in })
    }

    public var chat: any ChatStore { log }
    /// The log as a process of a cluster follows it.
    public var followableLog: any FollowableLog { log }
    public var accounts: any AccountsEngine { PostgresAccounts(store: store) }
    public func loadUsers() throws -> UserDirectory { try UserDirectory.load(accounts) }
    public var writerTotals: (batches: Int, jobs: Int, checkpointPasses: Int) {
        let totals = store.writer.totals
        return (totals.batches, totals.jobs, 0)
    }
    public func stop() { store.close() }

    /// The tables whose rows a delete or an erasure rewrites or removes (`MessageForgetting`, the erasure).
    static let purgedTables = ["log", "thread", "attachment", "pushOutbox", "\"user\"", "clientProfile", "weightEntry",
                               "otpChallenge", "rating", "emailChange", "device", "notificationPreference", "threadMute", "refreshToken",
                               "coachChangeRequest", "sessionFeedback"]

    public func purgeDisk() throws -> DiskPurge {
        // VACUUM cannot run in a transaction: a connection of its own, outside the writer's batches.
        let connection = try PGConnection(url: store.url)
        var vacuumed: [String] = []
        for table in Self.purgedTables {
            let exists = try connection.exec("SELECT to_regclass($1) IS NOT NULL", [table]).scalar == "t"
            guard exists else { continue }
            _ = try connection.exec("VACUUM \(table)")
            vacuumed.append(table)
        }
        return DiskPurge(walTruncated: false, vacuumed: vacuumed)
    }
}
