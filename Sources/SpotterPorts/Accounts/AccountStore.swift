import SpotterProtocol

/// Accounts, sessions, OTP challenges and onboarding: the accounts' SQL, written once over `SQLDatabase` and run by
/// whichever engine the `AccountsEngine` is (SQLite's `SQLiteAccounts`, PostgreSQL's `PostgresAccounts`).
///
/// Every method is synchronous and may block on the database: call it off the event-loop thread.
/// Each mutating method runs in one transaction, so it either happens entirely or not at all;
/// refusals (`AccountStoreError`) roll back. Only digests of refresh tokens and OTP codes are stored.
///
/// In a server, writes go through the engine's one writer (the thread that appends the chat log), committed in
/// its next group commit, and committed user rows go into the `UserDirectory`. Without a writer (the admin
/// command, store tests) SQLite's engine uses GRDB's own writer connection.
public struct AccountStore: Sendable {
    /// Where the SQL runs: SQLite (`SQLiteAccounts`, SpotterStore) or PostgreSQL (`PostgresAccounts`, SpotterPostgres).
    public let engine: any AccountsEngine
    /// Users in memory, when the store keeps them (a server does).
    public let directory: UserDirectory?

    public init(engine: any AccountsEngine, directory: UserDirectory? = nil) {
        self.engine = engine
        self.directory = directory
    }

    /// Runs a write transaction (a savepoint in the writer's batch), then hands the committed users, if any, to
    /// the directory after the commit, in commit order.
    func write<T: Sendable>(_ work: @escaping @Sendable (any SQLDatabase) throws -> T,
                            users: @escaping @Sendable (T) -> [UserRecord] = { _ in [] }) throws -> T {
        let directory = self.directory
        return try engine.write(work, afterCommit: { value in directory?.put(users(value)) })
    }

    func read<T>(_ work: (any SQLDatabase) throws -> T) throws -> T {
        try engine.read(work)
    }

    // MARK: Users

    /// Creates a user (and its `coach` row when `role == "coach"`). Throws `.emailTaken` / `.phoneTaken`
    /// when another user already has that email or phone (both stored as given: normalize first).
    @discardableResult
    public func createUser(id: String, role: String, fullName: String?, email: String?, phone: String?,
                           passwordHash: String?, language: String = "en", timeZone: String = "UTC",
                           now: Int64) throws -> UserRecord {
        try write({ db in
            if let email, try db.fetchOne(#"SELECT 1 FROM "user" WHERE email = ?"#, [email]) != nil {
                throw AccountStoreError.emailTaken
            }
            if let phone, try db.fetchOne(#"SELECT 1 FROM "user" WHERE phone = ?"#, [phone]) != nil {
                throw AccountStoreError.phoneTaken
            }
            try db.execute("""
                INSERT INTO "user" (id, role, fullName, email, phone, passwordHash, createdAt, language, timeZone)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, [id, role, fullName, email, phone, passwordHash, now, language, timeZone])
            if role == "coach" {
                try db.execute("INSERT INTO coach (userId) VALUES (?)", [id])
            }
            guard let row = try db.fetchOne(#"SELECT * FROM "user" WHERE id = ?"#, [id]) else {
                throw AccountStoreError.notFound
            }
            return UserRecord(row: row)
        }, users: { [$0] })
    }

    /// The user with this id: from the directory when it has them (no database read), else read (and kept).
    public func user(id: String) throws -> UserRecord? {
        if let known = directory?.user(id: id) { return known }
        let found = try fetchUser(column: "id", value: id)
        if let found { directory?.put(found) }
        return found
    }

    /// The user with this id as stored now, read past the directory (which keeps the row read): in a cluster a
    /// change another process committed and the log does not carry (an avatar) is in the row, not yet in memory.
    public func storedUser(id: String) throws -> UserRecord? {
        let found = try fetchUser(column: "id", value: id)
        if let found { directory?.put(found) }
        return found
    }

    /// The user with this (normalized) email.
    public func user(email: String) throws -> UserRecord? {
        try fetchUser(column: "email", value: email)
    }

    /// Replaces the stored password hash (a sign-in re-hashing with stronger parameters).
    public func updatePasswordHash(userID: String, hash: String) throws {
        try write { db in
            try db.execute(#"UPDATE "user" SET passwordHash = ? WHERE id = ?"#, [hash, userID])
        }
    }

    /// The user with this E.164 phone number.
    public func user(phone: String) throws -> UserRecord? {
        try fetchUser(column: "phone", value: phone)
    }

    private func fetchUser(column: String, value: String) throws -> UserRecord? {
        try read { db in try AccountStore.fetchUser(db, column: column, value: value) }
    }

    /// The user with this id, read in the caller's transaction (nil if none).
    public static func user(_ db: any SQLDatabase, id: String) throws -> UserRecord? {
        try fetchUser(db, column: "id", value: id)
    }

    private static func fetchUser(_ db: any SQLDatabase, column: String, value: String) throws -> UserRecord? {
        try db.fetchOne(#"SELECT * FROM "user" WHERE \#(column) = ?"#, [value]).map(UserRecord.init(row:))
    }

    /// Users newest first (then by id), with `role` only if given, `limit` from `offset`; and how many match.
    public func listUsers(role: String?, limit: Int, offset: Int) throws -> (users: [UserRecord], total: Int) {
        try read { db in
            let users = try db.fetchAll(#"""
                SELECT * FROM "user" WHERE CAST(?1 AS TEXT) IS NULL OR role = ?1 ORDER BY createdAt DESC, id LIMIT ?2 OFFSET ?3
                """#, [role, limit, offset]).map(UserRecord.init(row:))
            let total: Int = try db.fetchValue(#"SELECT COUNT(*) FROM "user" WHERE CAST(?1 AS TEXT) IS NULL OR role = ?1"#, [role]) ?? 0
            return (users, total)
        }
    }

    /// Sets the user's preferred language. Throws `.notFound` for an unknown user.
    public func setLanguage(userID: String, _ language: String) throws {
        try updateProfile(userID: userID, language: language, timeZone: nil)
    }

    /// Sets the preferred language, the time zone (an IANA name) and/or the name (both checked by the caller) in
    /// one transaction; returns the user as stored. Throws `.notFound` for an unknown user.
    @discardableResult
    public func updateProfile(userID: String, language: String?, timeZone: String?, fullName: String? = nil) throws -> UserRecord {
        try write({ db -> UserRecord in
            try db.execute(#"""
                UPDATE "user" SET language = COALESCE(?, language), timeZone = COALESCE(?, timeZone),
                                  fullName = COALESCE(?, fullName) WHERE id = ?
                """#, [language, timeZone, fullName, userID])
            if db.changes == 0 { throw AccountStoreError.notFound }
            guard let user = try Self.user(db, id: userID) else { throw AccountStoreError.notFound }
            return user
        }, users: { [$0] })
    }

    /// Sets a client's tier (a wire name, checked by the caller); returns the user as stored. `.notFound` for
    /// an unknown user, `.conflict("not_a_client")` for a coach or an admin.
    @discardableResult
    public func setTier(userID: String, _ tier: String) throws -> UserRecord {
        try write({ db -> UserRecord in
            guard let user = try Self.user(db, id: userID) else { throw AccountStoreError.notFound }
            guard user.role == "client" else { throw AccountStoreError.conflict("not_a_client") }
            try db.execute(#"UPDATE "user" SET tier = ? WHERE id = ?"#, [tier, userID])
            var changed = user
            changed.tier = tier
            return changed
        }, users: { [$0] })
    }

    // MARK: Refresh tokens

    /// Stores a new refresh token (its SHA-256 hex) as the first of a family, or in an existing family.
    public func storeRefreshToken(hash: String, userID: String, familyID: String, now: Int64, expiresAt: Int64) throws {
        try write { db in
            try db.execute("""
                INSERT INTO refreshToken (tokenHash, userId, familyId, createdAt, expiresAt) VALUES (?, ?, ?, ?, ?)
                """, [hash, userID, familyID, now, expiresAt])
        }
    }

    /// Atomically: a valid, unrotated token is marked rotated and `newHash` stored in the same family
    /// (`.rotated`); an already-rotated token (reuse) revokes every token of its family (`.reused`);
    /// an unknown, revoked or expired (`now ≥ expiresAt`) token is `.invalid`. With `ownerID`, a token of any
    /// other user is `.foreign` and changes nothing: a refused request must not burn someone else's token.
    public func rotateRefreshToken(oldHash: String, newHash: String, now: Int64, newExpiresAt: Int64,
                                   ownerID: String? = nil) throws -> RefreshOutcome {
        try write { db in
            guard let row = try db.fetchOne("""
                SELECT userId, familyId, expiresAt, rotatedAt, revokedAt FROM refreshToken WHERE tokenHash = ?
                """, [oldHash]) else { return .invalid }
            let userID: String = row["userId"]
            if let ownerID, ownerID != userID { return .foreign }
            let familyID: String = row["familyId"]
            let expiresAt: Int64 = row["expiresAt"]
            let rotatedAt: Int64? = row["rotatedAt"]
            let revokedAt: Int64? = row["revokedAt"]
            if revokedAt != nil { return .invalid }
            if rotatedAt != nil {
                try revoke(familyID: familyID, now: now, db)
                return .reused(userID: userID, familyID: familyID)
            }
            if now >= expiresAt { return .invalid }
            try db.execute("UPDATE refreshToken SET rotatedAt = ? WHERE tokenHash = ?", [now, oldHash])
            try db.execute("""
                INSERT INTO refreshToken (tokenHash, userId, familyId, createdAt, expiresAt) VALUES (?, ?, ?, ?, ?)
                """, [newHash, userID, familyID, now, newExpiresAt])
            return .rotated(userID: userID, familyID: familyID)
        }
    }

    /// The stored password hash of a user (the directory keeps none); nil for an unknown user or one without a
    /// password (phone sign-in only).
    public func passwordHash(userID: String) throws -> String? {
        try read { db in try db.fetchValue(#"SELECT passwordHash FROM "user" WHERE id = ?"#, [userID]) }
    }

    /// Replaces the password hash and, in the same transaction, revokes every session of the user but `keep`
    /// (a password change signs out every other device). Returns the sessions revoked.
    public func changePassword(userID: String, hash: String, keep familyID: String, now: Int64) throws -> [RevokedSession] {
        try write { db in
            try db.execute(#"UPDATE "user" SET passwordHash = ? WHERE id = ?"#, [hash, userID])
            if db.changes == 0 { throw AccountStoreError.notFound }
            let families: [String] = try db.fetchValues("""
                SELECT DISTINCT familyId FROM refreshToken WHERE userId = ? AND familyId != ? AND revokedAt IS NULL
                """, [userID, familyID])
            for family in families { try revoke(familyID: family, now: now, db) }
            return families.map { RevokedSession(userID: userID, familyID: $0, revokedAt: now) }
        }
    }

    /// Revokes every token of the family this token belongs to (sign-out). Nil if the token is unknown.
    @discardableResult
    public func revokeFamily(ofTokenHash hash: String, now: Int64) throws -> RevokedSession? {
        try write { db in
            guard let row = try db.fetchOne("SELECT userId, familyId FROM refreshToken WHERE tokenHash = ?", [hash]) else { return nil }
            let session = RevokedSession(userID: row["userId"], familyID: row["familyId"], revokedAt: now)
            try revoke(familyID: session.familyID, now: now, db)
            return session
        }
    }

    /// Sessions revoked at or after `since`, oldest first: what a starting server must still refuse (access
    /// tokens issued before a revocation stay valid for their lifetime unless refused).
    public func sessionsRevoked(since: Int64) throws -> [RevokedSession] {
        try read { db in
            try db.fetchAll("""
                SELECT userId, familyId, MAX(revokedAt) AS revokedAt FROM refreshToken
                WHERE revokedAt >= ? GROUP BY familyId, userId ORDER BY MAX(revokedAt)
                """, [since]).map { RevokedSession(userID: $0["userId"], familyID: $0["familyId"], revokedAt: $0["revokedAt"]) }
        }
    }

    /// Ends a session: its tokens revoked, and the push devices it registered removed (a signed-out app must not
    /// show what its account is sent).
    private func revoke(familyID: String, now: Int64, _ db: any SQLDatabase) throws {
        try db.execute("UPDATE refreshToken SET revokedAt = ? WHERE familyId = ? AND revokedAt IS NULL", [now, familyID])
        try db.execute("DELETE FROM device WHERE sessionId = ?", [familyID])
    }

    /// Whether the session still has a live token: one not rotated, not revoked and not expired.
    /// Access tokens of an inactive family (signed out, reused, expired) should be refused.
    public func isFamilyActive(_ familyID: String, now: Int64) throws -> Bool {
        try read { db in
            try db.fetchOne("""
                SELECT 1 FROM refreshToken
                WHERE familyId = ? AND rotatedAt IS NULL AND revokedAt IS NULL AND expiresAt > ? LIMIT 1
                """, [familyID, now]) != nil
        }
    }

    // MARK: OTP challenges

    /// The current sign-in code challenge for this phone, if any.
    public func otpChallenge(phone: String) throws -> (codeDigest: String, issuedAt: Int64, failedAttempts: Int)? {
        try read { db in
            guard let row = try db.fetchOne("SELECT * FROM otpChallenge WHERE phone = ?", [phone])
            else { return nil }
            return (row["codeDigest"], row["issuedAt"], row["failedAttempts"])
        }
    }

    /// Creates or replaces the challenge for this phone.
    public func saveOTPChallenge(phone: String, codeDigest: String, issuedAt: Int64, failedAttempts: Int) throws {
        try write { db in
            try db.execute("""
                INSERT INTO otpChallenge (phone, codeDigest, issuedAt, failedAttempts) VALUES (?, ?, ?, ?)
                ON CONFLICT(phone) DO UPDATE SET
                    codeDigest = excluded.codeDigest, issuedAt = excluded.issuedAt, failedAttempts = excluded.failedAttempts
                """, [phone, codeDigest, issuedAt, failedAttempts])
        }
    }

    public func deleteOTPChallenge(phone: String) throws {
        try write { db in
            try db.execute("DELETE FROM otpChallenge WHERE phone = ?", [phone])
        }
    }

    // MARK: Onboarding

    /// Creates or replaces the client's profile (validated answers; its `age` is not stored), records its weight in
    /// `weightEntry`, both at `now`, and marks the user's onboarding completed, in one transaction. Throws
    /// `.notFound` for an unknown user.
    public func saveOnboarding(_ profile: ClientProfileView, now: Int64) throws {
        _ = try write({ db -> UserRecord in
            guard try db.fetchOne(#"SELECT 1 FROM "user" WHERE id = ?"#, [profile.clientId]) != nil
            else { throw AccountStoreError.notFound }
            try db.execute("""
                INSERT INTO clientProfile (userId, dateOfBirth, gender, heightCm, weightKg, goal, experienceLevel,
                    dietaryRestrictions, medicalConditions, workoutLocation, workoutFrequency, injuries, updatedAt)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT(userId) DO UPDATE SET
                    dateOfBirth = excluded.dateOfBirth, gender = excluded.gender, heightCm = excluded.heightCm,
                    weightKg = excluded.weightKg, goal = excluded.goal, experienceLevel = excluded.experienceLevel,
                    dietaryRestrictions = excluded.dietaryRestrictions, medicalConditions = excluded.medicalConditions,
                    workoutLocation = excluded.workoutLocation, workoutFrequency = excluded.workoutFrequency,
                    injuries = excluded.injuries, updatedAt = excluded.updatedAt
                """, [profile.clientId, profile.dateOfBirth, profile.gender, profile.heightCm, profile.weightKg,
                                 profile.goal, profile.experienceLevel, JSONList.encode(profile.dietaryRestrictions),
                                 JSONList.encode(profile.medicalConditions), profile.workoutLocation,
                                 profile.workoutFrequency, JSONList.encode(profile.injuries), now])
            try db.execute("INSERT INTO weightEntry (clientId, weightKg, recordedAt) VALUES (?, ?, ?)", [profile.clientId, profile.weightKg, now])
            try db.execute(#"UPDATE "user" SET onboardingCompleted = 1 WHERE id = ?"#, [profile.clientId])
            guard let user = try Self.user(db, id: profile.clientId) else { throw AccountStoreError.notFound }
            return user
        }, users: { [$0] })
    }

    /// The client's profile as stored, without an age (nil: the caller knows the day) and without a fitness score
    /// (the caller computes it from the stored answers).
    public func clientProfile(userID: String) throws -> ClientProfileView? {
        try read { db in
            try db.fetchOne("SELECT * FROM clientProfile WHERE userId = ?", [userID])
                .map { ClientProfileView(row: $0) }
        }
    }
}
