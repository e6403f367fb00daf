#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A span of a day in the coach's zone, `"HH:MM"` to `"HH:MM"` (`"24:00"`: the day's end).
public struct AvailabilityHours: Codable, Sendable, Equatable {
    public var start: String
    public var end: String
    public init(start: String, end: String) {
        self.start = start
        self.end = end
    }
}

/// One date made unavailable (`hours` empty) or given other hours than its weekday's.
public struct AvailabilityException: Codable, Sendable, Equatable {
    /// `YYYY-MM-DD`, a date in the coach's zone.
    public var date: String
    public var hours: [AvailabilityHours]
    public init(date: String, hours: [AvailabilityHours]) {
        self.date = date
        self.hours = hours
    }
}

/// A coach's availability as the wire and the store carry it (Protocol/README "Availability and free slots").
/// `weekly` is keyed by `mon` … `sun`; a weekday absent or empty is a day off.
public struct AvailabilityView: Codable, Sendable, Equatable {
    public var timeZone: String
    public var weekly: [String: [AvailabilityHours]]
    public var exceptions: [AvailabilityException]
    public var bufferBeforeMinutes: Int
    public var bufferAfterMinutes: Int
    public var minimumNoticeMinutes: Int
    /// Nil: no cap.
    public var maxSessionsPerDay: Int?

    public init(timeZone: String, weekly: [String: [AvailabilityHours]], exceptions: [AvailabilityException],
                bufferBeforeMinutes: Int, bufferAfterMinutes: Int, minimumNoticeMinutes: Int, maxSessionsPerDay: Int?) {
        self.timeZone = timeZone
        self.weekly = weekly
        self.exceptions = exceptions
        self.bufferBeforeMinutes = bufferBeforeMinutes
        self.bufferAfterMinutes = bufferAfterMinutes
        self.minimumNoticeMinutes = minimumNoticeMinutes
        self.maxSessionsPerDay = maxSessionsPerDay
    }

    enum CodingKeys: String, CodingKey {
        case weekly, exceptions
        case timeZone = "time_zone"
        case bufferBeforeMinutes = "buffer_before_minutes"
        case bufferAfterMinutes = "buffer_after_minutes"
        case minimumNoticeMinutes = "minimum_notice_minutes"
        case maxSessionsPerDay = "max_sessions_per_day"
    }
}

/// `availability.set` (a coach): replaces the coach's availability whole. Absent numbers read as 0 (no cap for
/// `max_sessions_per_day`); absent `weekly` or `exceptions` as none.
public struct AvailabilitySetCommand: Codable, Sendable, Equatable {
    public var timeZone: String?
    public var weekly: [String: [AvailabilityHours]]?
    public var exceptions: [AvailabilityException]?
    public var bufferBeforeMinutes: Int64?
    public var bufferAfterMinutes: Int64?
    public var minimumNoticeMinutes: Int64?
    public var maxSessionsPerDay: Int64?

    public init(timeZone: String?, weekly: [String: [AvailabilityHours]]? = nil, exceptions: [AvailabilityException]? = nil,
                bufferBeforeMinutes: Int64? = nil, bufferAfterMinutes: Int64? = nil, minimumNoticeMinutes: Int64? = nil,
                maxSessionsPerDay: Int64? = nil) {
        self.timeZone = timeZone
        self.weekly = weekly
        self.exceptions = exceptions
        self.bufferBeforeMinutes = bufferBeforeMinutes
        self.bufferAfterMinutes = bufferAfterMinutes
        self.minimumNoticeMinutes = minimumNoticeMinutes
        self.maxSessionsPerDay = maxSessionsPerDay
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case weekly, exceptions
        case timeZone = "time_zone"
        case bufferBeforeMinutes = "buffer_before_minutes"
        case bufferAfterMinutes = "buffer_after_minutes"
        case minimumNoticeMinutes = "minimum_notice_minutes"
        case maxSessionsPerDay = "max_sessions_per_day"
    }
}

extension AvailabilitySetCommand: SocketCommandBody {
    public static let type = "availability.set"

    public func checkRanges() throws(APIError) {
        try WireRange.check(bufferBeforeMinutes, in: WireRange.count, field: "buffer_before_minutes")
        try WireRange.check(bufferAfterMinutes, in: WireRange.count, field: "buffer_after_minutes")
        try WireRange.check(minimumNoticeMinutes, in: WireRange.count, field: "minimum_notice_minutes")
        try WireRange.check(maxSessionsPerDay, in: WireRange.count, field: "max_sessions_per_day")
    }
}

extension AvailabilitySetCommand: KnownFields {
    public static let fieldNames = Set(CodingKeys.allCases.map(\.stringValue))
}

/// `availability.get` (a coach): the coach's availability, or `{"set": false}` when none was saved.
public struct AvailabilityGetCommand: Codable, Sendable, Equatable {
    public init() {}
}

extension AvailabilityGetCommand: SocketCommandBody {
    public static let type = "availability.get"
}

extension AvailabilityGetCommand: KnownFields {
    public static let fieldNames: Set<String> = []
}

/// `availability.slots` (the coach or the client of `thread_id`): the free starts of a session of
/// `duration_minutes` in [`from`, `to`), every `step_minutes`, shown in `time_zone` (default: the asker's).
public struct AvailabilitySlotsCommand: Codable, Sendable, Equatable {
    public var threadId: String?
    public var durationMinutes: Int64?
    public var from: Int64?
    public var to: Int64?
    public var stepMinutes: Int64?
    public var timeZone: String?

    public init(threadId: String?, durationMinutes: Int64?, from: Int64?, to: Int64?, stepMinutes: Int64? = nil,
                timeZone: String? = nil) {
        self.threadId = threadId
        self.durationMinutes = durationMinutes
        self.from = from
        self.to = to
        self.stepMinutes = stepMinutes
        self.timeZone = timeZone
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case from, to
        case threadId = "thread_id"
        case durationMinutes = "duration_minutes"
        case stepMinutes = "step_minutes"
        case timeZone = "time_zone"
    }
}

extension AvailabilitySlotsCommand: SocketCommandBody {
    public static let type = "availability.slots"

    public func checkRanges() throws(APIError) {
        try WireRange.check(durationMinutes, in: WireRange.minutes, field: "duration_minutes")
        try WireRange.check(from, in: WireRange.time, field: "from")
        try WireRange.check(to, in: WireRange.time, field: "to")
        try WireRange.check(stepMinutes, in: WireRange.minutes, field: "step_minutes")
    }
}

extension AvailabilitySlotsCommand: KnownFields {
    public static let fieldNames = Set(CodingKeys.allCases.map(\.stringValue))
}

/// One free slot: Unix seconds, and its start as a local time in the reply's zone (`2026-03-09T09:00-04:00`).
public struct FreeSlotView: Codable, Sendable, Equatable {
    public var start: Int64
    public var end: Int64
    public var local: String
    public init(start: Int64, end: Int64, local: String) {
        self.start = start
        self.end = end
        self.local = local
    }
}

/// The reply to `availability.slots`. `availability_set` false: the coach has saved no availability (no slots).
/// `truncated`: more free slots than the 500 a reply carries (ask again from the last one's end).
public struct FreeSlotsView: Codable, Sendable, Equatable {
    public var availabilitySet: Bool
    public var truncated: Bool
    public var timeZone: String
    public var coachTimeZone: String?
    public var slots: [FreeSlotView]
    public init(availabilitySet: Bool, truncated: Bool = false, timeZone: String, coachTimeZone: String?,
                slots: [FreeSlotView]) {
        self.availabilitySet = availabilitySet
        self.truncated = truncated
        self.timeZone = timeZone
        self.coachTimeZone = coachTimeZone
        self.slots = slots
    }
    enum CodingKeys: String, CodingKey {
        case slots, truncated
        case availabilitySet = "availability_set"
        case timeZone = "time_zone"
        case coachTimeZone = "coach_time_zone"
    }
}
