#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// MARK: - Meals

/// `meals`: a client's meal history (their meal logs) or a coach's meal feed (every current client's), newest
/// first; `thread_id` narrows it to one thread, `before` (a meal's `cursor`) pages back, `limit` 1–100 (20).
public struct MealsCommand: Codable, Sendable, Equatable, KnownFields {
    public init() {}
    public var threadId: String?
    public var before: Int64?
    public var limit: Int?
    enum CodingKeys: String, CodingKey, CaseIterable {
        case before, limit
        case threadId = "thread_id"
    }
    public static let fieldNames = Set(CodingKeys.allCases.map(\.stringValue))
}

/// One meal log in a history or a feed: the message's place (thread, seq, log position) and its card.
public struct MealEntry: Codable, Sendable, Equatable {
    public var threadId: String
    public var clientId: String
    public var seq: Int64
    public var cursor: Int64
    public var clientMessageId: String
    public var createdAt: Int64
    public var meal: MealLog
    public init(threadId: String, clientId: String, seq: Int64, cursor: Int64, clientMessageId: String, createdAt: Int64,
                meal: MealLog) {
        self.threadId = threadId
        self.clientId = clientId
        self.seq = seq
        self.cursor = cursor
        self.clientMessageId = clientMessageId
        self.createdAt = createdAt
        self.meal = meal
    }
    enum CodingKeys: String, CodingKey {
        case seq, cursor, meal
        case threadId = "thread_id"
        case clientId = "client_id"
        case clientMessageId = "client_message_id"
        case createdAt = "created_at"
    }
}

public struct MealsResult: Codable, Sendable, Equatable {
    public var meals: [MealEntry]
    public var hasMore: Bool
    public init(meals: [MealEntry], hasMore: Bool) {
        self.meals = meals
        self.hasMore = hasMore
    }
    enum CodingKeys: String, CodingKey {
        case meals
        case hasMore = "has_more"
    }
}

extension MealsCommand: SocketCommandBody { public static let type = "meals" }
