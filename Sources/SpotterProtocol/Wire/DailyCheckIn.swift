#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// The daily check-in (seed 001 "Daily Check-In Screen", `/users/{userId}/daily_checkins/{date}`): how the client
// feels today — mood, soreness, stress, whether they are sick or skipping their workout — and the day's overall
// score the server computes from it. One per day of the client's calendar (their zone): a second one the same
// day replaces the first (same id, `daily_check_in.updated`). Each is a `record` record on the client's current
// thread, so the coach sees it at once and `resume` replays it.

/// One day's check-in. Scales 1–5: `mood` 1 awful … 5 great; `soreness` 1 none … 5 very sore; `stress` 1 calm
/// … 5 very stressed. `overall_score` 0–100 (`DailyScore`).
public struct DailyCheckInView: Codable, Sendable, Equatable {
    public var id: String
    public var clientId: String
    /// `YYYY-MM-DD` in the client's zone when it was sent.
    public var day: String
    public var mood: Int
    public var soreness: Int
    public var stress: Int
    public var sick: Bool
    public var notes: String?
    public var overallScore: Int
    public var createdAt: Int64
    public var updatedAt: Int64
    public init(id: String, clientId: String, day: String, mood: Int, soreness: Int, stress: Int, sick: Bool,
                notes: String?, overallScore: Int, createdAt: Int64, updatedAt: Int64) {
        self.id = id
        self.clientId = clientId
        self.day = day
        self.mood = mood
        self.soreness = soreness
        self.stress = stress
        self.sick = sick
        self.notes = notes
        self.overallScore = overallScore
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
    enum CodingKeys: String, CodingKey {
        case id, day, mood, soreness, stress, sick, notes
        case clientId = "client_id"
        case overallScore = "overall_score"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
    }
}

/// `daily_check_in.submit` (the client): today's check-in; `sick` defaults to false.
public struct DailyCheckInSubmitCommand: Codable, Sendable, Equatable, KnownFields {
    public init() {}
    public var threadId: String?
    public var mood: Int?
    public var soreness: Int?
    public var stress: Int?
    public var sick: Bool?
    public var notes: String?
    enum CodingKeys: String, CodingKey, CaseIterable {
        case mood, soreness, stress, sick, notes
        case threadId = "thread_id"
    }
    public static let fieldNames = Set(CodingKeys.allCases.map(\.stringValue))
    public static let scale = 1...5
}

/// `daily_check_ins` (the client, or their current coach): the client's daily check-ins, newest day first, at
/// most `limit` (1–100, default 30), before the day `before` (`YYYY-MM-DD`, exclusive; a reply's `next`).
public struct DailyCheckInsCommand: Codable, Sendable, Equatable, KnownFields {
    public init() {}
    public var threadId: String?
    public var before: String?
    public var limit: Int?
    enum CodingKeys: String, CodingKey, CaseIterable {
        case before, limit
        case threadId = "thread_id"
    }
    public static let fieldNames = Set(CodingKeys.allCases.map(\.stringValue))
    public static let defaultLimit = 30
    public static let limits = 1...100
}

/// The reply to `daily_check_ins`. `today`: the client's day now (their zone); `next`: send as `before` for the
/// next page (null: no older check-ins).
public struct DailyCheckInsResult: Codable, Sendable, Equatable {
    public var threadId: String
    public var clientId: String
    public var today: String
    public var checkIns: [DailyCheckInView]
    public var next: String?
    public init(threadId: String, clientId: String, today: String, checkIns: [DailyCheckInView], next: String?) {
        self.threadId = threadId
        self.clientId = clientId
        self.today = today
        self.checkIns = checkIns
        self.next = next
    }
    enum CodingKeys: String, CodingKey {
        case today, next
        case threadId = "thread_id"
        case clientId = "client_id"
        case checkIns = "check_ins"
    }
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(threadId, forKey: .threadId)
        try container.encode(clientId, forKey: .clientId)
        try container.encode(today, forKey: .today)
        try container.encode(checkIns, forKey: .checkIns)
        try container.encode(next, forKey: .next)
    }
}

extension DailyCheckInSubmitCommand: SocketCommandBody {
    public static let type = "daily_check_in.submit"
    public func checkRanges() throws(APIError) {
        try WireRange.check(mood, in: WireRange.count, field: "mood")
        try WireRange.check(soreness, in: WireRange.count, field: "soreness")
        try WireRange.check(stress, in: WireRange.count, field: "stress")
    }
}

extension DailyCheckInsCommand: SocketCommandBody {
    public static let type = "daily_check_ins"
    public func checkRanges() throws(APIError) {
        try WireRange.check(limit, in: WireRange.count, field: "limit")
    }
}

extension DailyCheckInView {
    /// The view as `JSONText.encoder` writes it (sorted keys), without `JSONEncoder`: every card of a coach's
    /// dashboard carries one.
    public var jsonText: String {
        var json = JSONText()
        json.field("client_id", clientId)
        json.field("created_at", createdAt)
        json.field("day", day)
        json.field("id", id)
        json.field("mood", Int64(mood))
        json.field("notes", notes)
        json.field("overall_score", Int64(overallScore))
        json.field("sick", sick)
        json.field("soreness", Int64(soreness))
        json.field("stress", Int64(stress))
        json.field("updated_at", updatedAt)
        return json.finish()
    }
}
