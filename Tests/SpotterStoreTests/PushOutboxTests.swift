import Testing
@testable import SpotterCore
import SpotterProtocol
@testable import SpotterPorts

/// The push outbox's SQL (`AccountStore+PushOutbox`) on every engine: taking a batch in exactly once, coalescing a
/// thread's messages per device, the bound per platform, badge updates after a read, claiming, writing back, a
/// crash in flight, purging. Times are milliseconds except `expiresAt` (seconds). (The server's PushTests cover
/// the same end to end; these pin the edges.)
@Suite("AccountStore: push outbox")
struct PushOutboxTests {
    static let intake = PushIntake(coalesceMilliseconds: 30_000, queueLimit: 100)

    /// Users `a` and `b`; `a` has devices `d1` (FCM), `d2` (APNs) and `d3` (FCM).
    static func devices(_ accounts: AccountStore) throws {
        try AccountDeviceTests.twoUsers(accounts)
        _ = try AccountDeviceTests.register(accounts, "d1", user: "a", session: "sa", AccountDeviceTests.fcm("t1"), now: 1)
        _ = try AccountDeviceTests.register(accounts, "d2", user: "a", session: "sa",
                                            PushAddress(platform: .apns, token: "ab12", topic: "com.example", environment: "sandbox"),
                                            now: 1)
        _ = try AccountDeviceTests.register(accounts, "d3", user: "a", session: "sa", AccountDeviceTests.fcm("t3"), now: 1)
    }

    /// The push of record `pos` for one device.
    static func entry(_ pos: Int64, _ kind: PlannedPush.Kind = .message, device: String = "d1", platform: PushAddress.Platform = .fcm,
                      thread: String = "T1", language: Language = .english, badge: Int = 1, expires: Int64 = 1_000_000) -> PushEntry {
        let sender: String? = kind == .message ? "Carter" : nil
        let title = switch kind {
        case .message: PushWords(language).newMessages(1, from: sender)
        case .badge: ""
        case .session, .reminder: "Session \(pos)"
        }
        return PushEntry(push: PlannedPush(userID: "a", pos: pos, kind: kind, title: title, body: "body \(pos)", quiet: false,
                                           threadID: thread, badge: badge, data: ["thread_id": thread, "kind": kind.rawValue],
                                           expiresAt: expires, urgent: kind != .badge, sender: sender, language: language),
                         deviceID: device, platform: platform)
    }

    @discardableResult
    static func take(_ accounts: AccountStore, _ entries: [PushEntry], through: Int64? = nil, now: Int64,
                     cursor: String = "push", _ intake: PushIntake = intake) throws -> PushIntakeResult {
        try accounts.enqueuePushes(entries, cursor: cursor, handledThrough: through ?? entries.map(\.push.pos).max() ?? 0,
                                   now: now, intake)
    }

    static func ids(_ f: AccountsFixture, _ status: String = "pending") throws -> [String] {
        try f.column("SELECT id FROM pushOutbox WHERE status = '\(status)' ORDER BY id")
    }

    static func value<Value: SQLColumnValue>(_ f: AccountsFixture, _ column: String, _ id: String) throws -> Value {
        let values: [Value] = try f.column("SELECT \(column) FROM pushOutbox WHERE id = '\(id)'")
        return try #require(values.first)
    }

    @Test("a batch handed over again makes nothing new; one straddling the cursor takes the newer records only",
          arguments: AccountsBackend.allCases)
    func exactlyOnce(_ backend: AccountsBackend) throws {
        let f = try AccountsFixture(backend)
        defer { f.close() }
        let accounts = f.accounts
        try Self.devices(accounts)
        #expect(try accounts.pushHandledThrough("push") == 0)
        let batch = [Self.entry(1, .session), Self.entry(2, thread: "T2"), Self.entry(2, device: "d3", thread: "T2")]
        #expect(try Self.take(accounts, batch, now: 1_000).queued == 3)
        #expect(try accounts.pushHandledThrough("push") == 2)
        let again = try Self.take(accounts, batch, now: 2_000)
        #expect(again == PushIntakeResult(), "nothing queued, coalesced or dropped")
        #expect(try Self.ids(f) == ["pos:1:d1", "pos:2:d1", "pos:2:d3"])
        #expect(try Self.value(f, "count", "pos:2:d1") as Int64 == 1)
        // Records 2…4, the cursor at 2: only 3 and 4 come in.
        let straddling = [Self.entry(2, .session, thread: "T3"), Self.entry(3, .session), Self.entry(4, .session, thread: "T4")]
        #expect(try Self.take(accounts, straddling, now: 3_000).queued == 2)
        #expect(try Self.ids(f) == ["pos:1:d1", "pos:2:d1", "pos:2:d3", "pos:3:d1", "pos:4:d1"])
        // The cursor never moves back, and records with no pushes still move it.
        try Self.take(accounts, [], through: 3, now: 4_000)
        #expect(try accounts.pushHandledThrough("push") == 4)
        try Self.take(accounts, [], through: 9, now: 4_000)
        #expect(try accounts.pushHandledThrough("push") == 9)
        #expect(try accounts.pushHandledThrough("other") == 0)
        #expect(try accounts.pendingPushes() == [.fcm: 5])
    }

    @Test("messages pile up in the pending push of their thread and device, counted once each",
          arguments: AccountsBackend.allCases)
    func coalescing(_ backend: AccountsBackend) throws {
        let f = try AccountsFixture(backend)
        defer { f.close() }
        let accounts = f.accounts
        try Self.devices(accounts)
        #expect(try Self.take(accounts, [Self.entry(1)], now: 1_000).queued == 1)
        let more = try Self.take(accounts, [Self.entry(2, badge: 2), Self.entry(3, badge: 3), Self.entry(3, badge: 3)], now: 1_500)
        #expect(more.queued == 0 && more.coalesced >= 2)
        // Another consumer's cursor handing record 2 again: not counted a second time.
        try Self.take(accounts, [Self.entry(2, badge: 2)], now: 1_600, cursor: "replay")
        // Not across threads, nor devices.
        #expect(try Self.take(accounts, [Self.entry(4, thread: "T2"), Self.entry(4, device: "d3")], now: 1_700).queued == 2)
        #expect(try Self.ids(f) == ["pos:1:d1", "pos:4:d1", "pos:4:d3"])
        let claimed = try accounts.claimDuePushes(platform: .fcm, now: 1_800, limit: 10)
        let first = try #require(claimed.first { $0.message.id == "pos:1:d1" })
        #expect(first.message.alert?.title == "3 new messages from Carter" && first.message.alert?.body == "body 3")
        #expect(first.message.badge == 3 && first.message.data["count"] == "3")
        #expect(first.message.collapseKey == "T1" && first.enqueuedAt == 1_000)
        #expect(claimed.filter { $0.message.id != "pos:1:d1" }.allSatisfy { $0.message.data["count"] == nil })

        // Arabic: worded again in the receiver's language.
        try Self.take(accounts, [Self.entry(5, thread: "T9", language: .arabic)], now: 2_000)
        try Self.take(accounts, [Self.entry(6, thread: "T9", language: .arabic), Self.entry(7, thread: "T9", language: .arabic)],
                      now: 2_100)
        #expect(try Self.value(f, "title", "pos:5:d1") as String == "3 رسائل جديدة من Carter")
    }

    @Test("a message after a sent one waits for the window's end and gathers what follows; after it, none waits",
          arguments: AccountsBackend.allCases)
    func coalescingWindow(_ backend: AccountsBackend) throws {
        let f = try AccountsFixture(backend)
        defer { f.close() }
        let accounts = f.accounts
        try Self.devices(accounts)
        try Self.take(accounts, [Self.entry(1)], now: 1_000)
        #expect(try accounts.claimDuePushes(platform: .fcm, now: 1_000, limit: 10).map(\.message.id) == ["pos:1:d1"])
        try accounts.finishPushes([(id: "pos:1:d1", deviceID: "d1", .sent)], now: 2_000)
        try Self.take(accounts, [Self.entry(2)], now: 3_000)
        #expect(try Self.value(f, "notBefore", "pos:2:d1") as Int64 == 32_000)
        #expect(try accounts.claimDuePushes(platform: .fcm, now: 31_999, limit: 10).isEmpty)
        #expect(try Self.take(accounts, [Self.entry(3)], now: 4_000).coalesced == 1)
        // A session push is no message: it goes now, and starts no window.
        try Self.take(accounts, [Self.entry(4, .session)], now: 5_000)
        #expect(try accounts.claimDuePushes(platform: .fcm, now: 5_000, limit: 10).map(\.message.id) == ["pos:4:d1"])
        // Another device of the same thread has no window to wait for.
        try Self.take(accounts, [Self.entry(5, device: "d3")], now: 5_000)
        #expect(try Self.value(f, "notBefore", "pos:5:d3") as Int64 == 5_000)
        let due = try accounts.claimDuePushes(platform: .fcm, now: 32_000, limit: 10)
        #expect(due.map(\.message.id) == ["pos:5:d3", "pos:2:d1"])
        #expect(due.last?.message.alert?.title == "2 new messages from Carter")
        try accounts.finishPushes([(id: "pos:2:d1", deviceID: "d1", .sent)], now: 32_000)
        // A message in flight (claimed, not written back) opens a window from when it was due.
        try Self.take(accounts, [Self.entry(6, device: "d3")], now: 33_000)
        #expect(try Self.value(f, "notBefore", "pos:6:d3") as Int64 == 35_000)
        // Within the window of the one sent at 32 s, then after it: straight away.
        try Self.take(accounts, [Self.entry(7)], now: 40_000)
        #expect(try Self.value(f, "notBefore", "pos:7:d1") as Int64 == 62_000)
        _ = try accounts.claimDuePushes(platform: .fcm, now: 62_000, limit: 10)
        try accounts.finishPushes([(id: "pos:7:d1", deviceID: "d1", .sent)], now: 62_000)
        try Self.take(accounts, [Self.entry(8)], now: 92_001)
        #expect(try Self.value(f, "notBefore", "pos:8:d1") as Int64 == 92_001)
    }

    @Test("a full platform drops new pushes, counted; other platforms and coalescing go on", arguments: AccountsBackend.allCases)
    func queueLimit(_ backend: AccountsBackend) throws {
        let f = try AccountsFixture(backend)
        defer { f.close() }
        let accounts = f.accounts
        try Self.devices(accounts)
        let bounded = PushIntake(coalesceMilliseconds: 30_000, queueLimit: 2)
        let result = try Self.take(accounts, [Self.entry(1), Self.entry(2, .session), Self.entry(3, .session, device: "d3"),
                                              Self.entry(3, .session, device: "d2", platform: .apns)], now: 1_000, bounded)
        #expect(result.queued == 3 && result.droppedFull == [.fcm: 1])
        #expect(try accounts.pendingPushes() == [.fcm: 2, .apns: 1])
        // Full, a message still counts into its thread's waiting push.
        let more = try Self.take(accounts, [Self.entry(4), Self.entry(5, thread: "T2")], now: 1_100, bounded)
        #expect(more.coalesced == 1 && more.queued == 0 && more.droppedFull == [.fcm: 1])
        // Sent, a row frees its place.
        _ = try accounts.claimDuePushes(platform: .fcm, now: 1_200, limit: 1)
        #expect(try Self.take(accounts, [Self.entry(6, .session, device: "d3")], now: 1_300, bounded).queued == 1)
        #expect(try Self.take(accounts, [Self.entry(7, .session, device: "d3")], now: 1_300,
                              PushIntake(coalesceMilliseconds: 0, queueLimit: 0)).droppedFull == [.fcm: 1])
    }

    @Test("a read withdraws its thread's waiting messages and clears the badge only where a push was seen",
          arguments: AccountsBackend.allCases)
    func badges(_ backend: AccountsBackend) throws {
        let f = try AccountsFixture(backend)
        defer { f.close() }
        let accounts = f.accounts
        try Self.devices(accounts)
        let hour: Int64 = 3_600_000
        // Nothing pushed lately: a read sends nothing.
        #expect(try Self.take(accounts, [Self.entry(1, .badge, badge: 0)], now: 10 * hour) == PushIntakeResult())
        #expect(try Self.ids(f).isEmpty)

        // A waiting message of the thread is taken back, a badge goes instead; other threads' and devices' stay.
        try Self.take(accounts, [Self.entry(2), Self.entry(3, thread: "T2"), Self.entry(4, .session), Self.entry(2, device: "d3")],
                      now: 10 * hour)
        let read = try Self.take(accounts, [Self.entry(5, .badge, badge: 1)], now: 10 * hour + 1)
        #expect(read.withdrawn == 1 && read.queued == 1)
        #expect(try Self.ids(f) == ["pos:2:d3", "pos:3:d1", "pos:4:d1", "pos:5:d1"], "T2's message, the session and d3's stay")
        // A newer read replaces the badge still waiting.
        #expect(try Self.take(accounts, [Self.entry(6, .badge, thread: "T2", badge: 0)], now: 10 * hour + 2).withdrawn == 1)
        #expect(try Self.ids(f) == ["pos:2:d3", "pos:4:d1", "pos:6:d1"])
        let claimed = try accounts.claimDuePushes(platform: .fcm, now: 10 * hour + 2, limit: 10)
        let badge = try #require(claimed.first { $0.message.id == "pos:6:d1" })
        #expect(badge.message.alert == nil && badge.message.badge == 0 && badge.message.collapseKey == "badge")
        #expect(badge.message.category == "badge" && !badge.message.urgent)
        try accounts.finishPushes(claimed.map { (id: $0.message.id, deviceID: $0.deviceID, PushDisposition.sent) }, now: 10 * hour + 3)

        // d1 was sent a session push a moment ago: a read makes a badge with nothing to withdraw; d2 saw nothing.
        let later = try Self.take(accounts, [Self.entry(7, .badge), Self.entry(7, .badge, device: "d2", platform: .apns)],
                                  now: 10 * hour + 4)
        #expect(later.queued == 1 && later.withdrawn == 0)
        #expect(try Self.ids(f) == ["pos:7:d1"])
        // An hour after it, that push no longer counts, and a badge sent since is no visible push.
        _ = try accounts.claimDuePushes(platform: .fcm, now: 10 * hour + 4, limit: 10)
        try accounts.finishPushes([(id: "pos:7:d1", deviceID: "d1", .sent)], now: 10 * hour + 5)
        #expect(try Self.take(accounts, [Self.entry(8, .badge)], now: 11 * hour + 3).queued == 1, "the window's last moment")
        _ = try accounts.claimDuePushes(platform: .fcm, now: 11 * hour + 3, limit: 10)
        try accounts.finishPushes([(id: "pos:8:d1", deviceID: "d1", .sent)], now: 11 * hour + 3)
        #expect(try Self.take(accounts, [Self.entry(9, .badge)], now: 11 * hour + 4).queued == 0)
    }

    @Test("claims: due only, oldest first, at most the limit, once; a gone device's pushes are dropped",
          arguments: AccountsBackend.allCases)
    func claims(_ backend: AccountsBackend) throws {
        let f = try AccountsFixture(backend)
        defer { f.close() }
        let accounts = f.accounts
        try Self.devices(accounts)
        try Self.take(accounts, [Self.entry(1, .session)], now: 3_000)
        try Self.take(accounts, [Self.entry(2, .session, device: "d3"), Self.entry(3, .session, device: "d2", platform: .apns)],
                      now: 1_000)
        try Self.take(accounts, [Self.entry(4, .session)], now: 2_000)
        try Self.take(accounts, [Self.entry(5, .session)], now: 9_000)
        #expect(try accounts.claimDuePushes(platform: .fcm, now: 5_000, limit: 0).isEmpty)
        let first = try accounts.claimDuePushes(platform: .fcm, now: 5_000, limit: 2)
        #expect(first.map(\.message.id) == ["pos:2:d3", "pos:4:d1"])
        #expect(first[0].message.address == AccountDeviceTests.fcm("t3") && first[0].attempts == 0)
        #expect(try Self.value(f, "status", "pos:2:d3") as String == "sending")
        #expect(try accounts.claimDuePushes(platform: .fcm, now: 5_000, limit: 10).map(\.message.id) == ["pos:1:d1"])
        #expect(try accounts.claimDuePushes(platform: .fcm, now: 5_000, limit: 10).isEmpty)
        let apns = try accounts.claimDuePushes(platform: .apns, now: 5_000, limit: 10)
        #expect(apns.map(\.message.address.topic) == ["com.example"])
        // Due together, record order decides, not the ids' text ("pos:10" sorts before "pos:9"): a thread's
        // invite and then its cancellation share a collapse key, and the one that arrives last is what stays shown.
        try Self.take(accounts, [Self.entry(9, .session, device: "d2", platform: .apns),
                                 Self.entry(10, .session, device: "d2", platform: .apns),
                                 Self.entry(100, .session, device: "d2", platform: .apns)], now: 5_000)
        #expect(try accounts.claimDuePushes(platform: .apns, now: 5_000, limit: 10).map(\.message.id)
                == ["pos:9:d2", "pos:10:d2", "pos:100:d2"])
        // d1 goes (signed out elsewhere): its due push is dropped, not claimed.
        #expect(try accounts.deleteDevice(id: "d1", userID: "a"))
        #expect(try accounts.claimDuePushes(platform: .fcm, now: 9_000, limit: 10).isEmpty)
        #expect(try Self.ids(f).isEmpty && accounts.pendingPushes() == [:])
    }

    @Test("written back: sent, again later, dropped, and a device gone with everything for it", arguments: AccountsBackend.allCases)
    func finishing(_ backend: AccountsBackend) throws {
        let f = try AccountsFixture(backend)
        defer { f.close() }
        let accounts = f.accounts
        try Self.devices(accounts)
        try Self.take(accounts, [Self.entry(1, .session), Self.entry(2, .session, device: "d3"), Self.entry(3, .session),
                                 Self.entry(4, .session, device: "d3"), Self.entry(5, .session, device: "d3", thread: "T2")], now: 1_000)
        _ = try accounts.claimDuePushes(platform: .fcm, now: 1_000, limit: 3)
        try accounts.finishPushes([], now: 1_100)
        try accounts.finishPushes([(id: "pos:1:d1", deviceID: "d1", .sent), (id: "pos:3:d1", deviceID: "d1", .again(notBefore: 5_000)),
                                   (id: "pos:2:d3", deviceID: "d3", .dropped)], now: 1_100)
        #expect(try Self.ids(f, "sent") == ["pos:1:d1"] && Self.value(f, "sentAt", "pos:1:d1") as Int64 == 1_100)
        #expect(try Self.ids(f) == ["pos:3:d1", "pos:4:d3", "pos:5:d3"])
        let retried = try accounts.claimDuePushes(platform: .fcm, now: 4_999, limit: 10)
        #expect(retried.map(\.message.id) == ["pos:4:d3", "pos:5:d3"])
        let later = try accounts.claimDuePushes(platform: .fcm, now: 5_000, limit: 10)
        #expect(later.map(\.message.id) == ["pos:3:d1"] && later.first?.attempts == 1)
        // d3 is gone (410): the device and every push for it, whatever its state, go.
        try accounts.finishPushes([(id: "pos:4:d3", deviceID: "d3", .deviceGone)], now: 6_000)
        #expect(try accounts.devices(userID: "a").map(\.id).sorted() == ["d1", "d2"])
        #expect(try f.column("SELECT id FROM pushOutbox WHERE deviceId = 'd3'") as [String] == [])
        #expect(try f.column("SELECT id FROM pushOutbox ORDER BY id") as [String] == ["pos:1:d1", "pos:3:d1"])
    }

    @Test("a crash in flight: pushes left sending go again with the same ids", arguments: AccountsBackend.allCases)
    func interrupted(_ backend: AccountsBackend) throws {
        let f = try AccountsFixture(backend)
        defer { f.close() }
        let accounts = f.accounts
        try Self.devices(accounts)
        try Self.take(accounts, [Self.entry(1, .session), Self.entry(2, .session), Self.entry(3, .session)], now: 1_000)
        let flying = try accounts.claimDuePushes(platform: .fcm, now: 1_000, limit: 3)
        try accounts.finishPushes([(id: "pos:1:d1", deviceID: "d1", .sent)], now: 1_100)
        #expect(try accounts.claimDuePushes(platform: .fcm, now: 2_000, limit: 10).isEmpty)
        #expect(try accounts.resendInterruptedPushes() == 2)
        let again = try accounts.claimDuePushes(platform: .fcm, now: 2_000, limit: 10)
        #expect(again.map(\.message) == flying.dropFirst().map(\.message))
        #expect(try Self.ids(f, "sent") == ["pos:1:d1"])
    }

    @Test("purged: sent ones past their time, pending ones expired; counts per platform", arguments: AccountsBackend.allCases)
    func purging(_ backend: AccountsBackend) throws {
        let f = try AccountsFixture(backend)
        defer { f.close() }
        let accounts = f.accounts
        try Self.devices(accounts)
        #expect(try accounts.pendingPushes() == [:])
        try Self.take(accounts, [Self.entry(1, .session, expires: 100), Self.entry(2, .session, expires: 100),
                                 Self.entry(3, .session, expires: 50), Self.entry(4, .session, expires: 200),
                                 Self.entry(5, .session, device: "d2", platform: .apns, expires: 10),
                                 Self.entry(6, .session, device: "d3", expires: 100)], now: 1_000)
        _ = try accounts.claimDuePushes(platform: .fcm, now: 1_000, limit: 2)
        try accounts.finishPushes([(id: "pos:1:d1", deviceID: "d1", .sent)], now: 1_000)
        #expect(try accounts.pendingPushes() == [.fcm: 3, .apns: 1])
        // At 100 s: 3 (50) and 5 (10) expired; 4 (200) and 6 (100) not; 2 is in flight and stays; 1 was sent at 1,000 ms.
        #expect(try accounts.purgePushes(sentBefore: 1_000, nowSeconds: 100) == 2)
        #expect(try f.column("SELECT id FROM pushOutbox ORDER BY id") as [String] == ["pos:1:d1", "pos:2:d1", "pos:4:d1", "pos:6:d3"])
        #expect(try accounts.purgePushes(sentBefore: 1_001, nowSeconds: 100) == 0)
        #expect(try f.column("SELECT id FROM pushOutbox ORDER BY id") as [String] == ["pos:2:d1", "pos:4:d1", "pos:6:d3"])
        #expect(try accounts.pendingPushes() == [.fcm: 2])
    }
}
