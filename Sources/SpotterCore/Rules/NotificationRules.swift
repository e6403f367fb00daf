import SpotterProtocol

/// What `PUT /v1/me/notifications` may say. Whether each muted thread is one of the user's is the store's to check
/// (it reads the threads in the same transaction).
///
/// Guarantees: pure (the time is given); every refusal is an `APIError` naming the wire field.
public enum NotificationRules {
    /// Threads one user may mute: more than a coach's clients are likely to be, and a bound on what one request stores.
    public static let maxMutedThreads = 500
    /// A thread id's bytes (ids are UUIDs, 36).
    public static let maxThreadIDBytes = 64
    /// The furthest a mute may end: a year and a day from now (a mute with no end is `until: null`).
    public static let maxMuteSeconds: Int64 = 366 * 24 * 60 * 60

    public static func check(_ request: NotificationSettingsRequest, now: Int64) throws(APIError) -> NotificationPreferences.Change {
        var change = NotificationPreferences.Change(messages: request.messages, sessions: request.sessions,
                                                    reminders: request.reminders)
        if let quietHours = request.quietHours {
            change.quietHours = .some(try quietHours.map { body throws(APIError) in try self.quietHours(body) })
        }
        if let mutes = request.mutedThreads { change.mutedThreads = try mutedThreads(mutes, now: now) }
        if let channels = request.reminderChannels { change.reminderChannels = try reminderChannels(channels) }
        return change
    }

    /// `push`, `email` and `sms`, each at most once; at least one (`reminders: false` is how to have none).
    static func reminderChannels(_ names: [String]) throws(APIError) -> Set<ReminderChannel> {
        guard !names.isEmpty else { throw APIError(.outOfRange, field: "reminder_channels") }
        var channels = Set<ReminderChannel>()
        for name in names {
            guard let channel = ReminderChannel(rawValue: name), channels.insert(channel).inserted else {
                throw APIError(.badRequest, field: "reminder_channels")
            }
        }
        return channels
    }

    /// `start` and `end` as `"HH:MM"` (00:00–23:59), different from each other.
    static func quietHours(_ body: QuietHoursBody) throws(APIError) -> QuietHours {
        guard let rawStart = body.start else { throw APIError(.missingField, field: "quiet_hours.start") }
        guard let rawEnd = body.end else { throw APIError(.missingField, field: "quiet_hours.end") }
        guard let start = minute(rawStart) else { throw APIError(.badRequest, field: "quiet_hours.start") }
        guard let end = minute(rawEnd) else { throw APIError(.badRequest, field: "quiet_hours.end") }
        // Equal times would mean either never or always: neither is quiet hours.
        guard let hours = QuietHours(start: start, end: end) else { throw APIError(.outOfRange, field: "quiet_hours.end") }
        return hours
    }

    /// Minutes after midnight of `"HH:MM"`, two digits each, or nil.
    static func minute(_ text: String) -> Int? {
        let bytes = Array(text.utf8)
        guard bytes.count == 5, bytes[2] == UInt8(ascii: ":"),
              [0, 1, 3, 4].allSatisfy({ (0x30...0x39).contains(bytes[$0]) }) else { return nil }
        let digit = { (index: Int) in Int(bytes[index] - 0x30) }
        let hours = digit(0) * 10 + digit(1), minutes = digit(3) * 10 + digit(4)
        guard hours < 24, minutes < 60 else { return nil }
        return hours * 60 + minutes
    }

    /// At most 500, each thread once, each `until` null or after `now` and within a year and a day.
    static func mutedThreads(_ mutes: [ThreadMuteBody], now: Int64) throws(APIError) -> [ThreadMute] {
        guard mutes.count <= maxMutedThreads else { throw APIError(.outOfRange, field: "muted_threads") }
        var seen = Set<String>()
        var result: [ThreadMute] = []
        for mute in mutes {
            guard let id = mute.threadId, !id.isEmpty else { throw APIError(.missingField, field: "muted_threads.thread_id") }
            guard id.utf8.count <= maxThreadIDBytes, id.utf8.allSatisfy({ (0x21...0x7E).contains($0) }),
                  seen.insert(id).inserted else { throw APIError(.badRequest, field: "muted_threads.thread_id") }
            if let until = mute.until, until <= now || until > now + maxMuteSeconds {
                throw APIError(.outOfRange, field: "muted_threads.until")
            }
            result.append(ThreadMute(threadID: id, until: mute.until))
        }
        return result
    }
}
