import Foundation
import SpotterProtocol

/// AI-generation quotas (issue 30 item 4, seed 001 "AI Generation Limits"; Spotter's tiers are seed 000's, so the
/// seed's Free, Basic and Premium are Freemium, Premium and Smart Premium): 1 a week, 3 a week, and "unlimited
/// (max 3/day)" — 3 a day. Spotter is the authority: the AI service consumes one generation per plan it makes.
public enum AIQuota {
    /// How long a window lasts.
    public enum Span: String, Sendable {
        /// Monday 00:00 to the next Monday 00:00 in the user's zone (ISO 8601 weeks; the seed names no first day).
        case week
        /// Midnight to midnight in the user's zone.
        case day
    }

    /// What a user may consume: `limit` per `span` (nil: unlimited).
    public struct Allowance: Sendable, Equatable {
        public var limit: Int?
        public var span: Span
    }

    /// A client's allowance when tiers are in force (`metered`); anyone else is unlimited, counted per day.
    public static func allowance(role: String, tier: String, metered: Bool) -> Allowance {
        guard metered, role == "client" else { return Allowance(limit: nil, span: .day) }
        switch Tier(stored: tier) {
        case .freemium: return Allowance(limit: 1, span: .week)
        case .premium: return Allowance(limit: 3, span: .week)
        case .smartPremium: return Allowance(limit: 3, span: .day)
        }
    }

    /// The window `now` falls in: its first instant (the counter's key) and the first instant of the next one (the
    /// reset), both Unix seconds. Days are counted on the calendar, not in 86 400 s steps, so a window across a DST
    /// change is 23 or 25 hours long (or 167/169 for a week); a day whose midnight does not exist starts at its
    /// first instant.
    public struct Window: Sendable, Equatable {
        public let startsAt: Int64
        public let resetsAt: Int64
        public let span: Span

        public init(at now: Int64, span: Span, in zone: TimeZone) {
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = zone
            let date = Date(timeIntervalSince1970: TimeInterval(now))
            let parts = calendar.dateComponents([.year, .month, .day, .weekday], from: date)
            // Days back to Monday (weekday 1 is Sunday).
            let back = span == .week ? ((parts.weekday ?? 2) + 5) % 7 : 0
            let length = span == .week ? 7 : 1
            /// The first instant of the day `offset` days from today: from that day's noon, which always exists.
            func start(_ offset: Int) -> Int64 {
                var noon = DateComponents(year: parts.year, month: parts.month, day: (parts.day ?? 1) + offset)
                noon.hour = 12
                guard let day = calendar.date(from: noon) else { return now }
                return Int64(calendar.startOfDay(for: day).timeIntervalSince1970)
            }
            startsAt = start(-back)
            resetsAt = start(length - back)
            self.span = span
        }
    }
}

extension Tier {
    /// InBody scans (seed 000 FR-PROGRESS-03: Premium and up).
    public var inbody: Bool { self != .freemium }
}
