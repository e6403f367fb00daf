import Testing
import SpotterCore
@testable import SpotterPorts

/// Notification preferences' SQL (`AccountStore+Notifications`) on every engine: defaults, partial changes, the
/// muted threads replaced as a list and only of the user's own threads.
@Suite("AccountStore: notification preferences")
struct AccountNotificationTests {
    @Test("defaults, partial changes, mutes replaced in order, only the user's threads", arguments: AccountsBackend.allCases)
    func preferences(_ backend: AccountsBackend) throws {
        let f = try AccountsFixture(backend)
        defer { f.close() }
        let accounts = f.accounts
        try accounts.createUser(id: "k", role: "coach", fullName: "K", email: "k@x.test", phone: nil, passwordHash: nil, now: 1)
        for client in ["c1", "c2", "c3"] {
            try accounts.createUser(id: client, role: "client", fullName: client, email: "\(client)@x.test", phone: nil,
                                    passwordHash: nil, now: 1)
            try accounts.createLink(clientID: client, coachID: "k", threadID: "t-\(client)", now: 2)
        }
        #expect(try accounts.notificationPreferences(userID: "k") == NotificationPreferences())

        let quiet = QuietHours(start: 22 * 60, end: 7 * 60)
        var change = NotificationPreferences.Change(messages: false, quietHours: .some(quiet),
                                                    mutedThreads: [ThreadMute(threadID: "t-c2", until: 500), ThreadMute(threadID: "t-c1", until: nil)])
        guard case .saved(let saved) = try accounts.updateNotificationPreferences(userID: "k", change, now: 10) else {
            Issue.record("not saved")
            return
        }
        let expected = NotificationPreferences(messages: false, sessions: true, reminders: true, quietHours: quiet,
                                               mutedThreads: [ThreadMute(threadID: "t-c2", until: 500), ThreadMute(threadID: "t-c1", until: nil)])
        #expect(saved == expected)
        #expect(try accounts.notificationPreferences(userID: "k") == expected)

        // A change of one field keeps the others; null quiet hours remove them; a new list replaces the mutes.
        change = NotificationPreferences.Change(sessions: false, quietHours: .some(nil))
        _ = try accounts.updateNotificationPreferences(userID: "k", change, now: 11)
        #expect(try accounts.notificationPreferences(userID: "k") == NotificationPreferences(
            messages: false, sessions: false, reminders: true, quietHours: nil, mutedThreads: expected.mutedThreads))
        _ = try accounts.updateNotificationPreferences(userID: "k", .init(mutedThreads: [ThreadMute(threadID: "t-c3", until: 900)]), now: 12)
        #expect(try accounts.notificationPreferences(userID: "k").mutedThreads == [ThreadMute(threadID: "t-c3", until: 900)])

        // Another user's thread, or none: nothing saved at all.
        let refused = try accounts.updateNotificationPreferences(
            userID: "c1", .init(reminders: false, mutedThreads: [ThreadMute(threadID: "t-c1", until: nil), ThreadMute(threadID: "t-c2", until: nil)]),
            now: 13)
        #expect(refused == .notParticipant(threadID: "t-c2"))
        #expect(try accounts.notificationPreferences(userID: "c1") == NotificationPreferences())
        #expect(try accounts.updateNotificationPreferences(userID: "c1", .init(mutedThreads: [ThreadMute(threadID: "nope", until: nil)]), now: 14)
            == .notParticipant(threadID: "nope"))
        guard case .saved(let client) = try accounts.updateNotificationPreferences(
            userID: "c1", .init(mutedThreads: [ThreadMute(threadID: "t-c1", until: nil)]), now: 15) else {
            Issue.record("the client's own thread was refused")
            return
        }
        #expect(client.mutedThreads == [ThreadMute(threadID: "t-c1", until: nil)])
        #expect(try accounts.notificationPreferences(userID: "k").mutedThreads.count == 1, "the coach's mutes are the coach's")
    }
}
