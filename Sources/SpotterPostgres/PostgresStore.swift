import Foundation
import Logging
import SpotterStore

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
