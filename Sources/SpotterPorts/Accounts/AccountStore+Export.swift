import SpotterProtocol

/// What the accounts' tables hold about one user, for `GET /v1/me/export` (issue 29): the reads that no other
/// endpoint makes, in SQL both engines run. Secrets stay out: no password hash, no refresh-token or code digest.
/// Blocking: call off the loop. Each list is bounded by what one user can make (sign-ins, ratings, a thread's
/// uploads); the messages, which are not, are read from the log a page at a time.
extension AccountStore {
    /// A sign-in session: one refresh-token family (its tokens' digests are not exported).
    public struct SignInSession: Sendable, Encodable, Equatable {
        public var id: String
        public var startedAt: Int64
        public var lastRefreshedAt: Int64
        public var expiresAt: Int64
        public var revokedAt: Int64?
        enum CodingKeys: String, CodingKey {
            case id
            case startedAt = "started_at", lastRefreshedAt = "last_refreshed_at", expiresAt = "expires_at"
            case revokedAt = "revoked_at"
        }
    }

    /// The user's sign-in sessions, the oldest first.
    public func signInSessions(userID: String) throws -> [SignInSession] {
        try read { db in
            try db.fetchAll("""
                SELECT familyId, MIN(createdAt) AS startedAt, MAX(createdAt) AS lastRefreshedAt, MAX(expiresAt) AS expiresAt,
                       MAX(revokedAt) AS revokedAt
                FROM refreshToken WHERE userId = ? GROUP BY familyId ORDER BY MIN(createdAt), familyId
                """, [userID]).map {
                SignInSession(id: $0["familyId"], startedAt: $0["startedAt"], lastRefreshedAt: $0["lastRefreshedAt"],
                              expiresAt: $0["expiresAt"], revokedAt: $0["revokedAt"])
            }
        }
    }

    /// One weight recorded at onboarding (`weightEntry`).
    public struct WeightEntry: Sendable, Encodable, Equatable {
        public var weightKg: Double
        public var recordedAt: Int64
        enum CodingKeys: String, CodingKey { case weightKg = "weight_kg", recordedAt = "recorded_at" }
    }

    public func weightEntries(clientID: String) throws -> [WeightEntry] {
        try read { db in
            try db.fetchAll("SELECT weightKg, recordedAt FROM weightEntry WHERE clientId = ? ORDER BY recordedAt, id", [clientID])
                .map { WeightEntry(weightKg: $0["weightKg"], recordedAt: $0["recordedAt"]) }
        }
    }

    /// Every rating the user gave (as a client) or received (as a coach), the oldest first.
    public func ratings(involving userID: String) throws -> [RatingRecord] {
        try read { db in
            try db.fetchAll("SELECT * FROM rating WHERE clientId = ? OR coachId = ? ORDER BY createdAt, rowid", [userID, userID]).map {
                RatingRecord(coachId: $0["coachId"], clientId: $0["clientId"], stars: $0["stars"], feedback: $0["feedback"],
                             sessionId: $0["sessionId"], createdAt: $0["createdAt"])
            }
        }
    }

    /// A client's requests to change coach (`coachChangeRequest`), the oldest first.
    public func changeRequests(ofClient clientID: String) throws -> [ChangeRequestView] {
        try read { db in
            try db.fetchAll("SELECT * FROM coachChangeRequest WHERE clientId = ? ORDER BY createdAt, id", [clientID]).map {
                ChangeRequestView(id: $0["id"], clientId: $0["clientId"], fromCoachId: $0["fromCoachId"],
                                  toCoachId: $0["toCoachId"], reason: $0["reason"], status: $0["status"],
                                  createdAt: $0["createdAt"], decidedAt: $0["decidedAt"])
            }
        }
    }

    /// When the user was last seen online (unix seconds), if ever.
    public func lastSeenAt(userID: String) throws -> Int64? {
        try read { db in try db.fetchValue(#"SELECT lastSeenAt FROM "user" WHERE id = ?"#, [userID]) }
    }

    /// A file uploaded to a thread (`attachment`): which thread, who uploaded it, its type and size.
    public struct ThreadAttachment: Sendable, Encodable, Equatable {
        public var id: String
        public var threadID: String
        public var uploaderID: String
        public var type: String
        public var bytes: Int64
        public var createdAt: Int64
        enum CodingKeys: String, CodingKey {
            case id, type, bytes
            case threadID = "thread_id", uploaderID = "uploader_id", createdAt = "created_at"
        }
    }

    /// The files uploaded to `threadID`, the oldest first.
    public func attachments(threadID: String) throws -> [ThreadAttachment] {
        try read { db in
            try db.fetchAll("SELECT * FROM attachment WHERE threadId = ? ORDER BY createdAt, id", [threadID]).map {
                ThreadAttachment(id: $0["id"], threadID: $0["threadId"], uploaderID: $0["uploaderId"], type: $0["type"],
                                 bytes: $0["bytes"], createdAt: $0["createdAt"])
            }
        }
    }

    /// The ids of every thread the user takes part in, as coach or client (past links' threads included).
    public func threadIDs(ofUser userID: String) throws -> [String] {
        try read { db in try db.fetchValues("SELECT id FROM thread WHERE coachId = ? OR clientId = ? ORDER BY createdAt, id", [userID, userID]) }
    }
}
