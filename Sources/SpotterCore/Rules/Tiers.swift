import Foundation
import SpotterProtocol

/// A client's subscription tier (seed 000 §4). Applies only when the server runs with `--tiers`; coaches are
/// never limited.
public enum Tier: String, Sendable, CaseIterable, Codable {
    case freemium
    case premium
    case smartPremium = "smart_premium"

    /// Messages a client may send per calendar month; nil: unlimited.
    public var messagesPerMonth: Int? {
        switch self {
        case .freemium: 20
        case .premium: 200
        case .smartPremium: nil
        }
    }

    /// Video calls per calendar month.
    public var callsPerMonth: Int {
        switch self {
        case .freemium: 1
        case .premium: 2
        case .smartPremium: 4
        }
    }

    /// The longest video call of the tier, in minutes.
    public var callMinutes: Int { self == .freemium ? 15 : 25 }

    /// Whether messages may carry attachments.
    public var attachments: Bool { self == .smartPremium }

    /// Progress photos (check-ins' front, side and back) a client may keep; nil: unlimited. Seed 001's Free tier
    /// keeps 5, its paid tiers unlimited; Freemium is Spotter's Free (seed 000 §4).
    public var progressPhotos: Int? { self == .freemium ? 5 : nil }

    /// The tier above, if any (what a refusal offers).
    public var next: Tier? {
        switch self {
        case .freemium: .premium
        case .premium: .smartPremium
        case .smartPremium: nil
        }
    }
}

/// The calendar month a quota counts in: the user's own month, in their time zone.
public struct QuotaMonth: Sendable, Equatable {
    /// year × 12 + month − 1: equal for two instants of the same month.
    public let key: Int
    /// The first instant of the next month (the reset), Unix seconds.
    public let resetsAt: Int64
    /// The first instant of this month, Unix seconds.
    public let startsAt: Int64

    public init(at now: Int64, in zone: TimeZone) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let date = Date(timeIntervalSince1970: TimeInterval(now))
        let parts = calendar.dateComponents([.year, .month], from: date)
        let year = parts.year ?? 1970, month = parts.month ?? 1
        key = year * 12 + month - 1
        let start = calendar.date(from: DateComponents(year: year, month: month, day: 1)) ?? date
        let next = calendar.date(byAdding: .month, value: 1, to: start) ?? date
        startsAt = Int64(start.timeIntervalSince1970)
        resetsAt = Int64(next.timeIntervalSince1970)
    }
}

/// How much of a monthly allowance is used, as the apps show it (FR-HOME-03).
public struct QuotaUse: Sendable, Equatable {
    public var used: Int
    /// nil: unlimited.
    public var limit: Int?

    public init(used: Int, limit: Int?) {
        self.used = used
        self.limit = limit
    }

    /// Green below 80 %, yellow from 80 % to 99 %, red at 100 % (always green when unlimited).
    public var band: String {
        guard let limit, limit > 0 else { return limit == 0 ? "red" : "green" }
        if used >= limit { return "red" }
        return used * 5 >= limit * 4 ? "yellow" : "green"
    }

    public var left: Int? { limit.map { max(0, $0 - used) } }
    public var exhausted: Bool { limit.map { used >= $0 } ?? false }
}

/// Per-client message counts for the current month, on the server's loop. A client's count is loaded from
/// the log the first time it is needed (`load`), then moves with each accepted send (`charge`); a new month
/// starts it at 0. Pure: callers pass the time, the zone and the tier.
public struct MessageQuotas {
    private struct Count {
        var month: Int
        var used: Int
    }

    private var counts: [String: Count] = [:]

    public init() {}

    public func isLoaded(_ userID: String) -> Bool { counts[userID] != nil }

    /// The count read from the log: `used` messages sent in `month`.
    public mutating func load(_ userID: String, used: Int, month: QuotaMonth) {
        counts[userID] = Count(month: month.key, used: used)
    }

    /// Forgets a client's count (another process charged them: it is read again from the log when next needed).
    public mutating func forget(_ userID: String) { counts[userID] = nil }

    /// Forgets every count (the chat state was rebuilt from the store: counts are read again).
    public mutating func forgetAll() { counts = [:] }

    /// This month's use for a loaded client (0 if the count is from an earlier month).
    public func use(_ userID: String, tier: Tier, month: QuotaMonth) -> QuotaUse {
        let count = counts[userID].flatMap { $0.month == month.key ? $0.used : 0 } ?? 0
        return QuotaUse(used: count, limit: tier.messagesPerMonth)
    }

    /// nil when one more message fits; `quota_exceeded` (naming the tier) if not.
    public func refusal(_ userID: String, tier: Tier, month: QuotaMonth) -> APIError? {
        use(userID, tier: tier, month: month).exhausted
            ? APIError(.quotaExceeded, field: "text", detail: .messageQuota(tier: tier.rawValue)) : nil
    }

    /// One accepted message.
    public mutating func charge(_ userID: String, month: QuotaMonth) {
        let used = counts[userID].flatMap { $0.month == month.key ? $0.used : 0 } ?? 0
        counts[userID] = Count(month: month.key, used: used + 1)
    }
}

extension Tier {
    /// The tier of a stored name (Freemium for anything unknown: names are checked when saved).
    public init(stored name: String) { self = Tier(rawValue: name) ?? .freemium }

    /// The quota as the client's apps show it: messages and calls used this month, the reset, and from 80 % of
    /// the messages on a warning with what is left, in `language`.
    public func view(messages: QuotaUse, callsUsed: Int, month: QuotaMonth, language: Language) -> QuotaView {
        let calls = QuotaUse(used: callsUsed, limit: callsPerMonth)
        var warning: String?
        if let left = messages.left, messages.band != "green" {
            warning = language == .arabic ? "الرسائل المتبقية: \(left)" : left == 1 ? "1 message remaining" : "\(left) messages remaining"
        }
        return QuotaView(
            tier: rawValue,
            messages: QuotaAllowance(used: messages.used, limit: messages.limit, left: messages.left, band: messages.band),
            calls: QuotaAllowance(used: calls.used, limit: calls.limit, left: calls.left, band: calls.band),
            callMinutes: callMinutes, attachments: attachments, resetsAt: month.resetsAt, warning: warning)
    }
}
