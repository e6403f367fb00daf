#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One monthly allowance of a client (`--tiers`): what is used, the limit (absent: unlimited), what is left,
/// and the colour the apps draw it in (`green` below 80 %, `yellow` 80–99 %, `red` at 100 %).
public struct QuotaAllowance: Codable, Sendable, Equatable {
    public var used: Int
    public var limit: Int?
    public var left: Int?
    public var band: String
    public init(used: Int, limit: Int?, left: Int?, band: String) {
        self.used = used
        self.limit = limit
        self.left = left
        self.band = band
    }
}

/// A client's tier and this month's use of it, in their time zone's month.
public struct QuotaView: Codable, Sendable, Equatable {
    public var tier: String
    public var messages: QuotaAllowance
    public var calls: QuotaAllowance
    /// The longest video call of the tier, in minutes.
    public var callMinutes: Int
    public var attachments: Bool
    /// When the month's counts start again (Unix seconds: midnight of the 1st in the user's time zone).
    public var resetsAt: Int64
    /// From 80 % of the messages on: "3 messages remaining", in the user's language.
    public var warning: String?
    /// The AI generations of the current week or day (issue 30 item 4); absent where the server does not know them.
    public var aiGenerations: AIGenerationAllowance?
    public init(tier: String, messages: QuotaAllowance, calls: QuotaAllowance, callMinutes: Int, attachments: Bool,
                resetsAt: Int64, warning: String?, aiGenerations: AIGenerationAllowance? = nil) {
        self.tier = tier
        self.messages = messages
        self.calls = calls
        self.callMinutes = callMinutes
        self.attachments = attachments
        self.resetsAt = resetsAt
        self.warning = warning
        self.aiGenerations = aiGenerations
    }
    enum CodingKeys: String, CodingKey {
        case tier, messages, calls, attachments, warning
        case aiGenerations = "ai_generations"
        case callMinutes = "call_minutes"
        case resetsAt = "resets_at"
    }
}

/// `quota`: a client's quota changed (a send, a tier change) or the socket just opened. Not logged: it is the
/// current value, sent again after every `hello`.
public struct QuotaEvent: Codable, Sendable, Equatable {
    public var type = "quota"
    public var quota: QuotaView
    public init(quota: QuotaView) { self.quota = quota }
}

/// `tier` (logged, to the client; `--tiers`): an admin changed the client's tier. The new quota follows as a
/// `quota` event (live sockets) and in every `hello`.
public struct TierEvent: Codable, Sendable, Equatable {
    public var type = "tier"
    public var tier: String
    public init(tier: String) { self.tier = tier }
}

/// `PUT /v1/admin/users/{id}/tier`.
public struct TierRequest: Codable, Sendable, Equatable {
    public var tier: String?
    enum CodingKeys: String, CodingKey, CaseIterable { case tier }
}

/// A client's tier and usage, as admins read it (`GET /v1/admin/users/{id}/usage`, and the answer to a change).
/// `quota` is absent when the server runs without `--tiers` (the tier is kept for when it does).
public struct UsageView: Codable, Sendable, Equatable {
    public var userId: String
    public var tier: String
    public var quota: QuotaView?
    public init(userId: String, tier: String, quota: QuotaView?) {
        self.userId = userId
        self.tier = tier
        self.quota = quota
    }
    enum CodingKeys: String, CodingKey {
        case tier, quota
        case userId = "user_id"
    }
}
