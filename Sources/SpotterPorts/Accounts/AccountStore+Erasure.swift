/// Erasing an account (issue 29): the accounts' side. The user's personal data goes; the user row stays as a
/// tombstone (`id`, `role`, `erasedAt`) so that the threads, sessions and log records naming the id still resolve.
/// The user's own content in the log (messages, the coaching record, attachments) is the log's to forget (its
/// `erasure` record); the bytes leave the disk with the purge (`POST /v1/admin/purge`).
///
/// What goes, in one transaction:
/// - the AI-generation counter (`aiQuota`);
/// - the profile: name, email, phone, password hash, avatar, last seen, time zone (the email and the phone are free
///   for a new sign-up at once);
/// - every session: each refresh-token family revoked (the rows stay, holding only digests, so that a starting
///   server still refuses the sessions' access tokens), and every push device;
/// - pushes waiting in the outbox to the user or in the user's threads (their titles may name the user);
/// - notification preferences and muted threads; the onboarding answers (`clientProfile`) and weights;
/// - the text of the user's ratings (the stars stay: a coach's average is a number, not personal data);
/// - the notes the user wrote on sessions (`sessionFeedback`; the rating number stays, as with ratings);
/// - a coach's availability (`availability`: their working hours, days off and exceptions);
/// - a sign-in code waiting for the user's phone, an email change waiting for its code;
/// - the user's Apple and Google links (`identityLink`): the provider account signs up afresh afterwards;
/// - a client's link to their coach (the thread stays, readable, no longer writable: its `link` record is the
///   log engine's) and the user's pending coach change requests (rejected), with the reason text the client wrote;
/// - a coach's `coach` row (no longer listed or picked). A coach with linked clients is refused
///   (`.coachHasClients`): the clients must move first.
extension AccountStore {
    /// What an erasure did that the caller carries on with.
    public struct Erasure: Sendable, Equatable {
        public var userID: String
        public var role: String
        /// When the account was erased (the first time, if it was erased before).
        public var erasedAt: Int64
        /// Every session of the user, revoked now: refuse their access tokens and close their sockets.
        public var revoked: [RevokedSession]
        /// The digest of the avatar image when nothing else names that file (no other user's avatar, no
        /// attachment): the caller removes the file.
        public var orphanedAvatar: String?
        /// The user's threads whose link ended (a client's with their coach), oldest first.
        public var endedThreads: [String]
        /// The tombstone as stored.
        public var tombstone: UserRecord
    }

    /// Erases the user (see the extension's comment) inside the caller's write transaction; answers what was done
    /// and the threads whose link state changed (for the log engine's `link` records). Erasing an erased user again
    /// does again what is left to do (nothing, or what a failure stopped) and keeps the first `erasedAt`.
    /// Throws `.notFound` for an unknown user, `.coachHasClients(count)` for a coach with linked clients.
    public static func erase(_ db: any SQLDatabase, userID: String, now: Int64) throws -> (Erasure, [String]) {
        guard let user = try user(db, id: userID) else { throw AccountStoreError.notFound }
        let linked: Int = try db.fetchValue("SELECT COUNT(*) FROM coachClientLink WHERE coachId = ?", [userID]) ?? 0
        if linked > 0 { throw AccountStoreError.coachHasClients(count: linked) }

        // A client's link ends; its thread stays (the coach keeps the conversation, with a deleted account).
        let ended: [String] = try db.fetchValues("""
            SELECT t.id FROM coachClientLink l JOIN thread t ON t.coachId = l.coachId AND t.clientId = l.clientId
            WHERE l.clientId = ?
            """, [userID])
        try db.execute("DELETE FROM coachClientLink WHERE clientId = ?", [userID])
        try db.execute("""
            UPDATE coachChangeRequest SET status = 'rejected', decidedAt = ?
            WHERE status = 'pending' AND (clientId = ? OR toCoachId = ?)
            """, [now, userID, userID])
        try db.execute("UPDATE coachChangeRequest SET reason = NULL WHERE clientId = ?", [userID])
        try db.execute("DELETE FROM coach WHERE userId = ?", [userID])

        // Sessions: every family revoked, the rows kept (digests only) for a starting server's refusals.
        let families: [String] = try db.fetchValues("SELECT DISTINCT familyId FROM refreshToken WHERE userId = ?", [userID])
        try db.execute("UPDATE refreshToken SET revokedAt = ? WHERE userId = ? AND revokedAt IS NULL", [now, userID])
        try db.execute("DELETE FROM device WHERE userId = ?", [userID])
        try db.execute("""
            DELETE FROM pushOutbox WHERE userId = ? OR threadId IN (SELECT id FROM thread WHERE coachId = ? OR clientId = ?)
            """, [userID, userID, userID])

        try db.execute("DELETE FROM notificationPreference WHERE userId = ?", [userID])
        try db.execute("DELETE FROM threadMute WHERE userId = ?", [userID])
        try db.execute("DELETE FROM goalPreferences WHERE userId = ?", [userID])
        try db.execute("DELETE FROM clientProfile WHERE userId = ?", [userID])
        try db.execute("DELETE FROM availability WHERE coachId = ?", [userID])
        try db.execute("DELETE FROM weightEntry WHERE clientId = ?", [userID])
        try db.execute("DELETE FROM aiQuota WHERE userId = ?", [userID])
        try db.execute("UPDATE rating SET feedback = NULL WHERE clientId = ?", [userID])
        try db.execute("UPDATE sessionFeedback SET notes = NULL WHERE authorId = ?", [userID])
        try db.execute("DELETE FROM emailChange WHERE userId = ?", [userID])
        try removeIdentityLinks(db, userID: userID)
        if let phone = user.phone { try db.execute("DELETE FROM otpChallenge WHERE phone = ?", [phone]) }

        var orphaned: String?
        if let avatar = user.avatar {
            let shared = try db.fetchOne(#"SELECT 1 FROM "user" WHERE avatar = ? AND id != ?"#, [avatar, userID]) != nil
                || db.fetchOne("SELECT 1 FROM attachment WHERE id = ?", [avatar]) != nil
            if !shared { orphaned = avatar }
        }
        try db.execute(#"""
            UPDATE "user" SET fullName = NULL, email = NULL, phone = NULL, passwordHash = NULL, avatar = NULL,
                              lastSeenAt = NULL, timeZone = 'UTC', onboardingCompleted = 0,
                              erasedAt = COALESCE(erasedAt, ?)
            WHERE id = ?
            """#, [now, userID])
        guard let tombstone = try Self.user(db, id: userID), let erasedAt = tombstone.erasedAt else {
            throw AccountStoreError.notFound
        }
        let erasure = Erasure(
            userID: userID, role: user.role, erasedAt: erasedAt,
            revoked: families.map { RevokedSession(userID: userID, familyID: $0, revokedAt: now) },
            orphanedAvatar: orphaned, endedThreads: ended, tombstone: tombstone)
        return (erasure, ended)
    }

    /// `erase` in a transaction of its own, without `link` records (the admin command, store tests): a server
    /// erases through its log engine (`ChatStore.eraseAccount`), which logs the ended links in the same transaction.
    @discardableResult
    public func erase(userID: String, now: Int64) throws -> Erasure {
        try write({ db in try Self.erase(db, userID: userID, now: now).0 }, users: { [$0.tombstone] })
    }

    /// How many clients are linked to the coach (0 for anyone else).
    public func linkedClientCount(coachID: String) throws -> Int {
        try read { db in try db.fetchValue("SELECT COUNT(*) FROM coachClientLink WHERE coachId = ?", [coachID]) ?? 0 }
    }
}
