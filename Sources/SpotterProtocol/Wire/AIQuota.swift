#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A user's AI generations (issue 30 item 4, seed 001 "AI Generation Limits"): how many the current window allows
/// (absent: unlimited), how many are used and left, the window (`week`: Monday 00:00 to Monday 00:00, `day`:
/// midnight to midnight, both in the user's time zone) and when it starts again.
public struct AIGenerationAllowance: Codable, Sendable, Equatable {
    public var used: Int
    public var limit: Int?
    public var left: Int?
    public var window: String
    public var resetsAt: Int64
    public init(used: Int, limit: Int?, window: String, resetsAt: Int64) {
        self.used = used
        self.limit = limit
        self.left = limit.map { max(0, $0 - used) }
        self.window = window
        self.resetsAt = resetsAt
    }
    enum CodingKeys: String, CodingKey {
        case used, limit, left, window
        case resetsAt = "resets_at"
    }

    public var jsonText: String {
        var json = JSONText()
        json.field("left", left.map(Int64.init))
        json.field("limit", limit.map(Int64.init))
        json.field("resets_at", resetsAt)
        json.field("used", Int64(used))
        json.field("window", window)
        return json.finish()
    }
}

/// The answer to `POST /v1/services/users/{id}/quotas/ai_generation/consume`: the generation is counted, and this
/// is what is left of the window.
public struct AIGenerationConsumeView: Codable, Sendable, Equatable {
    public var userId: String
    /// The client's tier when tiers are in force (`--tiers`); absent for anyone unmetered.
    public var tier: String?
    public var aiGenerations: AIGenerationAllowance
    public init(userId: String, tier: String?, aiGenerations: AIGenerationAllowance) {
        self.userId = userId
        self.tier = tier
        self.aiGenerations = aiGenerations
    }
    enum CodingKeys: String, CodingKey {
        case tier
        case userId = "user_id"
        case aiGenerations = "ai_generations"
    }
}
