/// A client's rating of their coach (`--ratings`); `stars` nil for a skipped prompt.
public struct RatingRecord: Sendable, Equatable {
    public var coachId: String
    public var clientId: String
    public var stars: Int?
    public var feedback: String?
    public var sessionId: String?
    public var createdAt: Int64

    public init(coachId: String, clientId: String, stars: Int?, feedback: String?, sessionId: String?, createdAt: Int64) {
        self.coachId = coachId
        self.clientId = clientId
        self.stars = stars
        self.feedback = feedback
        self.sessionId = sessionId
        self.createdAt = createdAt
    }
}

/// A coach's ratings in sum: the average of the stars given (nil when none), counts, the newest answers.
public struct CoachRatings: Sendable, Equatable {
    public var average: Double?
    public var count: Int
    public var skipped: Int
    public var recent: [RatingRecord]
}

extension AccountStore {
    /// Stores a rating (or a skip), through the one writer.
    public func addRating(_ rating: RatingRecord) throws {
        try write { db in
            try db.execute("""
                INSERT INTO rating (coachId, clientId, stars, feedback, sessionId, createdAt) VALUES (?, ?, ?, ?, ?, ?)
                """, [rating.coachId, rating.clientId, rating.stars, rating.feedback, rating.sessionId,
                                 rating.createdAt])
        }
    }

    /// A coach's average, counts and `limit` newest answers (skips included), newest first.
    public func ratings(ofCoach coachID: String, limit: Int = 20) throws -> CoachRatings {
        try read { db in
            let sums = try db.fetchOne("""
                SELECT AVG(stars) AS average, COUNT(stars) AS count, SUM(CASE WHEN stars IS NULL THEN 1 ELSE 0 END) AS skipped
                FROM rating WHERE coachId = ?
                """, [coachID])
            let recent = try db.fetchAll("""
                SELECT * FROM rating WHERE coachId = ? ORDER BY createdAt DESC, rowid DESC LIMIT ?
                """, [coachID, limit]).map { row in
                RatingRecord(coachId: row["coachId"], clientId: row["clientId"], stars: row["stars"], feedback: row["feedback"],
                             sessionId: row["sessionId"], createdAt: row["createdAt"])
            }
            return CoachRatings(average: sums?["average"], count: sums?["count"] ?? 0, skipped: sums?["skipped"] ?? 0,
                                recent: recent)
        }
    }
}
