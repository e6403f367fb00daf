/// Everything a server keeps: the chat, the accounts, where files go, and the one writer they share. SQLite
/// (`SQLiteStorage`) for one process; PostgreSQL (`PostgresStorage` in SpotterPostgres) for several.
public protocol ServerStorage: Sendable {
    var chat: any ChatStore { get }
    /// The accounts' engine, writing through the same writer as the chat.
    var accounts: any AccountsEngine { get }
    /// Where attachment files go; nil keeps them in a temporary folder (a database in memory, in tests).
    var filesDirectory: String? { get }
    /// How many times a server has started on this store, this start included (nil if not recorded).
    var runNumber: Int64? { get }
    /// Every user, for the in-memory directory.
    func loadUsers() throws -> UserDirectory
    /// The writer's batches and jobs committed so far, and the checkpoint thread's passes (metrics).
    var writerTotals: (batches: Int, jobs: Int, checkpointPasses: Int) { get }
    /// Commits what is queued and stops the writer.
    func stop()
    /// Makes what statements deleted or overwrote unreadable on disk: SQLite checkpoints its WAL into the database
    /// file and truncates it (deleted content is zeroed in the pages: `secure_delete`); PostgreSQL vacuums the
    /// tables a delete or an erasure changes, so no dead version of a row keeps it. Blocking: never on the loop.
    func purgeDisk() throws -> DiskPurge
    /// Rate-limit counters shared by every process on this store (PostgreSQL); nil keeps them in memory (SQLite).
    var rateLimits: (any RateLimitCounters)? { get }
}

extension ServerStorage {
    public var rateLimits: (any RateLimitCounters)? { nil }
}

/// What a `purgeDisk` did.
public struct DiskPurge: Sendable, Equatable {
    /// SQLite: the WAL was emptied (false: readers kept it from finishing; the next purge tries again).
    public var walTruncated: Bool
    /// PostgreSQL: the tables vacuumed.
    public var vacuumed: [String]

    public init(walTruncated: Bool, vacuumed: [String]) {
        self.walTruncated = walTruncated
        self.vacuumed = vacuumed
    }
}
