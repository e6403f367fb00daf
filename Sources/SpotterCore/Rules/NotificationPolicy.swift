import Foundation

/// What a person's notification preferences do to one push: the one place the rules live, for whatever decides
/// pushes (Protocol/README.md, "Preferences", is this table in words).
///
/// | kind | its category off | its thread muted | in quiet hours |
/// |---|---|---|---|
/// | `message` (text, meal card, attachment, system message) | skipped | skipped | quiet |
/// | `session` (invite, accepted, declined, alternative, reschedule, cancelled, needs resolution) | skipped | pushed | quiet |
/// | `reminder` (`starting_soon`, `coach_joined`: the session is now) | skipped | pushed | **alert** |
///
/// A reminder is also skipped when the person left `push` out of their `reminder_channels` (they get it by email or
/// SMS instead: `ReminderRoute`).
///
/// A mute is of a conversation, so it silences its messages, not the sessions booked in it. Quiet hours never
/// drop a push: it arrives without sound or banner, and the badge counts it. A reminder ignores them: a session
/// starting in 10 minutes is not a message, and the person booked it.
///
/// Guarantees: pure; the time and the zone are given.
public enum NotificationPolicy {
    public enum Kind: Sendable, Equatable {
        case message
        case session
        case reminder
    }

    public enum Delivery: Sendable, Equatable {
        /// Shown, with sound.
        case alert
        /// Shown without sound or banner (APNs `interruption-level: passive`, no sound); the badge still counts it.
        case quiet
        /// Not pushed.
        case skip
    }

    /// How a push of `kind` about `threadID` reaches a person with `preferences` at `now` in `zone`.
    public static func delivery(_ kind: Kind, threadID: String?, _ preferences: NotificationPreferences, now: Int64,
                                zone: TimeZone) -> Delivery {
        switch kind {
        case .message:
            guard preferences.messages else { return .skip }
            if let threadID, preferences.mutedThreads.contains(where: { $0.threadID == threadID && $0.isActive(at: now) }) {
                return .skip
            }
        case .session:
            guard preferences.sessions else { return .skip }
        case .reminder:
            return preferences.remindsByPush ? .alert : .skip
        }
        guard let quiet = preferences.quietHours else { return .alert }
        return quiet.contains(minuteOfDay: minuteOfDay(now, zone)) ? .quiet : .alert
    }

    /// The wall-clock minute (0–1439) at `now` in `zone`, daylight saving included.
    public static func minuteOfDay(_ now: Int64, _ zone: TimeZone) -> Int {
        let local = now + Int64(zone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(now))))
        let secondOfDay = ((local % 86_400) + 86_400) % 86_400
        return Int(secondOfDay / 60)
    }
}
