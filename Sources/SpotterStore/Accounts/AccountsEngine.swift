import GRDB

/// Where the accounts' SQL runs. Writes are transactions (in a server, a savepoint in the one writer's group
/// commit); `afterCommit` runs once the write is durable, in commit order, before `write` returns. Blocking: never
/// call it from the event loop.
public protocol AccountsEngine: Sendable {
    func write<T: Sendable>(_ work: @escaping @Sendable (any SQLDatabase) throws -> T,
                            afterCommit: @escaping @Sendable (T) -> Void) throws -> T
    func read<T>(_ work: (any SQLDatabase) throws -> T) throws -> T
}

/// The accounts on SQLite: through the store's one writer when there is one (a server), else GRDB's own writer
/// connection (the admin command, store tests).
public struct SQLiteAccounts: AccountsEngine {
    let database: any DatabaseWriter
    let writer: StoreWriter?

    public init(database: any DatabaseWriter, writer: StoreWriter?) {
        self.database = database
        self.writer = writer
    }

    public func write<T: Sendable>(_ work: @escaping @Sendable (any SQLDatabase) throws -> T,
                                   afterCommit: @escaping @Sendable (T) -> Void) throws -> T {
        guard let writer else {
            let value = try database.write { db in try work(GRDBSQLDatabase(db)) }
            afterCommit(value)
            return value
        }
        return try writer.perform({ db in try work(GRDBSQLDatabase(db)) }, afterCommit: afterCommit)
    }

    public func read<T>(_ work: (any SQLDatabase) throws -> T) throws -> T {
        try database.read { db in try work(GRDBSQLDatabase(db)) }
    }
}
