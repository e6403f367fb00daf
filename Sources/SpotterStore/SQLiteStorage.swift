import SpotterPorts

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
    public func purgeDisk() throws -> DiskPurge { DiskPurge(walTruncated: store.truncateWAL(), vacuumed: []) }
}
