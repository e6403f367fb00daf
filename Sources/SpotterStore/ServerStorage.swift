import GRDB

/// The log and the changes that write the accounts and the log in one transaction: what the messaging shell
/// needs of wherever the chat lives. `ChatLog` (SQLite) and `PostgresChatLog` implement it.
public protocol ChatStore: ChatLogEngine, ConsumableLog {
    /// A client picks their first coach: the link, the thread if the pair has none, and a `link` record, in one
    /// transaction. Throws `AccountStoreError` as `AccountStore.createLink` does.
    func createLink(clientID: String, coachID: String, threadID: String, now: Int64,
                    completion: @escaping @Sendable (Result<LinkOutcome<LinkRecord>, any Error>) -> Void)
    /// An admin decides a coach change; approved, every thread between the client and the old or the new coach
    /// gets a `link` record.
    func decideChange(requestID: String, approve: Bool, adminID: String, threadID: String, now: Int64,
                      completion: @escaping @Sendable (Result<LinkOutcome<ChangeRequestRecord>, any Error>) -> Void)
    /// Records when the user was last seen (unix seconds), in the background.
    func setLastSeen(userID: String, at: Int64)
    /// Blocking reads (never on the loop).
    func lastSeen(userIDs: [String]) throws -> [String: Int64]
    func threads(ids: [String]) throws -> (threads: [ThreadRow], names: [String: String])
}

extension ChatLog: ChatStore {}

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

/// One process's storage: the SQLite database in the data directory (or in memory) and its one writer thread.
public final class SQLiteStorage: ServerStorage {
    public let store: Store
    public let writer: StoreWriter
    private let log: ChatLog
    public let filesDirectory: String?

    /// `filesDirectory`: where attachments go (the server passes its data directory's `attachments`).
    public init(store: Store, filesDirectory: String?) {
        self.store = store
        writer = StoreWriter(store: store)
        log = ChatLog(store: store, writer: writer)
        self.filesDirectory = store.path == nil ? nil : filesDirectory
    }

    public var chat: any ChatStore { log }
    public var accounts: any AccountsEngine { SQLiteAccounts(database: store.writer, writer: writer) }
    public var runNumber: Int64? { store.runNumber }
    public func loadUsers() throws -> UserDirectory { try UserDirectory.load(store) }
    public var writerTotals: (batches: Int, jobs: Int, checkpointPasses: Int) {
        (writer.batchesCommitted, writer.jobsCommitted, writer.checkpointPasses)
    }
    public func stop() { writer.stop() }
}
