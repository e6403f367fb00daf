#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// MARK: - The coach's dashboard

/// A challenge as a dashboard card lists it.
public struct ChallengeSummary: Codable, Sendable, Equatable {
    public var id: String
    public var name: String
    public var done: Int
    public var days: Int
    public var percent: Int
    public var status: String
    public init(id: String, name: String, done: Int, days: Int, percent: Int, status: String) {
        self.id = id
        self.name = name
        self.done = done
        self.days = days
        self.percent = percent
        self.status = status
    }
}

/// The next session on a card: the soonest one of the thread that holds its time or waits for an answer.
public struct NextSessionView: Codable, Sendable, Equatable {
    public var id: String
    public var start: Int64
    public var status: String
    public init(id: String, start: Int64, status: String) {
        self.id = id
        self.start = start
        self.status = status
    }
}

/// One client on the coach's dashboard.
public struct ClientCardView: Codable, Sendable, Equatable {
    public var clientId: String
    public var threadId: String
    public var name: String?
    /// The coach's unread messages in the thread.
    public var unread: Int64
    public var goal: GoalView?
    public var activeChallenges: [ChallengeSummary]
    public var lastCheckInAt: Int64?
    public var latestWeightKg: Double?
    /// The newest check-in's weight minus the one before it (absent with fewer than two).
    public var weightChangeKg: Double?
    public var nextSession: NextSessionView?
    public var pendingResolutions: Int
    /// The client's newest daily check-in (`DailyCheckIn.swift`), and whether it is of their today.
    public var dailyCheckIn: DailyCheckInView?
    public var checkedInToday: Bool?
    public init(clientId: String, threadId: String, name: String?, unread: Int64, goal: GoalView?,
                activeChallenges: [ChallengeSummary], lastCheckInAt: Int64?, latestWeightKg: Double?, weightChangeKg: Double?,
                nextSession: NextSessionView?, pendingResolutions: Int, dailyCheckIn: DailyCheckInView? = nil,
                checkedInToday: Bool? = nil) {
        self.dailyCheckIn = dailyCheckIn
        self.checkedInToday = checkedInToday
        self.clientId = clientId
        self.threadId = threadId
        self.name = name
        self.unread = unread
        self.goal = goal
        self.activeChallenges = activeChallenges
        self.lastCheckInAt = lastCheckInAt
        self.latestWeightKg = latestWeightKg
        self.weightChangeKg = weightChangeKg
        self.nextSession = nextSession
        self.pendingResolutions = pendingResolutions
    }
    enum CodingKeys: String, CodingKey {
        case name, unread, goal
        case clientId = "client_id"
        case threadId = "thread_id"
        case activeChallenges = "active_challenges"
        case lastCheckInAt = "last_check_in_at"
        case latestWeightKg = "latest_weight_kg"
        case weightChangeKg = "weight_change_kg"
        case nextSession = "next_session"
        case pendingResolutions = "pending_resolutions"
        case dailyCheckIn = "daily_check_in"
        case checkedInToday = "checked_in_today"
    }
}

/// The coach's figures over [from, to): absent when there is nothing to measure.
public struct CoachAnalyticsView: Codable, Sendable, Equatable {
    public var from: Int64
    public var to: Int64
    public var clients: Int
    /// Tasks done of the tasks due in the range (days up to today), in percent.
    public var challengeCompletionPercent: Int?
    /// Check-ins per client per week.
    public var checkInsPerClientWeek: Double?
    /// Days with at least one meal log, of the clients' days in the range, in percent.
    public var mealLogDaysPercent: Int?
    /// Completed sessions of those completed or missed in the range, in percent.
    public var sessionAttendancePercent: Int?
    /// The average client engagement over the range, in percent (`CoachDashboard.engagement`).
    public var engagementPercent: Int? = nil
    /// Challenge types (a challenge's main focus) by how many challenges ran in the range, most first.
    public var popularChallengeTypes: [ChallengeTypeCount] = []
    public init(from: Int64, to: Int64, clients: Int, challengeCompletionPercent: Int?, checkInsPerClientWeek: Double?,
                mealLogDaysPercent: Int?, sessionAttendancePercent: Int?) {
        self.from = from
        self.to = to
        self.clients = clients
        self.challengeCompletionPercent = challengeCompletionPercent
        self.checkInsPerClientWeek = checkInsPerClientWeek
        self.mealLogDaysPercent = mealLogDaysPercent
        self.sessionAttendancePercent = sessionAttendancePercent
    }
    enum CodingKeys: String, CodingKey {
        case from, to, clients
        case challengeCompletionPercent = "challenge_completion_percent"
        case checkInsPerClientWeek = "check_ins_per_client_week"
        case mealLogDaysPercent = "meal_log_days_percent"
        case sessionAttendancePercent = "session_attendance_percent"
        case engagementPercent = "engagement_percent"
        case popularChallengeTypes = "popular_challenge_types"
    }
}

/// The reply to `dashboard`: a card per current client (by name) and the coach's analytics.
public struct DashboardResult: Codable, Sendable, Equatable {
    public var clients: [ClientCardView]
    public var analytics: CoachAnalyticsView
    public init(clients: [ClientCardView], analytics: CoachAnalyticsView) {
        self.clients = clients
        self.analytics = analytics
    }
}

/// `client_card` (to the coach; not logged): a client's card after a change of their record.
public struct ClientCardEvent: Codable, Sendable, Equatable {
    public var type = "client_card"
    public var card: ClientCardView
    public init(card: ClientCardView) { self.card = card }
}

/// `dashboard` (a coach): the cards and the analytics over [from, to) (Unix seconds; default the last 30 days,
/// at most 366 days).
public struct DashboardCommand: Codable, Sendable, Equatable, KnownFields {
    public init() {}
    public var from: Int64?
    public var to: Int64?
    enum CodingKeys: String, CodingKey, CaseIterable { case from, to }
    public static let fieldNames = Set(CodingKeys.allCases.map(\.stringValue))
}

/// `challenge.template` (a coach): how many of the coach's clients are in a challenge made from `template_id`
/// that is not over (pending or active).
public struct ChallengeTemplateCommand: Codable, Sendable, Equatable, KnownFields {
    public init() {}
    public var templateId: String?
    enum CodingKeys: String, CodingKey, CaseIterable { case templateId = "template_id" }
    public static let fieldNames = Set(CodingKeys.allCases.map(\.stringValue))
}

extension DashboardCommand: SocketCommandBody { public static let type = "dashboard" }
extension ChallengeTemplateCommand: SocketCommandBody { public static let type = "challenge.template" }
