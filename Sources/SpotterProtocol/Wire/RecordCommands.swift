#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// The coaching record's socket commands (Protocol/README "The coaching record"); the views are in Record.swift.

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
