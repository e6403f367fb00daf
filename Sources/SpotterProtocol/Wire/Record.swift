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
