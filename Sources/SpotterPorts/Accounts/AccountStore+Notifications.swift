import SpotterCore

/// What a change of notification preferences did.
public enum NotificationUpdate: Sendable, Equatable {
    /// Saved: the preferences now in force (mutes that have ended included until the next change).
    case saved(NotificationPreferences)
    /// `threadID` is not a thread of the user (nor was it): nothing was saved.
    case notParticipant(threadID: String)
}

/// Notification preferences (`notificationPreference`, `threadMute`): one row per user who changed them, none
/// for the defaults; the muted threads in the order given.
extension AccountStore {
    /// The user's preferences (the defaults when they never changed them).
    public func notificationPreferences(userID: String) throws -> NotificationPreferences {
        try read { db in try Self.notificationPreferences(db, userID: userID) }
    }

    /// Applies `change` to the stored preferences in one transaction. A new list of muted threads replaces the old
    /// one, and every thread in it must be one the user is (or was) a participant of, as coach or client.
    public func updateNotificationPreferences(userID: String, _ change: NotificationPreferences.Change,
                                              now: Int64) throws -> NotificationUpdate {
        try write { db in
            let next = try Self.notificationPreferences(db, userID: userID).applying(change)
            if let mutes = change.mutedThreads {
                for mute in mutes {
                    let theirs = try db.fetchOne("SELECT 1 FROM thread WHERE id = ? AND (coachId = ? OR clientId = ?)",
                                                 [mute.threadID, userID, userID]) != nil
                    if !theirs { return .notParticipant(threadID: mute.threadID) }
                }
                try db.execute("DELETE FROM threadMute WHERE userId = ?", [userID])
                for (index, mute) in mutes.enumerated() {
                    try db.execute("INSERT INTO threadMute (userId, threadId, mutedUntil, ordinal) VALUES (?, ?, ?, ?)",
                                   [userID, mute.threadID, mute.until, index])
                }
            }
            try db.execute("""
                INSERT INTO notificationPreference (userId, messages, sessions, reminders, quietStart, quietEnd, updatedAt,
                                                    reminderChannels)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (userId) DO UPDATE SET
                    messages = excluded.messages, sessions = excluded.sessions, reminders = excluded.reminders,
                    quietStart = excluded.quietStart, quietEnd = excluded.quietEnd, updatedAt = excluded.updatedAt,
                    reminderChannels = excluded.reminderChannels
                """, [userID, next.messages, next.sessions, next.reminders, next.quietHours?.start, next.quietHours?.end, now,
                      ReminderChannel.names(next.reminderChannels).joined(separator: ",")])
            return .saved(next)
        }
    }

    private static func notificationPreferences(_ db: any SQLDatabase, userID: String) throws -> NotificationPreferences {
        var preferences = NotificationPreferences()
        if let row = try db.fetchOne("SELECT * FROM notificationPreference WHERE userId = ?", [userID]) {
            preferences.messages = row["messages"]
            preferences.sessions = row["sessions"]
            preferences.reminders = row["reminders"]
            let start: Int? = row["quietStart"], end: Int? = row["quietEnd"]
            preferences.quietHours = start.flatMap { start in end.flatMap { QuietHours(start: start, end: $0) } }
            preferences.reminderChannels = ReminderChannel.stored(row["reminderChannels"])
        }
        preferences.mutedThreads = try db.fetchAll(
            "SELECT threadId, mutedUntil FROM threadMute WHERE userId = ? ORDER BY ordinal", [userID]
        ).map { ThreadMute(threadID: $0["threadId"], until: $0["mutedUntil"]) }
        return preferences
    }
}
