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
}
