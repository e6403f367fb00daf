import Foundation
import Synchronization
import Testing
import SpotterCore
import SpotterServer
import TestSupport

/// Session reminders off the app over a real server (issue 28, item 7): the `reminders` consumer sends a session's
/// `starting_soon` by email or SMS to a participant with no device or who chose it, in their language and zone,
/// through a recording gateway; a repeat after a restart carries the same id.
@Suite("Session reminders by email and SMS", .serialized)
struct ReminderTests {
    /// Tuesday 20 January 2026, 09:00 UTC (12:00 in Riyadh): the session's start.
    static let start: Int64 = 1_768_899_600

    /// The texts a gateway was handed, in order.
    final class RecordingTextSender: NotificationTextSender, @unchecked Sendable {
        private let sent = Mutex<[NotificationText]>([])
        func send(_ text: NotificationText) throws { sent.withLock { $0.append(text) } }
        var texts: [NotificationText] { sent.withLock { $0 } }
    }

    struct Gateways {
        let email = RecordingTextSender()
        let sms = RecordingTextSender()
        var all: [NotificationText] { email.texts + sms.texts }
        func configure(_ config: inout ServerConfig, _ clock: TestClock) {
            config.clock = clock
            config.reminderSenders = [.email: email, .sms: sms]
            config.logConsumerTiming.pollMilliseconds = 20
        }
    }

    /// Invites `client` to a 30-minute session at `start` on `thread`; the client accepts.
    static func schedule(_ server: TestServer, coach: String, client: String, thread: String, start: Int64) throws -> String {
        let coachSocket = try SpotterSocket(port: server.port, token: coach)
        let clientSocket = try SpotterSocket(port: server.port, token: client)
        defer {
            coachSocket.close()
            clientSocket.close()
        }
        let invited = try coachSocket.result("session.invite", ["thread_id": thread, "start": start, "duration_minutes": 30,
                                                                "purpose": "Form check"])
        let id = try #require(invited["id"] as? String)
        _ = try clientSocket.result("session.act", ["session_id": id, "action": "accept"])
        return id
    }

    /// Moves the clock to 8 minutes before the start and runs the timers: the reminder is committed.
    static func remind(_ server: TestServer, _ clock: TestClock) {
        clock.set(start - 480)
        server.server.tickTimers()
    }

    /// `spotter_reminders_total{outcome="…"}`.
    static func outcome(_ server: TestServer, _ name: String) throws -> Double? {
        try server.metric("spotter_reminders_total{outcome=\"\(name)\"}")
    }

    /// Waits up to 10 s until `condition` holds.
    static func eventually(_ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(10)
        while !condition() && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        return condition()
    }

    /// A phone-only client (signed in by code), in `language`.
    static func phoneClient(_ api: APIClient, _ server: TestServer, phone: String, language: String) throws -> APIClient.Account {
        let requested = try api.call("POST", "/v1/auth/otp/request", ["phone": phone])
        let normalized = try #require(requested.string("phone"), "\(requested.text)")
        let code = try #require(server.otp.lastCode(for: normalized))
        let signedIn = try api.call("POST", "/v1/auth/otp/verify", ["phone": phone, "code": code],
                                    headers: [("Accept-Language", language)])
        let user = try #require(signedIn.object("user"), "\(signedIn.text)")
        return (access: try #require(signedIn.string("access_token")), refresh: try #require(signedIn.string("refresh_token")),
                id: try #require(user["id"] as? String))
    }

    static func registerDevice(_ api: APIClient, _ token: String) throws {
        let device = try api.call("POST", "/v1/me/devices", ["platform": "fcm", "token": "fcm-token-\(UUID().uuidString)"], token: token)
        #expect(device.status == 201, "\(device.text)")
    }

    @Test func theClientWithNoDeviceGetsItByEmailTheCoachWithADeviceByPushOnly() throws {
        let clock = TestClock(now: Self.start - 3600)
        let gateways = Gateways()
        let server = try TestServer { gateways.configure(&$0, clock) }
        defer { server.stop() }
        let api = APIClient(port: server.port)
        let (coach, clients, threads) = try api.coachWithClients(1, domain: "remind.test")
        try Self.registerDevice(api, coach.access)  // the coach keeps the default: push only
        let id = try Self.schedule(server, coach: coach.access, client: clients[0].access, thread: threads[0], start: Self.start)
        let coachSocket = try SpotterSocket(port: server.port, token: coach.access)
        defer { coachSocket.close() }
        Self.remind(server, clock)

        #expect(Self.eventually { gateways.email.texts.count == 1 }, "\(gateways.all)")
        let text = try #require(gateways.email.texts.first)
        #expect(text.to == "c0@remind.test" && text.channel == .email && text.kind == "session_reminder")
        #expect(text.id.hasPrefix("pos:") && text.id.hasSuffix(":" + clients[0].id), "\(text.id)")
        #expect(text.subject == "⏰ Session Starting Soon")
        #expect(text.text == "⏰ Session Starting Soon\nTuesday, Jan 20 at 9:00 AM", "UTC, the client's zone: \(text.text)")
        // Nothing more: the coach has a device and chose push only; no SMS to anyone.
        Thread.sleep(forTimeInterval: 0.3)
        #expect(gateways.email.texts.count == 1 && gateways.sms.texts.isEmpty, "\(gateways.all)")
        #expect(try Self.outcome(server, "sent_email") == 1 && Self.outcome(server, "push_only") == 1)
        #expect(try Self.outcome(server, "sent_sms") == 0 && Self.outcome(server, "unreachable") == 0)
        // The session itself is untouched by the consumer.
        let sessions = try coachSocket.result("sessions", ["from": Self.start - 86_400, "to": Self.start + 86_400])["sessions"] as? [[String: Any]]
        #expect(sessions?.first { $0["id"] as? String == id }?["reminded"] as? Bool == true)
    }

    @Test func chosenChannelsReminderOffAndArabicByText() throws {
        let clock = TestClock(now: Self.start - 3600)
        let gateways = Gateways()
        let server = try TestServer { gateways.configure(&$0, clock) }
        defer { server.stop() }
        let api = APIClient(port: server.port)
        let (coach, clients, threads) = try api.coachWithClients(1, domain: "chosen.test")
        // The coach has a device and also wants reminders by email, in Riyadh time.
        try Self.registerDevice(api, coach.access)
        #expect(try api.call("PUT", "/v1/me", ["time_zone": "Asia/Riyadh"], token: coach.access).status == 200)
        let chosen = try api.call("PUT", "/v1/me/notifications", ["reminder_channels": ["email", "push"]], token: coach.access)
        #expect(chosen["reminder_channels"] as? [String] == ["push", "email"], "\(chosen.text)")
        // The client turned reminders off: nothing, device or not.
        #expect(try api.call("PUT", "/v1/me/notifications", ["reminders": false], token: clients[0].access).status == 200)
        // A phone-only client in Arabic, in Riyadh, no device: by SMS (there is no email to choose).
        let sara = try Self.phoneClient(api, server, phone: "0551234567", language: "ar")
        #expect(try api.call("PUT", "/v1/me", ["time_zone": "Asia/Riyadh"], token: sara.access).status == 200)
        let link = try api.call("POST", "/v1/me/coach", ["coach_id": coach.id], token: sara.access)
        let saraThread = try #require(link.string("thread_id"), "\(link.text)")

        _ = try Self.schedule(server, coach: coach.access, client: clients[0].access, thread: threads[0], start: Self.start)
        _ = try Self.schedule(server, coach: coach.access, client: sara.access, thread: saraThread, start: Self.start + 3600)
        Self.remind(server, clock)
        #expect(Self.eventually { gateways.email.texts.count == 1 }, "\(gateways.all)")
        let coachText = try #require(gateways.email.texts.first)
        #expect(coachText.to == "coach@chosen.test" && coachText.text == "⏰ Session Starting Soon\nTuesday, Jan 20 at 12:00 PM")
        #expect(gateways.sms.texts.isEmpty, "Sara's session is an hour later")

        clock.set(Self.start + 3600 - 480)
        server.server.tickTimers()
        #expect(Self.eventually { gateways.sms.texts.count == 1 }, "\(gateways.all)")
        let arabic = try #require(gateways.sms.texts.first)
        #expect(arabic.to == "+966551234567" && arabic.channel == .sms && arabic.id.hasSuffix(":" + sara.id))
        #expect(arabic.text == "⏰ تبدأ الجلسة قريبًا\nالثلاثاء، 20 يناير الساعة 1:00 م", "\(arabic.text)")
        #expect(Self.eventually { gateways.email.texts.count == 2 }, "the coach, by email, for the second session too")
        Thread.sleep(forTimeInterval: 0.3)
        #expect(gateways.all.filter { $0.id.hasSuffix(clients[0].id) }.isEmpty, "reminders off")
        #expect(gateways.all.count == 3, "\(gateways.all)")
        #expect(try Self.outcome(server, "off") == 1 && Self.outcome(server, "sent_email") == 2 && Self.outcome(server, "sent_sms") == 1)
    }

    @Test func aRepeatAfterARestartCarriesTheSameID() throws {
        let directory = NSTemporaryDirectory() + "spotter-reminders-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clock = TestClock(now: Self.start - 3600)
        let gateways = Gateways()
        var clientID = ""
        do {
            let server = try TestServer(dataDirectory: directory) { gateways.configure(&$0, clock) }
            let api = APIClient(port: server.port)
            let (coach, clients, threads) = try api.coachWithClients(1, domain: "restart.test")
            clientID = clients[0].id
            _ = try Self.schedule(server, coach: coach.access, client: clients[0].access, thread: threads[0], start: Self.start)
            Self.remind(server, clock)
            #expect(Self.eventually { gateways.email.texts.count == 2 }, "coach and client, no devices: \(gateways.all)")
            // As if the process died after the gateway took the texts and before the position was saved.
            Thread.sleep(forTimeInterval: 0.2)
            try server.execute("UPDATE logConsumer SET pos = 0 WHERE name = 'reminders'")
            server.stop()
        }
        let first = gateways.email.texts
        let server = try TestServer(dataDirectory: directory) { gateways.configure(&$0, clock) }
        #expect(Self.eventually { gateways.email.texts.count == 4 }, "handed over again: \(gateways.all)")
        Thread.sleep(forTimeInterval: 0.3)
        let all = gateways.email.texts
        #expect(all.count == 4 && Set(all.map(\.id)) == Set(first.map(\.id)), "repeats only with the same ids: \(all.map(\.id))")
        #expect(Set(all.map(\.id)).count == 2 && all.contains { $0.id.hasSuffix(clientID) })
        // Restarted once more, with the position saved: nothing again.
        server.stop()
        let again = try TestServer(dataDirectory: directory) { gateways.configure(&$0, clock) }
        defer { again.stop() }
        Thread.sleep(forTimeInterval: 0.5)
        #expect(gateways.email.texts.count == 4)
    }

    /// A gateway that fails (to be retried) while `down`, and refuses one address for good.
    final class FlakySender: NotificationTextSender, @unchecked Sendable {
        let down = Atomic<Bool>(true)
        let attempts = Atomic<Int>(0)
        let refusing: String
        private let sent = Mutex<[NotificationText]>([])
        init(refusing: String) { self.refusing = refusing }
        struct Outage: Error {}
        func send(_ text: NotificationText) throws {
            attempts.add(1, ordering: .relaxed)
            if down.load(ordering: .acquiring) { throw Outage() }
            if text.to == refusing { throw NotificationTextFailure.refused(status: 422) }
            sent.withLock { $0.append(text) }
        }
        var texts: [NotificationText] { sent.withLock { $0 } }
    }

    @Test func noGatewayNoConsumer() throws {
        let server = try TestServer()
        defer { server.stop() }
        Thread.sleep(forTimeInterval: 0.3)
        #expect(try server.metric(#"spotter_log_consumer_lag{consumer="reminders"}"#) == nil, "no gateway: no consumer")
    }

    @Test func aGatewayOutageIsRetriedARefusalPassedOverAnEndedSessionNotReminded() throws {
        let clock = TestClock(now: Self.start - 3600)
        let gateway = FlakySender(refusing: "coach@flaky.test")
        let server = try TestServer {
            $0.clock = clock
            $0.reminderSenders = [.email: gateway]
            $0.logConsumerTiming.pollMilliseconds = 20
            $0.logConsumerTiming.maxBackoffMilliseconds = 100
        }
        defer { server.stop() }
        let api = APIClient(port: server.port)
        let (coach, clients, threads) = try api.coachWithClients(2, domain: "flaky.test")
        _ = try Self.schedule(server, coach: coach.access, client: clients[0].access, thread: threads[0], start: Self.start)
        _ = try Self.schedule(server, coach: coach.access, client: clients[1].access, thread: threads[1], start: Self.start + 7200)
        Self.remind(server, clock)
        #expect(Self.eventually { gateway.attempts.load(ordering: .relaxed) >= 3 }, "retried while the gateway is down")
        #expect(try server.metric(#"spotter_log_consumer_lag{consumer="reminders"}"#).map { $0 > 0 } == true)
        gateway.down.store(false, ordering: .releasing)
        // The coach's address is refused for good: passed over; the client's goes.
        #expect(Self.eventually { gateway.texts.count == 1 }, "\(gateway.texts)")
        #expect(gateway.texts.first?.to == "c0@flaky.test")

        // The second session's reminder is read only after that session ended (the gateway down meanwhile): dropped.
        gateway.down.store(true, ordering: .releasing)
        clock.set(Self.start + 7200 - 480)
        server.server.tickTimers()
        let before = gateway.attempts.load(ordering: .relaxed)
        #expect(Self.eventually { gateway.attempts.load(ordering: .relaxed) > before })
        clock.set(Self.start + 7200 + 31 * 60)
        gateway.down.store(false, ordering: .releasing)
        #expect(Self.eventually { (try? server.metric(#"spotter_log_consumer_lag{consumer="reminders"}"#)) == 0 })
        Thread.sleep(forTimeInterval: 0.2)
        #expect(gateway.texts.count == 1, "\(gateway.texts)")
        #expect(try Self.outcome(server, "refused") == 1 && Self.outcome(server, "late") == 1)
    }

    /// A server with an SMS gateway only: a client who signed up by email and has no device is reached by nothing,
    /// and counted; the coach with a device is pushed only.
    @Test func noAddressAGatewayCanReachIsCounted() throws {
        let clock = TestClock(now: Self.start - 3600)
        let sms = RecordingTextSender()
        let server = try TestServer {
            $0.clock = clock
            $0.reminderSenders = [.sms: sms]
            $0.logConsumerTiming.pollMilliseconds = 20
        }
        defer { server.stop() }
        let api = APIClient(port: server.port)
        let (coach, clients, threads) = try api.coachWithClients(1, domain: "nowhere.test")
        try Self.registerDevice(api, coach.access)
        _ = try Self.schedule(server, coach: coach.access, client: clients[0].access, thread: threads[0], start: Self.start)
        Self.remind(server, clock)
        #expect(Self.eventually { (try? Self.outcome(server, "unreachable")) == 1 })
        #expect(try Self.outcome(server, "push_only") == 1 && sms.texts.isEmpty)
    }
}
