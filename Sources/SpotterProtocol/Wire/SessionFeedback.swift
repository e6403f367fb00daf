#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `session.feedback` (the coach or the client of a `completed` session): a rating of the session, 1–5, and
/// optional notes (≤ 2,000 characters; no control characters but newline and tab). Once per side, not editable.
/// Who sees what (`session.feedback.read`): the client's rating and notes are for the client and the coach;
/// the coach's rating and notes are the coach's private notes and never reach the client.
public struct SessionFeedbackCommand: Codable, Sendable, Equatable {
    public var sessionId: String?
    public var rating: Int64?
    public var notes: String?
    enum CodingKeys: String, CodingKey, CaseIterable {
        case rating, notes
        case sessionId = "session_id"
    }

    /// The most characters (as people count them) notes may have.
    public static let maxNotesCharacters = 2_000
    public static let ratings: ClosedRange<Int64> = 1...5

    /// Notes a person typed: newline and tab are kept, any other control character (NUL included) refused.
    public static func notesAreClean(_ notes: String) -> Bool {
        notes.unicodeScalars.allSatisfy { scalar in
            scalar == "\n" || scalar == "\t" || scalar.properties.generalCategory != .control
        }
    }
}

extension SessionFeedbackCommand: SocketCommandBody {
    public static let type = "session.feedback"

    /// The wire's range for a count; the handler narrows it to `ratings`.
    public func checkRanges() throws(APIError) {
        try WireRange.check(rating, in: WireRange.count, field: "rating")
    }
}

extension SessionFeedbackCommand: KnownFields {
    public static let fieldNames = Set(CodingKeys.allCases.map(\.stringValue))
}

/// `session.feedback.read` (the coach or the client of a session): the feedback given on it so far.
public struct SessionFeedbackReadCommand: Codable, Sendable, Equatable {
    public var sessionId: String?
    enum CodingKeys: String, CodingKey, CaseIterable {
        case sessionId = "session_id"
    }
}

extension SessionFeedbackReadCommand: SocketCommandBody {
    public static let type = "session.feedback.read"
}

extension SessionFeedbackReadCommand: KnownFields {
    public static let fieldNames = Set(CodingKeys.allCases.map(\.stringValue))
}

/// One side's feedback on a session.
public struct SessionFeedbackEntry: Codable, Sendable, Equatable {
    public var rating: Int
    public var notes: String?
    public var createdAt: Int64
    public init(rating: Int, notes: String?, createdAt: Int64) {
        self.rating = rating
        self.notes = notes
        self.createdAt = createdAt
    }
    enum CodingKeys: String, CodingKey {
        case rating, notes
        case createdAt = "created_at"
    }
}

/// The reply to `session.feedback.read`: `client` when the client gave feedback; `coach` only to the coach,
/// when they gave theirs. Absent keys: not given (or, for `coach` to a client, not theirs to see).
public struct SessionFeedbackView: Codable, Sendable, Equatable {
    public var sessionId: String
    public var client: SessionFeedbackEntry?
    public var coach: SessionFeedbackEntry?
    public init(sessionId: String, client: SessionFeedbackEntry?, coach: SessionFeedbackEntry?) {
        self.sessionId = sessionId
        self.client = client
        self.coach = coach
    }
    enum CodingKeys: String, CodingKey {
        case client, coach
        case sessionId = "session_id"
    }
}
