#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `rating_prompt` (logged, to the client only; `--ratings`): ask the client to rate their coaching — after
/// every 10th message they send (`reason: "messages"`, `messages_sent`), and after each completed video session
/// (`reason: "session"`, `session_id`). The app shows the seed's modal ("How's your coaching experience?").
public struct RatingPromptEvent: Codable, Sendable, Equatable {
    public var type = "rating_prompt"
    public var threadId: String
    public var coachId: String
    public var reason: String
    public var messagesSent: Int64?
    public var sessionId: String?
    public init(threadId: String, coachId: String, reason: String, messagesSent: Int64?, sessionId: String?) {
        self.threadId = threadId
        self.coachId = coachId
        self.reason = reason
        self.messagesSent = messagesSent
        self.sessionId = sessionId
    }
    enum CodingKeys: String, CodingKey {
        case type, reason
        case threadId = "thread_id"
        case coachId = "coach_id"
        case messagesSent = "messages_sent"
        case sessionId = "session_id"
    }
}

/// `rating.submit` (a client): 1–5 stars for the coach of `thread_id`, optional feedback (≤ 500 characters);
/// `session_id` when it answers a session's prompt.
public struct RatingSubmitCommand: Codable, Sendable, Equatable {
    public var threadId: String?
    public var stars: Int64?
    public var feedback: String?
    public var sessionId: String?
    enum CodingKeys: String, CodingKey, CaseIterable {
        case stars, feedback
        case threadId = "thread_id"
        case sessionId = "session_id"
    }
}

/// `rating.skip` (a client): the prompt was dismissed; kept, so that skips can be counted.
public struct RatingSkipCommand: Codable, Sendable, Equatable {
    public var threadId: String?
    public var sessionId: String?
    enum CodingKeys: String, CodingKey, CaseIterable {
        case threadId = "thread_id"
        case sessionId = "session_id"
    }
}

/// One rating as admins read it (`stars` absent: skipped).
public struct RatingView: Codable, Sendable, Equatable {
    public var clientId: String
    public var stars: Int?
    public var feedback: String?
    public var sessionId: String?
    public var createdAt: Int64
    public init(clientId: String, stars: Int?, feedback: String?, sessionId: String?, createdAt: Int64) {
        self.clientId = clientId
        self.stars = stars
        self.feedback = feedback
        self.sessionId = sessionId
        self.createdAt = createdAt
    }
    enum CodingKeys: String, CodingKey {
        case stars, feedback
        case clientId = "client_id"
        case sessionId = "session_id"
        case createdAt = "created_at"
    }
}

/// `GET /v1/admin/coaches/{id}/ratings`: the average of the stars given (absent when none), how many, how many
/// prompts were skipped, and the 20 newest answers.
public struct CoachRatingsView: Codable, Sendable, Equatable {
    public var coachId: String
    public var average: Double?
    public var count: Int
    public var skipped: Int
    public var recent: [RatingView]
    public init(coachId: String, average: Double?, count: Int, skipped: Int, recent: [RatingView]) {
        self.coachId = coachId
        self.average = average
        self.count = count
        self.skipped = skipped
        self.recent = recent
    }
    enum CodingKeys: String, CodingKey {
        case average, count, skipped, recent
        case coachId = "coach_id"
    }
}
