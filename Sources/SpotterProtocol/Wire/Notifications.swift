#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// Notification preferences (issue 28, item 4): which kinds of push a person wants, threads they muted, and the
// hours when pushes must not make a sound. What each setting does to each kind is `NotificationPolicy`'s
// (SpotterCore) and Protocol/README.md's "Preferences".

/// `GET /v1/me/notifications`, and the answer to `PUT`: the settings in force. `quiet_hours` is absent when there
/// are none; `muted_threads` lists only mutes still running; `time_zone` is the user's (the zone quiet hours are
/// read in; change it with `PUT /v1/me`).
public struct NotificationSettings: Codable, Sendable, Equatable {
    public var messages: Bool
    public var sessions: Bool
    public var reminders: Bool
    public var quietHours: QuietHoursBody?
    public var mutedThreads: [ThreadMuteBody]
    public var timeZone: String
    /// Where reminders go: a non-empty subset of `push`, `email`, `sms`, in that order.
    public var reminderChannels: [String]
    public init(messages: Bool, sessions: Bool, reminders: Bool, quietHours: QuietHoursBody?, mutedThreads: [ThreadMuteBody],
                timeZone: String, reminderChannels: [String] = ["push"]) {
        self.messages = messages
        self.sessions = sessions
        self.reminders = reminders
        self.quietHours = quietHours
        self.mutedThreads = mutedThreads
        self.timeZone = timeZone
        self.reminderChannels = reminderChannels
    }
    enum CodingKeys: String, CodingKey {
        case messages, sessions, reminders
        case quietHours = "quiet_hours"
        case mutedThreads = "muted_threads"
        case timeZone = "time_zone"
        case reminderChannels = "reminder_channels"
    }
}

/// Quiet hours as wall-clock times in the user's zone, `"HH:MM"` (24-hour): from `start` up to `end`, across
/// midnight when `end` is earlier (`22:00`–`07:00`).
public struct QuietHoursBody: Codable, Sendable, Equatable {
    public var start: String?
    public var end: String?
    public init(start: String?, end: String?) {
        self.start = start
        self.end = end
    }
    enum CodingKeys: String, CodingKey, CaseIterable { case start, end }
}

/// One muted thread: no message pushes from it until `until` (Unix seconds), or until unmuted when `until` is null.
public struct ThreadMuteBody: Codable, Sendable, Equatable {
    public var threadId: String?
    public var until: Int64?
    public init(threadId: String?, until: Int64?) {
        self.threadId = threadId
        self.until = until
    }
    enum CodingKeys: String, CodingKey, CaseIterable {
        case threadId = "thread_id"
        case until
    }
    // `until` is written even when null ("until unmuted"), so that a reader sees the mute has no end.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(threadId, forKey: .threadId)
        try container.encode(until, forKey: .until)
    }
}

/// `PUT /v1/me/notifications`: any of the fields; those absent keep their value. `quiet_hours: null` removes the
/// quiet hours; `muted_threads` replaces the whole list (`[]` unmutes every thread).
public struct NotificationSettingsRequest: Codable, Sendable, Equatable {
    public var messages: Bool?
    public var sessions: Bool?
    public var reminders: Bool?
    /// nil: not given; `.some(nil)`: null, remove them.
    public var quietHours: QuietHoursBody??
    public var mutedThreads: [ThreadMuteBody]?
    /// Where reminders go: `push`, `email`, `sms`, each at most once, at least one.
    public var reminderChannels: [String]?
    public init(messages: Bool? = nil, sessions: Bool? = nil, reminders: Bool? = nil, quietHours: QuietHoursBody?? = nil,
                mutedThreads: [ThreadMuteBody]? = nil, reminderChannels: [String]? = nil) {
        self.messages = messages
        self.sessions = sessions
        self.reminders = reminders
        self.quietHours = quietHours
        self.mutedThreads = mutedThreads
        self.reminderChannels = reminderChannels
    }
    enum CodingKeys: String, CodingKey, CaseIterable {
        case messages, sessions, reminders
        case quietHours = "quiet_hours"
        case mutedThreads = "muted_threads"
        case reminderChannels = "reminder_channels"
    }
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        messages = try container.decodeIfPresent(Bool.self, forKey: .messages)
        sessions = try container.decodeIfPresent(Bool.self, forKey: .sessions)
        reminders = try container.decodeIfPresent(Bool.self, forKey: .reminders)
        if container.contains(.quietHours) {
            quietHours = .some(try container.decodeNil(forKey: .quietHours) ? nil : try container.decode(QuietHoursBody.self, forKey: .quietHours))
        } else {
            quietHours = nil
        }
        mutedThreads = try container.decodeIfPresent([ThreadMuteBody].self, forKey: .mutedThreads)
        reminderChannels = try container.decodeIfPresent([String].self, forKey: .reminderChannels)
    }
}

extension NotificationSettingsRequest: KnownFields {
    public static let fieldNames = Set(CodingKeys.allCases.map(\.stringValue))
    public static var nestedObjects: [String: any KnownFields.Type] {
        ["quiet_hours": QuietHoursBody.self, "muted_threads": ThreadMuteBody.self]
    }
}
extension QuietHoursBody: KnownFields {
    public static let fieldNames = Set(CodingKeys.allCases.map(\.stringValue))
}
extension ThreadMuteBody: KnownFields {
    public static let fieldNames = Set(CodingKeys.allCases.map(\.stringValue))
}
