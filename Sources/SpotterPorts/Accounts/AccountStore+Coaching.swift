import SpotterProtocol

/// Coaches, coach–client links, their threads, and coach change requests.
///
/// Invariants kept here: a client has at most one coach (`coachClientLink` keyed by client);
/// every link has a thread for its (coach, client) pair, and a pair never gets a second thread;
/// a client has at most one pending change request (a partial unique index enforces it too).
extension AccountStore {
    // MARK: Coaches and links

    /// Every coach with how many clients it has, ordered by full name (then id).
    public func listCoaches() throws -> [(id: String, fullName: String?, clientCount: Int, avatar: String?)] {
        try read { db in
            try db.fetchAll("""
                SELECT u.id, u.fullName, u.avatar,
                       (SELECT COUNT(*) FROM coachClientLink l WHERE l.coachId = c.userId) AS clientCount
                FROM coach c JOIN "user" u ON u.id = c.userId
                ORDER BY u.fullName, u.id
                """).map { row in
                    (id: row["id"], fullName: row["fullName"], clientCount: row["clientCount"], avatar: row["avatar"])
                }
        }
    }

    /// The client's link to its coach, with their thread; nil when the client has no coach.
    public func link(clientID: String) throws -> LinkView? {
        try read { db in try Self.fetchLink(clientID: clientID, db) }
    }

    /// Links the client to the coach and creates their thread (id `threadID`) unless the pair already
    /// has one, in which case that thread is kept. Throws `.conflict("already_linked")` if the client has
    /// a coach, `.notFound` if `coachID` is not a coach or `clientID` is not a user.
    @discardableResult
    public func createLink(clientID: String, coachID: String, threadID: String, now: Int64) throws -> LinkView {
        try write { db in try Self.createLink(db, clientID: clientID, coachID: coachID, threadID: threadID, now: now) }
    }

    /// `createLink` inside the caller's write transaction (the messaging writer, which logs the change).
    public static func createLink(_ db: any SQLDatabase, clientID: String, coachID: String, threadID: String, now: Int64) throws -> LinkView {
        guard try isCoach(coachID, db), try userExists(clientID, db) else { throw AccountStoreError.notFound }
        if try fetchLink(clientID: clientID, db) != nil { throw AccountStoreError.conflict("already_linked") }
        try db.execute("INSERT INTO coachClientLink (clientId, coachId, createdAt) VALUES (?, ?, ?)", [clientID, coachID, now])
        try ensureThread(id: threadID, coachID: coachID, clientID: clientID, now: now, db)
        guard let link = try fetchLink(clientID: clientID, db) else { throw AccountStoreError.notFound }
        return link
    }

    /// The coach's clients, ordered by full name (then id), with profile basics, the most recent
    /// weight entry and the coach–client thread.
    public func clients(ofCoach coachID: String) throws -> [ClientListing] {
        try read { db in
            try db.fetchAll("""
                SELECT u.id, u.fullName, p.goal, p.experienceLevel, p.dateOfBirth, t.id AS threadId,
                       (SELECT w.weightKg FROM weightEntry w WHERE w.clientId = u.id
                        ORDER BY w.recordedAt DESC, w.id DESC LIMIT 1) AS latestWeightKg
                FROM coachClientLink l
                JOIN "user" u ON u.id = l.clientId
                JOIN thread t ON t.coachId = l.coachId AND t.clientId = l.clientId
                LEFT JOIN clientProfile p ON p.userId = u.id
                WHERE l.coachId = ?
                ORDER BY u.fullName, u.id
                """, [coachID]).map { row in
                ClientListing(clientId: row["id"], fullName: row["fullName"], goal: row["goal"],
                              experienceLevel: row["experienceLevel"], dateOfBirth: row["dateOfBirth"],
                              latestWeightKg: row["latestWeightKg"], threadId: row["threadId"])
            }
        }
    }

    // MARK: Coach change requests

    /// Records a pending request to move the client to `toCoachID`. Checked in this order:
    /// `.conflict("no_coach")` if the client has no coach, `.conflict("pending")` if a request is already
    /// pending, `.notFound` if `toCoachID` is not a coach, `.conflict("same_coach")` if it is the current coach.
    @discardableResult
    public func createChangeRequest(id: String, clientID: String, toCoachID: String, reason: String?,
                                    now: Int64) throws -> ChangeRequestView {
        try write { db in
            guard let current = try Self.fetchLink(clientID: clientID, db) else { throw AccountStoreError.conflict("no_coach") }
            if try db.fetchOne("SELECT 1 FROM coachChangeRequest WHERE clientId = ? AND status = 'pending'", [clientID]) != nil {
                throw AccountStoreError.conflict("pending")
            }
            guard try Self.isCoach(toCoachID, db) else { throw AccountStoreError.notFound }
            if current.coachId == toCoachID { throw AccountStoreError.conflict("same_coach") }
            try db.execute("""
                INSERT INTO coachChangeRequest (id, clientId, fromCoachId, toCoachId, reason, status, createdAt)
                VALUES (?, ?, ?, ?, ?, 'pending', ?)
                """, [id, clientID, current.coachId, toCoachID, reason, now])
            guard let record = try Self.fetchRequest(id: id, db) else { throw AccountStoreError.notFound }
            return record
        }
    }

    /// Requests with this status ("pending", "approved", "rejected"), or all when nil; newest first, with the
    /// people's names.
    public func changeRequests(status: String?) throws -> [ChangeRequestView] {
        try read { db in
            try db.fetchAll("""
                SELECT r.*, c.fullName AS clientName, f.fullName AS fromCoachName, t.fullName AS toCoachName
                FROM coachChangeRequest r
                LEFT JOIN "user" c ON c.id = r.clientId
                LEFT JOIN "user" f ON f.id = r.fromCoachId
                LEFT JOIN "user" t ON t.id = r.toCoachId
                WHERE CAST(?1 AS TEXT) IS NULL OR r.status = ?1 ORDER BY r.createdAt DESC, r.rowid DESC
                """, [status]).map { ChangeRequestView(row: $0, withNames: true) }
        }
    }

    /// Approves or rejects a pending request. Approving moves the client's link to the new coach and
    /// creates the new pair's thread (id `threadID`) if that pair has none; the old thread is kept.
    /// Rejecting only marks the request. Throws `.notFound` for an unknown request and
    /// `.conflict("not_pending")` if it was decided already.
    @discardableResult
    public func decideChangeRequest(id: String, approve: Bool, adminID: String, threadID: String,
                                    now: Int64) throws -> ChangeRequestView {
        try write { db in
            try Self.decideChangeRequest(db, id: id, approve: approve, adminID: adminID, threadID: threadID, now: now).request
        }
    }

    /// `decideChangeRequest` inside the caller's write transaction, with the coach the client had before
    /// (nil if none, or if the request was rejected).
    public static func decideChangeRequest(_ db: any SQLDatabase, id: String, approve: Bool, adminID: String, threadID: String,
                                           now: Int64) throws -> (request: ChangeRequestView, previousCoachID: String?) {
        guard let request = try fetchRequest(id: id, db) else { throw AccountStoreError.notFound }
        guard request.status == "pending" else { throw AccountStoreError.conflict("not_pending") }
        var previous: String?
        if approve {
            previous = try fetchLink(clientID: request.clientId, db)?.coachId
            try db.execute("""
                INSERT INTO coachClientLink (clientId, coachId, createdAt) VALUES (?, ?, ?)
                ON CONFLICT(clientId) DO UPDATE SET coachId = excluded.coachId, createdAt = excluded.createdAt
                """, [request.clientId, request.toCoachId, now])
            try ensureThread(id: threadID, coachID: request.toCoachId, clientID: request.clientId, now: now, db)
        }
        try db.execute("""
            UPDATE coachChangeRequest SET status = ?, decidedAt = ?, decidedBy = ? WHERE id = ?
            """, [approve ? "approved" : "rejected", now, adminID, id])
        guard let decided = try fetchRequest(id: id, db) else { throw AccountStoreError.notFound }
        return (decided, previous)
    }

    // MARK: Link changes as the log records them

    /// `createLink` for a log engine's link change: the link and the thread whose link state changed.
    public static func linkChange(_ db: any SQLDatabase, clientID: String, coachID: String, threadID: String,
                                  now: Int64) throws -> (LinkView, [String]) {
        let link = try createLink(db, clientID: clientID, coachID: coachID, threadID: threadID, now: now)
        return (link, [link.threadId])
    }

    /// `decideChangeRequest` for a log engine's link change: the request and, approved, every thread between the
    /// client and the old or the new coach (their link state changed), oldest first.
    public static func linkChange(_ db: any SQLDatabase, deciding requestID: String, approve: Bool, adminID: String,
                                  threadID: String, now: Int64) throws -> (ChangeRequestView, [String]) {
        let (request, previous) = try decideChangeRequest(db, id: requestID, approve: approve, adminID: adminID,
                                                          threadID: threadID, now: now)
        guard approve else { return (request, []) }
        let coaches = Set([previous, request.toCoachId].compactMap { $0 })
        let threads = try db.fetchAll("SELECT id, coachId FROM thread WHERE clientId = ? ORDER BY createdAt, no", [request.clientId])
        return (request, threads.filter { coaches.contains($0["coachId"]) }.map { $0["id"] })
    }

    // MARK: Helpers (inside a transaction)

    private static func fetchLink(clientID: String, _ db: any SQLDatabase) throws -> LinkView? {
        try db.fetchOne("""
            SELECT l.clientId, l.coachId, t.id AS threadId
            FROM coachClientLink l JOIN thread t ON t.coachId = l.coachId AND t.clientId = l.clientId
            WHERE l.clientId = ?
            """, [clientID]).map { row in
            LinkView(clientId: row["clientId"], coachId: row["coachId"], threadId: row["threadId"])
        }
    }

    private static func fetchRequest(id: String, _ db: any SQLDatabase) throws -> ChangeRequestView? {
        try db.fetchOne("SELECT * FROM coachChangeRequest WHERE id = ?", [id])
            .map { ChangeRequestView(row: $0) }
    }

    private static func isCoach(_ userID: String, _ db: any SQLDatabase) throws -> Bool {
        try db.fetchOne("SELECT 1 FROM coach WHERE userId = ?", [userID]) != nil
    }

    private static func userExists(_ userID: String, _ db: any SQLDatabase) throws -> Bool {
        try db.fetchOne(#"SELECT 1 FROM "user" WHERE id = ?"#, [userID]) != nil
    }

    private static func ensureThread(id: String, coachID: String, clientID: String, now: Int64, _ db: any SQLDatabase) throws {
        try db.execute("""
            INSERT INTO thread (id, coachId, clientId, createdAt) VALUES (?, ?, ?, ?)
            ON CONFLICT(coachId, clientId) DO NOTHING
            """, [id, coachID, clientID, now])
    }
}
