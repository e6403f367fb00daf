/// Sign in with Apple and Google (issue 30 item 11): which user a provider's subject (`sub`) is. One row per
/// (provider, subject), unique; a user may have one link per provider and several providers. Erasing the user
/// removes their links (`AccountStore.erase`); the export lists them (`identityLinks`).
extension AccountStore {
    /// How a verified identity found its user.
    public enum IdentityOutcome: String, Sendable, Equatable {
        /// The (provider, subject) was linked already.
        case linked
        /// Linked now to the existing account with the provider's verified email.
        case linkedByEmail = "linked_by_email"
        /// A new account, linked.
        case created
    }

    /// A refusal of `signIn(identity…)` that is not a store failure.
    public enum IdentityRefusal: Error, Sendable, Equatable {
        /// The verified email is an admin's: admins sign in with their password only (a provider account is never
        /// joined to an admin account by email).
        case adminAccount
    }

    /// Finds or makes the user of a verified identity, in one write (so two first sign-ins of one person at once
    /// make one account):
    /// 1. the (provider, subject) link's user;
    /// 2. else, with a provider-verified `verifiedEmail`, the account with that email, linked now (an admin's is
    ///    refused: `IdentityRefusal.adminAccount`);
    /// 3. else a new account of `role` (client or coach, as at sign-up; email only when verified; no password; the
    ///    name if the provider or the app gave one), linked.
    /// An unverified email never joins an existing account and is not stored.
    public func signIn(provider: String, subject: String, verifiedEmail: String?, fullName: String?, language: String,
                       timeZone: String = "UTC", role: String = "client", newUserID: String, now: Int64) throws -> (UserRecord, IdentityOutcome) {
        try write({ db in
            if let linked: String = try db.fetchValue(
                "SELECT userId FROM identityLink WHERE provider = ? AND subject = ?", [provider, subject]) {
                if let row = try db.fetchOne(#"SELECT * FROM "user" WHERE id = ?"#, [linked]) {
                    let user = UserRecord(row: row)
                    if user.erasedAt == nil { return (user, .linked) }
                }
                // An erased (or missing) user's link is left over from before erasure removed links: it goes.
                try db.execute("DELETE FROM identityLink WHERE provider = ? AND subject = ?", [provider, subject])
            }
            if let verifiedEmail, let row = try db.fetchOne(#"SELECT * FROM "user" WHERE email = ?"#, [verifiedEmail]) {
                let user = UserRecord(row: row)
                if user.role == "admin" { throw IdentityRefusal.adminAccount }
                try db.execute("INSERT INTO identityLink (provider, subject, userId, linkedAt) VALUES (?, ?, ?, ?)",
                               [provider, subject, user.id, now])
                return (user, .linkedByEmail)
            }
            try db.execute("""
                INSERT INTO "user" (id, role, fullName, email, phone, passwordHash, createdAt, language, timeZone)
                VALUES (?, ?, ?, ?, NULL, NULL, ?, ?, ?)
                """, [newUserID, role, fullName, verifiedEmail, now, language, timeZone])
            if role == "coach" { try db.execute("INSERT INTO coach (userId) VALUES (?)", [newUserID]) }
            try db.execute("INSERT INTO identityLink (provider, subject, userId, linkedAt) VALUES (?, ?, ?, ?)",
                           [provider, subject, newUserID, now])
            guard let row = try db.fetchOne(#"SELECT * FROM "user" WHERE id = ?"#, [newUserID]) else {
                throw AccountStoreError.notFound
            }
            return (UserRecord(row: row), .created)
        }, users: { [$0.0] })
    }

    /// One provider account linked to the user, as the export shows it.
    public struct IdentityLink: Sendable, Encodable, Equatable {
        public var provider: String
        /// The provider's stable id of the person (`sub`).
        public var subject: String
        public var linkedAt: Int64
        enum CodingKeys: String, CodingKey { case provider, subject, linkedAt = "linked_at" }
    }

    /// The user's provider links, the oldest first.
    public func identityLinks(userID: String) throws -> [IdentityLink] {
        try read { db in
            try db.fetchAll("SELECT * FROM identityLink WHERE userId = ? ORDER BY linkedAt, provider", [userID]).map {
                IdentityLink(provider: $0["provider"], subject: $0["subject"], linkedAt: $0["linkedAt"])
            }
        }
    }

    /// Removes the user's provider links, inside the caller's write (erasure).
    static func removeIdentityLinks(_ db: any SQLDatabase, userID: String) throws {
        try db.execute("DELETE FROM identityLink WHERE userId = ?", [userID])
    }
}
