import GRDB
import Synchronization

/// Every user's profile row in memory, without the password hash: what a connecting socket's hello and the
/// socket's `me` need, answered without SQLite.
///
/// Loaded once at start; then every account write made through an `AccountStore` that holds the directory puts
/// the row it committed, on the writer thread in commit order. A user created by another process (the admin
/// command) is a miss: `AccountStore.user(id:)` then reads it and keeps it. Safe from any thread.
///
/// Cost: about 250 bytes per user with an email and a name (a 100,000-user database holds ~25 MB); users are
/// never evicted (the table has no deletes).
public final class UserDirectory: Sendable {
    private let users: Mutex<[String: UserRecord]>

    public init(_ users: [UserRecord] = []) {
        var byID: [String: UserRecord] = [:]
        byID.reserveCapacity(users.count)
        for user in users { byID[user.id] = user.withoutSecrets }
        self.users = Mutex(byID)
    }

    /// Reads every user.
    public static func load(_ store: Store) throws -> UserDirectory {
        let users = try store.writer.read { db in
            try Row.fetchAll(db, sql: #"SELECT * FROM "user""#).map(UserRecord.init(row:))
        }
        return UserDirectory(users)
    }

    public func user(id: String) -> UserRecord? {
        users.withLock { $0[id] }
    }

    public var count: Int { users.withLock { $0.count } }

    func put(_ user: UserRecord) {
        let kept = user.withoutSecrets
        users.withLock { $0[kept.id] = kept }
    }

    func put(_ users: [UserRecord]) {
        let kept = users.map(\.withoutSecrets)
        self.users.withLock { byID in
            for user in kept { byID[user.id] = user }
        }
    }
}

extension UserRecord {
    /// The row as the directory keeps it: the password hash stays in SQLite, read only by sign-in.
    var withoutSecrets: UserRecord {
        var copy = self
        copy.passwordHash = nil
        return copy
    }
}
