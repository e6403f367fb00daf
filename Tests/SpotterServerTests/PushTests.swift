import Foundation
import Testing
import SpotterCore
import SpotterPorts
import SpotterServer
import TestSupport

/// Push notifications decided from the log (issue 28, items 2–5) over a real server, with in-memory providers: who
/// is pushed, in what words, coalescing, badges, preferences, the socket's `app_state`, a device gone, a provider
/// down. The providers' own wire (APNs, FCM, Web Push over HTTP/2) is SpotterPushTests'.
@Suite("Push notifications", .serialized)
struct PushTests {
    /// A server whose Web Push provider is `provider`, with a coach and a linked client; the client has a Web Push
    /// device and the coach an APNs one.
    struct Pushing {
        let server: TestServer
        let provider = RecordingPushProvider(.webpush)
        let apns = RecordingPushProvider(.apns)
        let api: APIClient
        let coach: APIClient.Account
        let client: APIClient.Account
        let thread: String
        let clientDevice: String

        init(language: String = "en", _ configure: (inout ServerConfig) -> Void = { _ in }) throws {
            let providers: [any PushProvider] = [provider, apns]
            server = try TestServer { config in
                config.push.providers = providers
                config.push.pollMilliseconds = 20
                config.logConsumerTiming.pollMilliseconds = 20
                configure(&config)
            }
            api = APIClient(port: server.port)
            coach = try api.signUp(role: "coach", name: "Carter", email: "c@push.test")
            client = try api.signUp(role: "client", name: "Sara", email: "s@push.test")
            if language != "en" {
                _ = try api.call("PUT", "/v1/me", ["language": language, "time_zone": "Asia/Riyadh"], token: client.access)
            }
            clientDevice = try #require(try api.call("POST", "/v1/me/devices", DevicesTests.webpush(), token: client.access).string("id"))
            _ = try api.call("POST", "/v1/me/devices", DevicesTests.apns(), token: coach.access)
            _ = try api.call("PUT", "/v1/me/onboarding", CoachingFixture.onboarding, token: client.access)
            thread = try #require(try api.call("POST", "/v1/me/coach", ["coach_id": coach.id], token: client.access).string("thread_id"))
            // The link itself is pushed to both; each test starts after it.
            let linked = try provider.waitFor(1)[0]
            let arabic = language == "ar"
            #expect(linked.alert?.title == (arabic ? "مدربك الآن Carter" : "Carter is now your coach") && linked.category == "session")
            #expect(try apns.waitFor(1)[0].alert?.title == "New client: Sara")
            provider.forget()
            apns.forget()
        }

        func socket(_ account: APIClient.Account) throws -> SpotterSocket { try SpotterSocket(port: server.port, token: account.access) }

        func send(_ socket: SpotterSocket, _ text: String, id: String) throws {
            _ = try socket.result("message.send", ["thread_id": thread, "client_message_id": id, "text": text])
        }
    }

    @Test func aMessageToAnAwayClientIsPushedOnceAndNoneWhileSheIsOnline() throws {
        let push = try Pushing { $0.push.preview = .full }
        defer { push.server.stop() }
        let coach = try push.socket(push.coach)
        try push.send(coach, "Drink water before the session 💧", id: "m1")
        let first = try #require(try push.provider.waitFor(1).first)
        #expect(first.alert?.title == "New message from Carter")
        #expect(first.alert?.body == "Drink water before the session 💧" && first.alert?.quiet == false)
        #expect(first.badge == 1 && first.category == "message" && first.urgent)
        #expect(first.collapseKey == AccountStore.collapseKey(push.thread) && first.collapseKey?.count == 32)
        #expect(first.data["thread_id"] == push.thread && first.data["kind"] == "message")
        #expect(first.id.hasPrefix("pos:") && first.id.hasSuffix(":" + push.clientDevice))
        #expect(first.address.platform == .webpush && first.address.p256dh == DevicesTests.p256dh)
        #expect(push.apns.messages.isEmpty, "the sender is not pushed about their own message")

        // Online, she hears it on the socket: no push.
        let client = try push.socket(push.client)
        try push.send(coach, "Second", id: "m2")
        _ = try client.next("message")
        Thread.sleep(forTimeInterval: 0.5)
        #expect(push.provider.messages.count == 1)
        #expect(try push.server.metric("spotter_push_sent_total{platform=\"webpush\"}") == 2, "the link's and the message's")
    }

    @Test func aSocketInTheBackgroundCountsAsAway() throws {
        let push = try Pushing { $0.push.coalesceMilliseconds = 0 }
        defer { push.server.stop() }
        let coach = try push.socket(push.coach)
        let client = try push.socket(push.client)
        #expect(try client.result("app_state", ["state": "background"])["state"] as? String == "background")
        try push.send(coach, "Are you there?", id: "b1")
        #expect(try push.provider.waitFor(1)[0].alert?.title == "New message from Carter")
        #expect(try push.provider.waitFor(1)[0].alert?.body == "", "the default preview names the sender only")
        #expect(try client.result("app_state", ["state": "foreground"])["state"] as? String == "foreground")
        try push.send(coach, "Welcome back", id: "b2")
        _ = try client.next("message")
        Thread.sleep(forTimeInterval: 0.5)
        #expect(push.provider.messages.count == 1)
        #expect(errorCode(try client.command("app_state", ["state": "asleep"])) == "bad_request")
        #expect(errorCode(try client.command("app_state", [:])) == "missing_field")
        #expect(errorCode(try client.command("app_state", ["state": "background", "extra": 1])) == "unknown_field")
    }

    @Test func messagesPilingUpAreCoalescedPerThread() throws {
        let push = try Pushing { $0.push.coalesceMilliseconds = 1500 }
        defer { push.server.stop() }
        let coach = try push.socket(push.coach)
        try push.send(coach, "Message 1", id: "c1")
        let first = try push.provider.waitFor(1)[0]
        #expect(first.alert?.title == "New message from Carter" && first.data["count"] == nil)
        // Four more within the window: one push at its end counts them.
        for index in 2...5 { try push.send(coach, "Message \(index)", id: "c\(index)") }
        Thread.sleep(forTimeInterval: 0.7)
        #expect(push.provider.messages.count == 1, "the rest wait for the window's end")
        let second = try push.provider.waitFor(2)[1]
        #expect(second.alert?.title == "4 new messages from Carter" && second.data["count"] == "4" && second.badge == 5)
        #expect(second.collapseKey == first.collapseKey && second.id != first.id)
        Thread.sleep(forTimeInterval: 2)
        #expect(push.provider.messages.count == 2)
    }

    @Test func aReadOnAnotherDeviceClearsTheBadge() throws {
        let push = try Pushing()
        defer { push.server.stop() }
        let coach = try push.socket(push.coach)
        try push.send(coach, "One", id: "r1")
        #expect(try push.provider.waitFor(1)[0].badge == 1)
        // She reads on the web (a socket), her phone's badge goes.
        let client = try push.socket(push.client)
        #expect(try client.result("thread.read", ["thread_id": push.thread, "seq": 1])["unread"] as? Int == 0)
        let silent = try push.provider.waitFor(2)[1]
        #expect(silent.alert == nil && silent.badge == 0 && silent.category == "badge" && !silent.urgent)
        #expect(silent.collapseKey == "badge")
    }

    @Test func aMutedThreadAndQuietHours() throws {
        let push = try Pushing()
        defer { push.server.stop() }
        let coach = try push.socket(push.coach)
        var muted = try push.api.call("PUT", "/v1/me/notifications", ["muted_threads": [["thread_id": push.thread, "until": NSNull()]]],
                                      token: push.client.access)
        #expect(muted.status == 200, "\(muted.text)")
        try push.send(coach, "Muted", id: "q1")
        // A session is not a message: the mute lets it through.
        _ = try coach.result("session.invite", ["thread_id": push.thread, "start": Int(Date().timeIntervalSince1970) + 86_400,
                                                "duration_minutes": 30, "purpose": "Check-in"])
        let invite = try push.provider.waitFor(1)[0]
        #expect(invite.category == "session" && invite.alert?.title.contains("New Session") == true, "\(invite)")
        #expect(invite.data["session_id"] != nil && invite.data["change"] == "created")
        Thread.sleep(forTimeInterval: 0.3)
        #expect(push.provider.messages.count == 1)

        // Quiet all day long: pushed without sound.
        muted = try push.api.call("PUT", "/v1/me/notifications", ["muted_threads": [], "quiet_hours": ["start": "00:00", "end": "23:59"]],
                                  token: push.client.access)
        #expect(muted.status == 200)
        try push.send(coach, "Quiet", id: "q2")
        let quiet = try push.provider.waitFor(2)[1]
        #expect(quiet.alert?.quiet == true && !quiet.urgent)
    }

    @Test func arabicWordsInTheReceiversZone() throws {
        let push = try Pushing(language: "ar") { $0.push.coalesceMilliseconds = 0 }
        defer { push.server.stop() }
        let coach = try push.socket(push.coach)
        try push.send(coach, "مرحبا", id: "a1")
        #expect(try push.provider.waitFor(1)[0].alert?.title == "رسالة جديدة من Carter")
        _ = try coach.result("session.invite", ["thread_id": push.thread, "start": Int(Date().timeIntervalSince1970) + 86_400,
                                                "duration_minutes": 30, "purpose": "Check-in"])
        let invite = try push.provider.waitFor(2)[1]
        #expect(invite.alert?.title.hasPrefix("🎥 جلسة جديدة") == true, "\(String(describing: invite.alert))")
    }

    @Test func aDeviceTheProviderSaysIsGoneIsRemoved() throws {
        let push = try Pushing()
        defer { push.server.stop() }
        push.provider.answer { _ in .gone(reason: "410 Gone") }
        let coach = try push.socket(push.coach)
        try push.send(coach, "Hello?", id: "g1")
        try push.provider.waitFor(1)
        try waitUntil(5, "the device removed") {
            (try? push.api.call("GET", "/v1/me/devices", token: push.client.access).json["devices"] as? [Any])?.isEmpty == true
        }
        try push.send(coach, "Anyone?", id: "g2")
        Thread.sleep(forTimeInterval: 0.5)
        #expect(push.provider.messages.count == 1)
        #expect(try push.server.metric("spotter_push_failed_total{platform=\"webpush\",reason=\"gone\"}") == 1)
    }

    @Test func aProviderDownIsRetriedUntilItAnswers() throws {
        let push = try Pushing {
            $0.push.retryBaseMilliseconds = 50
            $0.push.retryMaxMilliseconds = 200
        }
        defer { push.server.stop() }
        push.provider.answer { _ in .retry(afterSeconds: nil, reason: "connection refused") }
        let coach = try push.socket(push.coach)
        try push.send(coach, "Hold on", id: "d1")
        let tries = try push.provider.waitFor(4)
        #expect(Set(tries.map(\.id)).count == 1, "a retry carries the same id")
        push.provider.answer { _ in .delivered }
        try waitUntil(5, "delivered") { (try? push.server.metric("spotter_push_sent_total{platform=\"webpush\"}")) == 1 }
        #expect(try push.server.metric("spotter_push_retries_total{platform=\"webpush\"}") ?? 0 >= 3)
        // Retry-After is honoured: two seconds means nothing for a while.
        push.provider.answer { _ in .retry(afterSeconds: 2, reason: "429") }
        let before = push.provider.messages.count
        try push.send(coach, "Later", id: "d2")
        try push.provider.waitFor(before + 1)
        Thread.sleep(forTimeInterval: 1)
        #expect(push.provider.messages.count == before + 1)
    }

    @Test func aConflictReachesTheCoachsDevices() throws {
        let fixture = try CoachingFixture { config in
            config.push.providers = [RecordingPushProvider(.apns)]
            config.push.pollMilliseconds = 20
            config.logConsumerTiming.pollMilliseconds = 20
        }
        defer { fixture.server.stop() }
        let provider = try #require(fixture.server.server.config.push.providers.first as? RecordingPushProvider)
        let api = fixture.api
        _ = try api.call("POST", "/v1/me/devices", DevicesTests.apns(), token: fixture.coachX.access)
        let threadA = try #require(try api.call("GET", "/v1/me/coach", token: fixture.clientA.access).string("thread_id"))
        _ = try api.call("PUT", "/v1/me/onboarding", CoachingFixture.onboarding, token: fixture.clientC.access)
        _ = try api.call("POST", "/v1/me/coach", ["coach_id": fixture.coachX.id], token: fixture.clientC.access)
        let threadC = try #require(try api.call("GET", "/v1/me/coach", token: fixture.clientC.access).string("thread_id"))
        let coach = try SpotterSocket(port: fixture.server.port, token: fixture.coachX.access)
        let clientA = try SpotterSocket(port: fixture.server.port, token: fixture.clientA.access)
        let start = Int(Date().timeIntervalSince1970) + 86_400
        let existing = try coach.result("session.invite", ["thread_id": threadA, "start": start, "duration_minutes": 60, "purpose": "Strength"])
        _ = try clientA.result("session.act", ["session_id": existing["id"] as? String ?? "", "action": "accept"])
        // The coach's console goes to the background; the double booking reaches the phone.
        _ = try coach.result("app_state", ["state": "background"])
        let proposed = try coach.result("session.invite", ["thread_id": threadC, "start": start + 1800, "duration_minutes": 30, "purpose": "Intro"])
        #expect(proposed["status"] as? String == "needs_resolution")
        // The links' own pushes ("New client: …") may come first; wait for the conflict's.
        try waitUntil(10, "the conflict's push") {
            provider.messages.contains { $0.data["change"] == "created" && $0.data["thread_id"] == threadC && $0.category == "session" }
        }
        let pushed = provider.messages
        let conflict = try #require(pushed.first { $0.data["change"] == "created" && $0.data["thread_id"] == threadC })
        #expect(conflict.alert?.title.isEmpty == false && conflict.urgent)
        #expect(pushed.allSatisfy { $0.address.platform == .apns && $0.address.topic == "com.example.coach" })
    }
}
