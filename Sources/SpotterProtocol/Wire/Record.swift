#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// The coaching record (Protocol/README "The coaching record"): what a coach and their client keep between them
// apart from chat — challenges with daily tasks, weekly check-ins, body measurements and a body-fat goal. It
// belongs to the client; their current coach reads and comments it. Every change is one `record` record of the
// log on the client's current thread, so `resume` replays it and both sides see it at once.

/// One day's task of a challenge. `done_at`: when the client checked it off (absent: not done).
public struct ChallengeTaskView: Codable, Sendable, Equatable, KnownFields {
    public var day: Int?
    public var name: String?
    public var description: String?
    /// `training`, `nutrition`, `recovery` or `consistency`.
    public var focus: String?
    /// `light`, `moderate` or `intense`.
    public var intensity: String?
    public var doneAt: Int64?
    public init(day: Int, name: String, description: String?, focus: String, intensity: String, doneAt: Int64?) {
        self.day = day
        self.name = name
        self.description = description
        self.focus = focus
        self.intensity = intensity
        self.doneAt = doneAt
    }
    enum CodingKeys: String, CodingKey, CaseIterable {
        case day, name, description, focus, intensity
        case doneAt = "done_at"
    }
    /// A command's task: `day` and `done_at` are the server's.
    public static let fieldNames: Set<String> = ["name", "description", "focus", "intensity"]
}

/// A challenge: 3–14 days from `start_date` (the client's calendar), one task a day; a group challenge (one with a
/// `template_id`, `ChallengeParticipation`) 7, 14 or 30 days. `status` is `pending` before the first day, `active`,
/// `completed` once every task is done, `ended` after the last day otherwise, `left` once the client left it.
public struct ChallengeView: Codable, Sendable, Equatable {
    public var id: String
    public var clientId: String
    public var coachId: String
    public var name: String
    public var description: String?
    public var startDate: String
    public var days: Int
    /// `coach`, or `ai` for tasks a service generated.
    public var createdBy: String
    public var templateId: String?
    public var tasks: [ChallengeTaskView]
    public var done: Int
    public var percent: Int
    public var status: String
    public var createdAt: Int64
    /// When the client left it (`challenge.leave`; status `left`); absent otherwise.
    public var leftAt: Int64? = nil
    public init(id: String, clientId: String, coachId: String, name: String, description: String?, startDate: String,
                days: Int, createdBy: String, templateId: String?, tasks: [ChallengeTaskView], done: Int, percent: Int,
                status: String, createdAt: Int64) {
        self.id = id
        self.clientId = clientId
        self.coachId = coachId
        self.name = name
        self.description = description
        self.startDate = startDate
        self.days = days
        self.createdBy = createdBy
        self.templateId = templateId
        self.tasks = tasks
        self.done = done
        self.percent = percent
        self.status = status
        self.createdAt = createdAt
    }
    enum CodingKeys: String, CodingKey {
        case id, name, description, days, tasks, done, percent, status
        case clientId = "client_id"
        case coachId = "coach_id"
        case startDate = "start_date"
        case createdBy = "created_by"
        case templateId = "template_id"
        case createdAt = "created_at"
        case leftAt = "left_at"
    }
}

/// Progress photos of a check-in: ids (SHA-256) of images uploaded to the thread's attachments.
public struct CheckInPhotos: Codable, Sendable, Equatable, KnownFields {
    public var front: String?
    public var side: String?
    public var back: String?
    public init(front: String?, side: String?, back: String?) {
        self.front = front
        self.side = side
        self.back = back
    }
    enum CodingKeys: String, CodingKey, CaseIterable { case front, side, back }
    public static let fieldNames = Set(CodingKeys.allCases.map(\.stringValue))
}

/// A weekly check-in: weight in kg (converted when sent in lbs), photos, notes, and the coach's comment.
public struct CheckInView: Codable, Sendable, Equatable {
    public var id: String
    public var clientId: String
    public var weightKg: Double
    public var photos: CheckInPhotos?
    public var notes: String?
    public var challenges: String?
    public var coachComment: String?
    public var commentedAt: Int64?
    public var createdAt: Int64
    public init(id: String, clientId: String, weightKg: Double, photos: CheckInPhotos?, notes: String?,
                challenges: String?, coachComment: String?, commentedAt: Int64?, createdAt: Int64) {
        self.id = id
        self.clientId = clientId
        self.weightKg = weightKg
        self.photos = photos
        self.notes = notes
        self.challenges = challenges
        self.coachComment = coachComment
        self.commentedAt = commentedAt
        self.createdAt = createdAt
    }
    enum CodingKeys: String, CodingKey {
        case id, photos, notes, challenges
        case clientId = "client_id"
        case weightKg = "weight_kg"
        case coachComment = "coach_comment"
        case commentedAt = "commented_at"
        case createdAt = "created_at"
    }
}

/// A body measurement and the body fat the server computed from it. `method`: `navy` (circumferences in cm),
/// `skinfold3` or `skinfold7` (Jackson–Pollock, skinfolds in mm by site, with age).
public struct MeasurementView: Codable, Sendable, Equatable {
    public var id: String
    public var clientId: String
    public var method: String
    public var sex: String
    public var age: Int?
    public var heightCm: Double?
    public var neckCm: Double?
    public var waistCm: Double?
    public var hipCm: Double?
    public var skinfoldsMm: [String: Double]?
    public var bodyFatPercent: Double
    public var createdAt: Int64
    /// `method: "inbody"`: the scan's figures (its `body_fat_percent` is `body_fat_percent` above).
    public var inbody: InBodyScan?
    public init(id: String, clientId: String, method: String, sex: String, age: Int?, heightCm: Double?,
                neckCm: Double?, waistCm: Double?, hipCm: Double?, skinfoldsMm: [String: Double]?,
                bodyFatPercent: Double, createdAt: Int64, inbody: InBodyScan? = nil) {
        self.inbody = inbody
        self.id = id
        self.clientId = clientId
        self.method = method
        self.sex = sex
        self.age = age
        self.heightCm = heightCm
        self.neckCm = neckCm
        self.waistCm = waistCm
        self.hipCm = hipCm
        self.skinfoldsMm = skinfoldsMm
        self.bodyFatPercent = bodyFatPercent
        self.createdAt = createdAt
    }
    enum CodingKeys: String, CodingKey {
        case id, method, sex, age, inbody
        case clientId = "client_id"
        case heightCm = "height_cm"
        case neckCm = "neck_cm"
        case waistCm = "waist_cm"
        case hipCm = "hip_cm"
        case skinfoldsMm = "skinfolds_mm"
        case bodyFatPercent = "body_fat_percent"
        case createdAt = "created_at"
    }
}

/// A body-fat goal: `cutting` down to or `bulking` up to `target_percent`. `status`: `active`, `near_ceiling`
/// (bulking within 1 point of its ceiling), `completed`, or `replaced` by a newer goal.
public struct GoalView: Codable, Sendable, Equatable {
    public var id: String
    public var clientId: String
    public var kind: String
    public var sex: String
    public var targetPercent: Double
    public var startPercent: Double
    public var status: String
    public var createdAt: Int64
    public var completedAt: Int64?
    /// The plan (`GoalPlan.swift`), when the weight, height and age were known when it was set.
    public var plan: GoalPlanView?
    /// Body-fat points behind the plan at the newest measurement (absent: on track or no plan).
    public var behindByPercent: Double?
    public init(id: String, clientId: String, kind: String, sex: String, targetPercent: Double, startPercent: Double,
                status: String, createdAt: Int64, completedAt: Int64?, plan: GoalPlanView? = nil, behindByPercent: Double? = nil) {
        self.plan = plan
        self.behindByPercent = behindByPercent
        self.id = id
        self.clientId = clientId
        self.kind = kind
        self.sex = sex
        self.targetPercent = targetPercent
        self.startPercent = startPercent
        self.status = status
        self.createdAt = createdAt
        self.completedAt = completedAt
    }
    enum CodingKeys: String, CodingKey {
        case id, kind, sex, status, plan
        case behindByPercent = "behind_by_percent"
        case clientId = "client_id"
        case targetPercent = "target_percent"
        case startPercent = "start_percent"
        case createdAt = "created_at"
        case completedAt = "completed_at"
    }
}

/// What one `record` record holds, and (with `type` and `thread_id`) the `record` event both participants get:
/// the change (`challenge.created`, `challenge.task_checked`, `challenge.task_unchecked`, `check_in.created`,
/// `check_in.commented`, `measurement.created`, `goal.created`, `goal.replaced`, `goal.progress`,
/// `goal.completed`, `goal.behind_schedule`, `goal.on_track`, `daily_check_in.created`, `daily_check_in.updated`)
/// and the item as it now stands.
public struct RecordBody: Codable, Sendable, Equatable {
    public var change: String
    public var challenge: ChallengeView?
    public var checkIn: CheckInView?
    public var measurement: MeasurementView?
    public var goal: GoalView?
    /// In a reply about a group challenge (never stored): its live counts (`ChallengeParticipation`).
    public var participation: ChallengeParticipation? = nil
    public var dailyCheckIn: DailyCheckInView?
    public init(change: String, challenge: ChallengeView? = nil, checkIn: CheckInView? = nil,
                measurement: MeasurementView? = nil, goal: GoalView? = nil, dailyCheckIn: DailyCheckInView? = nil) {
        self.dailyCheckIn = dailyCheckIn
        self.change = change
        self.challenge = challenge
        self.checkIn = checkIn
        self.measurement = measurement
        self.goal = goal
    }
    enum CodingKeys: String, CodingKey {
        case change, challenge, measurement, goal, participation
        case checkIn = "check_in"
        case dailyCheckIn = "daily_check_in"
    }

    /// The event's JSON from the record's stored body: `{"type":"record","thread_id":…,` then the body's fields.
    public static func eventJSON(threadID: String, body: String) -> String {
        var head = JSONText()
        head.field("type", "record")
        head.field("thread_id", threadID)
        let prefix = head.finish().dropLast()  // `{…}` without its closing brace
        return prefix + "," + body.dropFirst()
    }
}

// MARK: - Commands

/// `challenge.create` (a coach): a challenge for the client of `thread_id`.
public struct ChallengeCreateCommand: Codable, Sendable, Equatable, KnownFields {
    public init() {}
    public var threadId: String?
    public var name: String?
    public var description: String?
    /// `YYYY-MM-DD` in the client's time zone; today or later.
    public var startDate: String?
    /// One per day, 3–14; with `template_id` (a group challenge any client of the coach may join) 7, 14 or 30.
    public var tasks: [ChallengeTaskView]?
    /// `coach` (default) or `ai`.
    public var createdBy: String?
    public var templateId: String?
    enum CodingKeys: String, CodingKey, CaseIterable {
        case name, description, tasks
        case threadId = "thread_id"
        case startDate = "start_date"
        case createdBy = "created_by"
        case templateId = "template_id"
    }
    public static let fieldNames = Set(CodingKeys.allCases.map(\.stringValue))
    public static var nestedObjects: [String: any KnownFields.Type] { ["tasks": ChallengeTaskView.self] }
}

/// `challenge.check` (the client): check the task of `day` off (`done` true) or uncheck it (false).
public struct ChallengeCheckCommand: Codable, Sendable, Equatable, KnownFields {
    public init() {}
    public var challengeId: String?
    public var day: Int?
    public var done: Bool?
    enum CodingKeys: String, CodingKey, CaseIterable {
        case day, done
        case challengeId = "challenge_id"
    }
    public static let fieldNames = Set(CodingKeys.allCases.map(\.stringValue))
}

/// `check_in.submit` (the client): weight (`unit` `kg`, the default, or `lbs`), photos, notes.
public struct CheckInSubmitCommand: Codable, Sendable, Equatable, KnownFields {
    public init() {}
    public var threadId: String?
    public var weight: Double?
    public var unit: String?
    public var photos: CheckInPhotos?
    public var notes: String?
    public var challenges: String?
    enum CodingKeys: String, CodingKey, CaseIterable {
        case weight, unit, photos, notes, challenges
        case threadId = "thread_id"
    }
    public static let fieldNames = Set(CodingKeys.allCases.map(\.stringValue))
    public static var nestedObjects: [String: any KnownFields.Type] { ["photos": CheckInPhotos.self] }
}

/// `check_in.comment` (the coach): a comment on a check-in (replaces an earlier one).
public struct CheckInCommentCommand: Codable, Sendable, Equatable, KnownFields {
    public init() {}
    public var checkInId: String?
    public var comment: String?
    enum CodingKeys: String, CodingKey, CaseIterable {
        case comment
        case checkInId = "check_in_id"
    }
    public static let fieldNames = Set(CodingKeys.allCases.map(\.stringValue))
}

/// `measurement.add` (the client): the method's measurements; the server computes the body fat.
public struct MeasurementAddCommand: Codable, Sendable, Equatable, KnownFields {
    public init() {}
    public var threadId: String?
    public var method: String?
    public var sex: String?
    public var age: Int?
    public var heightCm: Double?
    public var neckCm: Double?
    public var waistCm: Double?
    public var hipCm: Double?
    public var skinfoldsMm: [String: Double]?
    /// `method: "inbody"` (Premium and up): the scan's figures.
    public var inbody: InBodyScan?
    enum CodingKeys: String, CodingKey, CaseIterable {
        case method, sex, age, inbody
        case threadId = "thread_id"
        case heightCm = "height_cm"
        case neckCm = "neck_cm"
        case waistCm = "waist_cm"
        case hipCm = "hip_cm"
        case skinfoldsMm = "skinfolds_mm"
    }
    public static let fieldNames = Set(CodingKeys.allCases.map(\.stringValue))
}

/// `goal.set` (the client): a body-fat goal measured against their newest measurement. An active goal is kept
/// (`goal_active`) unless `replace` is true. `weight_kg`, `height_cm`, `age` (defaults: the newest check-in's
/// weight, the newest measurement's height and age) and `activity` (default `light`) make its plan.
public struct GoalSetCommand: Codable, Sendable, Equatable, KnownFields {
    public init() {}
    public var threadId: String?
    public var kind: String?
    public var targetPercent: Double?
    public var replace: Bool?
    public var weightKg: Double?
    public var heightCm: Double?
    public var age: Int?
    public var activity: String?
    enum CodingKeys: String, CodingKey, CaseIterable {
        case kind, replace, age, activity
        case threadId = "thread_id"
        case targetPercent = "target_percent"
        case weightKg = "weight_kg"
        case heightCm = "height_cm"
    }
    public static let fieldNames = Set(CodingKeys.allCases.map(\.stringValue))
}

/// `record` (either participant): the client's record as it stands, newest first, a page at a time. Without
/// `cursor`, the first page of each list (challenges, check-ins, measurements), at most `limit` (1–100,
/// default 20) items each; with `cursor` (a `*_next` of an earlier reply), the next page of that list alone.
public struct RecordCommand: Codable, Sendable, Equatable, KnownFields {
    public init() {}
    public var threadId: String?
    public var limit: Int?
    public var cursor: String?
    enum CodingKeys: String, CodingKey, CaseIterable {
        case limit, cursor
        case threadId = "thread_id"
    }
    public static let fieldNames = Set(CodingKeys.allCases.map(\.stringValue))
    public static let defaultLimit = 20
    public static let limits = 1...100
}

/// The reply to `record`.
public struct RecordResult: Codable, Sendable, Equatable {
    public var threadId: String
    public var clientId: String
    public var latestWeightKg: Double?
    public var nextMeasurementAt: Int64?
    public var goal: GoalView?
    public var challenges: [ChallengeView]
    public var checkIns: [CheckInView]
    public var measurements: [MeasurementView]
    /// Where each list's next page starts (send it as `cursor`); null when the list is complete, or not the
    /// one a `cursor` asked for.
    public var challengesNext: String?
    public var checkInsNext: String?
    public var measurementsNext: String?
    public init(threadId: String, clientId: String, latestWeightKg: Double?, nextMeasurementAt: Int64?, goal: GoalView?,
                challenges: [ChallengeView], checkIns: [CheckInView], measurements: [MeasurementView],
                challengesNext: String? = nil, checkInsNext: String? = nil, measurementsNext: String? = nil) {
        self.threadId = threadId
        self.clientId = clientId
        self.latestWeightKg = latestWeightKg
        self.nextMeasurementAt = nextMeasurementAt
        self.goal = goal
        self.challenges = challenges
        self.checkIns = checkIns
        self.measurements = measurements
        self.challengesNext = challengesNext
        self.checkInsNext = checkInsNext
        self.measurementsNext = measurementsNext
    }
    enum CodingKeys: String, CodingKey {
        case goal, challenges, measurements
        case threadId = "thread_id"
        case clientId = "client_id"
        case latestWeightKg = "latest_weight_kg"
        case nextMeasurementAt = "next_measurement_at"
        case checkIns = "check_ins"
        case challengesNext = "challenges_next"
        case checkInsNext = "check_ins_next"
        case measurementsNext = "measurements_next"
    }

    /// The three `*_next` cursors are written as null at the end, never left out.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(threadId, forKey: .threadId)
        try container.encode(clientId, forKey: .clientId)
        try container.encodeIfPresent(latestWeightKg, forKey: .latestWeightKg)
        try container.encodeIfPresent(nextMeasurementAt, forKey: .nextMeasurementAt)
        try container.encodeIfPresent(goal, forKey: .goal)
        try container.encode(challenges, forKey: .challenges)
        try container.encode(checkIns, forKey: .checkIns)
        try container.encode(measurements, forKey: .measurements)
        try container.encode(challengesNext, forKey: .challengesNext)
        try container.encode(checkInsNext, forKey: .checkInsNext)
        try container.encode(measurementsNext, forKey: .measurementsNext)
    }
}

extension ChallengeCreateCommand: SocketCommandBody { public static let type = "challenge.create" }
extension ChallengeCheckCommand: SocketCommandBody { public static let type = "challenge.check" }
extension CheckInSubmitCommand: SocketCommandBody { public static let type = "check_in.submit" }
extension CheckInCommentCommand: SocketCommandBody { public static let type = "check_in.comment" }
extension MeasurementAddCommand: SocketCommandBody { public static let type = "measurement.add" }
extension GoalSetCommand: SocketCommandBody { public static let type = "goal.set" }
extension RecordCommand: SocketCommandBody { public static let type = "record" }

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
