import GRDB
import SpotterPorts

/// The accounts on SQLite: through the store's one writer when there is one (a server), else GRDB's own writer
/// connection (the admin command, store tests).
public struct SQLiteAccounts: AccountsEngine {
    let database: any DatabaseWriter
    let writer: StoreWriter?

    package init(database: any DatabaseWriter, writer: StoreWriter?) {
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

extension AccountStore {
    /// The accounts in this SQLite store: through `writer` when there is one (a server), else GRDB's own writer
    /// connection (the admin command, store tests).
    public init(_ store: Store, writer: StoreWriter? = nil, directory: UserDirectory? = nil) {
        self.init(engine: SQLiteAccounts(database: store.writer, writer: writer), directory: directory)
    }
}

extension UserDirectory {
    /// Reads every user, row by row into the table (no intermediate arrays), without the password hashes.
    public static func load(_ store: Store) throws -> UserDirectory {
        let byID = try store.writer.read { db -> [String: UserRecord] in
            let count = try Int.fetchOne(db, sql: #"SELECT COUNT(*) FROM "user""#) ?? 0
            var byID: [String: UserRecord] = [:]
            byID.reserveCapacity(count)
            let rows = try Row.fetchCursor(db, sql: """
                SELECT id, role, fullName, email, phone, language, onboardingCompleted, createdAt, timeZone, tier, avatar, erasedAt FROM "user"
                """)
            while let row = try rows.next() {
                let user = UserRecord(id: row[0], role: row[1], fullName: row[2], email: row[3], phone: row[4],
                                      passwordHash: nil, language: row[5], onboardingCompleted: row[6], createdAt: row[7],
                                      timeZone: row[8], tier: row[9], avatar: row[10], erasedAt: row[11])
                byID[user.id] = user
            }
            return byID
        }
        return UserDirectory(byID: byID)
    }
}
