/// The parts of a profile that are more than a column update: an email change that waits for a code sent to the
/// new address, and the avatar.
extension AccountStore {
    /// An email change waiting for its code: the new (normalized) address and the code's state, as `OTPChallenge`
    /// keeps it.
    public struct EmailChange: Sendable, Equatable {
        public var email: String
        public var codeDigest: String
        public var issuedAt: Int64
        public var failedAttempts: Int
        public init(email: String, codeDigest: String, issuedAt: Int64, failedAttempts: Int) {
            self.email = email
            self.codeDigest = codeDigest
            self.issuedAt = issuedAt
            self.failedAttempts = failedAttempts
        }
    }

    /// The user's pending email change, if any.
    public func emailChange(userID: String) throws -> EmailChange? {
        try read { db in
            try db.fetchOne("SELECT * FROM emailChange WHERE userId = ?", [userID]).map {
                EmailChange(email: $0["email"], codeDigest: $0["codeDigest"], issuedAt: $0["issuedAt"],
                            failedAttempts: $0["failedAttempts"])
            }
        }
    }

    /// Starts (or replaces) the user's email change. `.emailTaken` when another user has that address already.
    public func saveEmailChange(userID: String, _ change: EmailChange) throws {
        try write { db in
            if try db.fetchOne(#"SELECT 1 FROM "user" WHERE email = ? AND id != ?"#,
                                [change.email, userID]) != nil {
                throw AccountStoreError.emailTaken
            }
            try db.execute("""
                INSERT INTO emailChange (userId, email, codeDigest, issuedAt, failedAttempts) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT(userId) DO UPDATE SET email = excluded.email, codeDigest = excluded.codeDigest,
                    issuedAt = excluded.issuedAt, failedAttempts = excluded.failedAttempts
                """, [userID, change.email, change.codeDigest, change.issuedAt, change.failedAttempts])
        }
    }

    /// Counts a wrong code against the pending change.
    public func countEmailChangeFailure(userID: String, failedAttempts: Int) throws {
        try write { db in
            try db.execute("UPDATE emailChange SET failedAttempts = ? WHERE userId = ?", [failedAttempts, userID])
        }
    }

    /// Forgets the pending change (expired, or a code that could not be sent).
    public func deleteEmailChange(userID: String) throws {
        try write { db in
            try db.execute("DELETE FROM emailChange WHERE userId = ?", [userID])
        }
    }

    /// Makes the pending address the user's, in one transaction that also ends the change. `.emailTaken` if
    /// another user took the address meanwhile (the change stays, so the user sees why); `.notFound` without a
    /// pending change.
    @discardableResult
    public func confirmEmailChange(userID: String) throws -> UserRecord {
        try write({ db -> UserRecord in
            guard let email: String = try db.fetchValue("SELECT email FROM emailChange WHERE userId = ?", [userID])
            else { throw AccountStoreError.notFound }
            if try db.fetchOne(#"SELECT 1 FROM "user" WHERE email = ? AND id != ?"#, [email, userID]) != nil {
                throw AccountStoreError.emailTaken
            }
            try db.execute(#"UPDATE "user" SET email = ? WHERE id = ?"#, [email, userID])
            try db.execute("DELETE FROM emailChange WHERE userId = ?", [userID])
            guard let user = try Self.user(db, id: userID) else { throw AccountStoreError.notFound }
            return user
        }, users: { [$0] })
    }

    /// Sets (or, with nil, removes) the user's avatar: the SHA-256 of an image the attachment store keeps.
    @discardableResult
    public func setAvatar(userID: String, _ avatar: String?) throws -> UserRecord {
        try write({ db -> UserRecord in
            try db.execute(#"UPDATE "user" SET avatar = ? WHERE id = ?"#, [avatar, userID])
            guard let user = try Self.user(db, id: userID) else { throw AccountStoreError.notFound }
            return user
        }, users: { [$0] })
    }
}
