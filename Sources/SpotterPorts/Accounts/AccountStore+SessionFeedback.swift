import SpotterProtocol

/// One side's feedback on a completed video session (`session.feedback`): `side` is "coach" or "client".
public struct SessionFeedbackRecord: Sendable, Equatable {
    public var sessionId: String
    public var side: String
    public var authorId: String
    public var rating: Int
    public var notes: String?
    public var createdAt: Int64

    public init(sessionId: String, side: String, authorId: String, rating: Int, notes: String?, createdAt: Int64) {
        self.sessionId = sessionId
        self.side = side
        self.authorId = authorId
        self.rating = rating
        self.notes = notes
        self.createdAt = createdAt
    }
}

extension AccountStore {
    /// Stores one side's feedback, through the one writer. Given once per side: a second is refused with
    /// `.conflict("feedback_given")` and nothing changes.
    public func addSessionFeedback(_ feedback: SessionFeedbackRecord) throws {
        try write { db in
            if try db.fetchOne("SELECT 1 FROM sessionFeedback WHERE sessionId = ? AND side = ?",
                               [feedback.sessionId, feedback.side]) != nil {
                throw AccountStoreError.conflict("feedback_given")
            }
            try db.execute("""
                INSERT INTO sessionFeedback (sessionId, side, authorId, rating, notes, createdAt) VALUES (?, ?, ?, ?, ?, ?)
                """, [feedback.sessionId, feedback.side, feedback.authorId, feedback.rating, feedback.notes,
                                 feedback.createdAt])
        }
    }

    /// Both sides' feedback on a session (at most two rows), whoever asks: the caller filters what the reader
    /// may see.
    public func sessionFeedback(sessionID: String) throws -> [SessionFeedbackRecord] {
        try read { db in
            try db.fetchAll("SELECT * FROM sessionFeedback WHERE sessionId = ? ORDER BY side", [sessionID]).map { row in
                SessionFeedbackRecord(sessionId: row["sessionId"], side: row["side"], authorId: row["authorId"],
                                      rating: row["rating"], notes: row["notes"], createdAt: row["createdAt"])
            }
        }
    }
}
