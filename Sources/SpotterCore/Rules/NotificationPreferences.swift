import SpotterProtocol

/// Hours when pushes make no sound, as minutes after local midnight in the user's zone: from `start` up to, not
/// including, `end`; across midnight when `end < start` (22:00–07:00). Never empty, never the whole day.
public struct QuietHours: Sendable, Hashable {
    public var start: Int
    public var end: Int

    public init?(start: Int, end: Int) {
        guard (0..<Self.minutesPerDay).contains(start), (0..<Self.minutesPerDay).contains(end), start != end else { return nil }
        self.start = start
        self.end = end
    }

    public static let minutesPerDay = 24 * 60

    /// Whether the wall-clock minute `minute` (0–1439) is quiet.
    public func contains(minuteOfDay minute: Int) -> Bool {
        start < end ? (start..<end).contains(minute) : minute >= start || minute < end
    }

    /// `"HH:MM"` of a minute of the day.
    public static func text(_ minute: Int) -> String {
        let hours = minute / 60, minutes = minute % 60
        return (hours < 10 ? "0" : "") + String(hours) + ":" + (minutes < 10 ? "0" : "") + String(minutes)
    }

    public var body: QuietHoursBody { QuietHoursBody(start: Self.text(start), end: Self.text(end)) }
}

/// A muted thread: no message pushes from it while `now < until` (no end when nil).
public struct ThreadMute: Sendable, Hashable {
    public var threadID: String
    public var until: Int64?

    public init(threadID: String, until: Int64?) {
        self.threadID = threadID
        self.until = until
    }

    public func isActive(at now: Int64) -> Bool { until.map { now < $0 } ?? true }
}

/// Where a session reminder (`starting_soon`) goes (issue 28, item 7): pushed to the person's devices, or sent off the
/// app by email or SMS through the server's gateways.
public enum ReminderChannel: String, Sendable, Hashable, CaseIterable, Comparable {
    case push
    case email
    case sms

    /// The order they are listed in on the wire: push, email, sms.
    public static func < (a: ReminderChannel, b: ReminderChannel) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }

    /// A stored list (`"push,email"`); unknown names (a newer server's) are left out, and an empty result is the
    /// default, push.
    public static func stored(_ text: String?) -> Set<ReminderChannel> {
        let read = Set((text ?? "").split(separator: ",").compactMap { ReminderChannel(rawValue: String($0)) })
        return read.isEmpty ? [.push] : read
    }

    /// The list as stored and shown: in wire order.
    public static func names(_ channels: Set<ReminderChannel>) -> [String] { channels.sorted().map(\.rawValue) }
}

/// What a person wants pushed: the kinds they keep on, threads they muted, their quiet hours, and where reminders go.
/// The defaults (no row stored) are everything on, nothing muted, no quiet hours, reminders by push.
public struct NotificationPreferences: Sendable, Equatable {
    public var messages = true
    public var sessions = true
    public var reminders = true
    public var quietHours: QuietHours?
    /// Mutes, in the order they were given.
    public var mutedThreads: [ThreadMute] = []
    /// Where reminders go when `reminders` is on: never empty. A person with no device gets them by email or SMS
    /// even when this says only push (`ReminderRoute`).
    public var reminderChannels: Set<ReminderChannel> = [.push]

    public init() {}

    public init(messages: Bool, sessions: Bool, reminders: Bool, quietHours: QuietHours?, mutedThreads: [ThreadMute],
                reminderChannels: Set<ReminderChannel> = [.push]) {
        self.messages = messages
        self.sessions = sessions
        self.reminders = reminders
        self.quietHours = quietHours
        self.mutedThreads = mutedThreads
        self.reminderChannels = reminderChannels
    }

    /// Whether a reminder is pushed to the person's devices (`reminders` on and `push` among the channels).
    public var remindsByPush: Bool { reminders && reminderChannels.contains(.push) }

    /// A checked `PUT /v1/me/notifications`: the fields given, each replacing the stored one.
    public struct Change: Sendable, Equatable {
        public var messages: Bool?
        public var sessions: Bool?
        public var reminders: Bool?
        /// nil: unchanged; `.some(nil)`: removed.
        public var quietHours: QuietHours??
        /// nil: unchanged; else the whole new list.
        public var mutedThreads: [ThreadMute]?
        /// nil: unchanged; else the new set (never empty).
        public var reminderChannels: Set<ReminderChannel>?

        public init(messages: Bool? = nil, sessions: Bool? = nil, reminders: Bool? = nil, quietHours: QuietHours?? = nil,
                    mutedThreads: [ThreadMute]? = nil, reminderChannels: Set<ReminderChannel>? = nil) {
            self.messages = messages
            self.sessions = sessions
            self.reminders = reminders
            self.quietHours = quietHours
            self.mutedThreads = mutedThreads
            self.reminderChannels = reminderChannels
        }
    }

    /// These preferences with `change` applied.
    public func applying(_ change: Change) -> NotificationPreferences {
        var next = self
        if let messages = change.messages { next.messages = messages }
        if let sessions = change.sessions { next.sessions = sessions }
        if let reminders = change.reminders { next.reminders = reminders }
        if let quietHours = change.quietHours { next.quietHours = quietHours }
        if let mutes = change.mutedThreads { next.mutedThreads = mutes }
        if let channels = change.reminderChannels { next.reminderChannels = channels }
        return next
    }

    /// The wire view at `now`: mutes that have ended are left out.
    public func settings(timeZone: String, now: Int64) -> NotificationSettings {
        NotificationSettings(messages: messages, sessions: sessions, reminders: reminders, quietHours: quietHours?.body,
                             mutedThreads: mutedThreads.filter { $0.isActive(at: now) }.map { ThreadMuteBody(threadId: $0.threadID, until: $0.until) },
                             timeZone: timeZone, reminderChannels: ReminderChannel.names(reminderChannels))
    }
}
