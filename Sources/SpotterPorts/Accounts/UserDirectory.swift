import Synchronization

/// Every user's profile row in memory, without the password hash: what a connecting socket's hello and the
/// socket's `me` need, answered without the database.
///
/// Loaded once at start; then every account write made through an `AccountStore` that holds the directory puts
/// the row it committed, on the writer thread in commit order. A user created by another process (the admin
/// command) is a miss: `AccountStore.user(id:)` then reads it and keeps it. Safe from any thread.
///
/// Cost: about 550 bytes of RSS per user with an email and a name (100,000 users: +53 MiB, +0.05–0.15 s at
/// start; `LoadTests/run-restart.sh`); users are never evicted (the table has no deletes).
public final class UserDirectory: Sendable {
    private let users: Mutex<[String: UserRecord]>

    public init(_ users: [UserRecord] = []) {
        var byID: [String: UserRecord] = [:]
        byID.reserveCapacity(users.count)
        for user in users { byID[user.id] = user.withoutSecrets }
        self.users = Mutex(byID)
    }

    /// Reads every user through an accounts engine (PostgreSQL's; SQLite's start reads with a cursor: `load(_ store:)` in
    /// SpotterStore).
    public static func load(_ engine: any AccountsEngine) throws -> UserDirectory {
        let rows = try engine.read { db in
            try db.fetchAll("""
                SELECT id, role, fullName, email, phone, language, onboardingCompleted, createdAt, timeZone, tier, avatar, erasedAt FROM "user"
                """)
        }
        var byID: [String: UserRecord] = [:]
        byID.reserveCapacity(rows.count)
        for row in rows {
            byID[row[0]] = UserRecord(id: row[0], role: row[1], fullName: row[2], email: row[3], phone: row[4], passwordHash: nil,
                                      language: row[5], onboardingCompleted: row[6], createdAt: row[7], timeZone: row[8],
                                      tier: row[9], avatar: row[10], erasedAt: row[11])
        }
        return UserDirectory(byID: byID)
    }

    package init(byID: [String: UserRecord]) {
        users = Mutex(byID)
    }

    public func user(id: String) -> UserRecord? {
        users.withLock { $0[id] }
    }

    public var count: Int { users.withLock { $0.count } }

    /// Changes a known user's row in place (cluster mode: a change another process committed and logged, such
    /// as a tier). Nothing happens for a user not in the directory: the next read loads the row as it stands.
    public func update(_ id: String, _ change: (inout UserRecord) -> Void) {
        users.withLock { byID in
            guard var user = byID[id] else { return }
            change(&user)
            byID[id] = user
        }
    }

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
    /// The row as the directory keeps it: the password hash stays in the database, read only by sign-in.
    var withoutSecrets: UserRecord {
        var copy = self
        copy.passwordHash = nil
        return copy
    }
}
