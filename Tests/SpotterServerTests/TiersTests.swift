import Foundation
import Testing
import SpotterCore
import SpotterServer
import SpotterPorts
import TestSupport

/// Subscription tiers over real sockets (`--tiers`): the message quota is checked and charged in the send's own
/// step, a retry is never charged, tier changes apply at once, and the count survives a restart.
@Suite("Tiers and quotas on the live socket", .serialized)
struct TiersTests {
    static func send(_ socket: SpotterSocket, _ thread: String, _ id: String) throws -> [String: Any] {
        try socket.command("message.send", ["thread_id": thread, "client_message_id": id, "text": "message \(id)"])
    }

    /// The next `quota` event's quota.
    static func quota(_ socket: SpotterSocket) throws -> [String: Any] {
        try #require(try socket.next("quota")["quota"] as? [String: Any])
    }

    static func messages(_ quota: [String: Any]) -> [String: Any] { quota["messages"] as? [String: Any] ?? [:] }

    @Test func theTwentyFirstFreemiumMessageIsRefusedAndNotStored() throws {
        let chat = try ChatFixture { $0.tiers = true }
        defer { chat.server.stop() }
        let client = try chat.socket(chat.fixture.clientA.access)
        let coach = try chat.socket(chat.fixture.coachX.access)
        // The quota follows the hello.
        let first = try Self.quota(client)
        #expect(first["tier"] as? String == "freemium" && Self.messages(first)["used"] as? Int == 0)
        #expect(Self.messages(first)["limit"] as? Int == 20 && Self.messages(first)["band"] as? String == "green")

        var last: [String: Any] = [:]
        for n in 1...20 {
            let reply = try Self.send(client, chat.thread, "m\(n)")
            #expect(reply["ok"] as? Bool == true, "message \(n): \(reply)")
            last = try Self.quota(client)
            if n == 15 { #expect(last["warning"] == nil && Self.messages(last)["band"] as? String == "green") }
            if n == 16 { #expect(last["warning"] as? String == "4 messages remaining" && Self.messages(last)["band"] as? String == "yellow") }
        }
        #expect(Self.messages(last)["used"] as? Int == 20 && Self.messages(last)["band"] as? String == "red")

        let refused = try Self.send(client, chat.thread, "m21")
        #expect(errorCode(refused) == "quota_exceeded")
        let error = try #require(refused["error"] as? [String: Any])
        #expect(error["upgrade_to"] as? String == "premium" && error["field"] as? String == "text")
        #expect((error["message"] as? String)?.contains("Upgrade to Premium for 200 messages a month") == true)
        // Not stored: the thread holds the twenty.
        let history = try #require(try coach.result("history", ["thread_id": chat.thread, "limit": 100])["messages"] as? [[String: Any]])
        #expect(history.count == 20 && history.first?["client_message_id"] as? String == "m20")

        // A retry of an accepted message is answered as before, never charged and never refused.
        let retry = try Self.send(client, chat.thread, "m20")
        #expect(retry["ok"] as? Bool == true && (retry["result"] as? [String: Any])?["seq"] as? Int == 20)
        // The coach is never limited.
        #expect(try Self.send(coach, chat.thread, "c1")["ok"] as? Bool == true)
        // Arabic, for a socket that asked for it.
        let arabic = try chat.socket(chat.fixture.clientA.access, headers: [("Accept-Language", "ar")])
        let refusedInArabic = try Self.send(arabic, chat.thread, "m22")
        #expect(((refusedInArabic["error"] as? [String: Any])?["message"] as? String)?.contains("200 رسالة") == true)
    }

    @Test func anAdminsTierChangeAppliesAtOnce() throws {
        let chat = try ChatFixture { $0.tiers = true }
        defer { chat.server.stop() }
        let api = chat.fixture.api
        let client = try chat.socket(chat.fixture.clientA.access)
        _ = try Self.quota(client)
        for n in 1...20 { _ = try Self.send(client, chat.thread, "m\(n)"); _ = try Self.quota(client) }
        #expect(errorCode(try Self.send(client, chat.thread, "m21")) == "quota_exceeded")

        let upgraded = try api.call("PUT", "/v1/admin/users/\(chat.fixture.clientA.id)/tier", ["tier": "premium"],
                                    token: chat.fixture.admin.access)
        #expect(upgraded.status == 200 && upgraded.string("tier") == "premium")
        // Logged: a `tier` event with a cursor (resume replays it), then the new quota.
        let changed = try client.next("tier")
        #expect(changed["tier"] as? String == "premium" && changed["cursor"] is Int)
        let pushed = try Self.quota(client)
        #expect(pushed["tier"] as? String == "premium" && Self.messages(pushed)["limit"] as? Int == 200)
        #expect(Self.messages(pushed)["used"] as? Int == 20 && (pushed["calls"] as? [String: Any])?["limit"] as? Int == 2)
        #expect(pushed["call_minutes"] as? Int == 25)
        #expect(try Self.send(client, chat.thread, "m21")["ok"] as? Bool == true)

        // A downgrade mid-month: 21 used of Freemium's 20.
        _ = try api.call("PUT", "/v1/admin/users/\(chat.fixture.clientA.id)/tier", ["tier": "freemium"], token: chat.fixture.admin.access)
        #expect(errorCode(try Self.send(client, chat.thread, "m22")) == "quota_exceeded")
        let replay = try chat.socket(chat.fixture.clientA.access)
        _ = try replay.result("resume", ["cursor": 0])
        #expect(replay.drain(for: 0.3).filter { $0["type"] as? String == "tier" }.map { $0["tier"] as? String } == ["premium", "freemium"])
        let usage = try api.call("GET", "/v1/admin/users/\(chat.fixture.clientA.id)/usage", token: chat.fixture.admin.access)
        let quota = try #require(usage.json["quota"] as? [String: Any])
        #expect(Self.messages(quota)["used"] as? Int == 21 && Self.messages(quota)["left"] as? Int == 0)

        // The coach's client list shows the tier; only admins change it, only clients have one.
        let clients = try api.call("GET", "/v1/coach/clients", token: chat.fixture.coachX.access)
        #expect(clients.array.first?["tier"] as? String == "freemium")
        #expect(try api.call("PUT", "/v1/admin/users/\(chat.fixture.clientA.id)/tier", ["tier": "premium"],
                             token: chat.fixture.coachX.access).status == 403)
        #expect(try api.call("PUT", "/v1/admin/users/\(chat.fixture.coachX.id)/tier", ["tier": "premium"],
                             token: chat.fixture.admin.access).errorCode == "conflict")
        #expect(try api.call("PUT", "/v1/admin/users/\(chat.fixture.clientA.id)/tier", ["tier": "gold"],
                             token: chat.fixture.admin.access).errorCode == "bad_request")
    }

    /// Video calls follow the tier: a Freemium client's calls last at most 15 minutes whoever proposes them, and
    /// one is confirmed per month; a cancelled call is given back.
    @Test func videoCallsFollowTheTier() throws {
        let chat = try ChatFixture { $0.tiers = true }
        defer { chat.server.stop() }
        let coach = try chat.socket(chat.fixture.coachX.access)
        let client = try chat.socket(chat.fixture.clientA.access)
        _ = try Self.quota(client)
        // Two starts in one month (the client's zone is UTC), an hour apart.
        let now = Int64(Date().timeIntervalSince1970)
        let month = QuotaMonth(at: now, in: TimeZone(identifier: "UTC")!)
        let first = now + 7200 < month.resetsAt - 3600 ? now + 3600 : month.resetsAt + 3600
        func invite(_ start: Int64, minutes: Int) throws -> [String: Any] {
            try coach.command("session.invite", ["thread_id": chat.thread, "start": start, "duration_minutes": minutes, "purpose": "Check-in"])
        }
        let tooLong = try invite(first, minutes: 30)
        #expect(errorCode(tooLong) == "invalid_duration")
        #expect(((tooLong["error"] as? [String: Any])?["message"] as? String)?.contains("at most 15 minutes") == true)
        let one = try #require((try invite(first, minutes: 15)["result"] as? [String: Any])?["id"] as? String)
        _ = try client.result("session.act", ["session_id": one, "action": "accept"])
        var quota = try Self.quota(client)
        while (quota["calls"] as? [String: Any])?["used"] as? Int != 1 { quota = try Self.quota(client) }
        #expect((quota["calls"] as? [String: Any])?["band"] as? String == "red")

        // The month's call is used: another invite may be made, but not confirmed; a request is refused.
        let two = try #require((try invite(first + 3600, minutes: 15)["result"] as? [String: Any])?["id"] as? String)
        let refused = try client.command("session.act", ["session_id": two, "action": "accept"])
        #expect(errorCode(refused) == "quota_exceeded" && (refused["error"] as? [String: Any])?["upgrade_to"] as? String == "premium")
        #expect(errorCode(try client.command("session.request", ["thread_id": chat.thread, "start": first + 7200,
                                                                  "duration_minutes": 15, "purpose": "More"])) == "quota_exceeded")
        // Cancelling the first gives the call back.
        _ = try coach.result("session.act", ["session_id": one, "action": "cancel", "reason": "Moved"])
        #expect((try client.result("session.act", ["session_id": two, "action": "accept"]))["status"] as? String == "scheduled")
    }

    @Test func withoutTiersNothingIsLimited() throws {
        let chat = try ChatFixture()
        defer { chat.server.stop() }
        let client = try chat.socket(chat.fixture.clientA.access)
        for n in 1...25 { #expect(try Self.send(client, chat.thread, "m\(n)")["ok"] as? Bool == true) }
        #expect(client.drain(for: 0.2).filter { $0["type"] as? String == "quota" }.isEmpty)
    }

    @Test func theCountSurvivesARestart() throws {
        let directory = NSTemporaryDirectory() + "spotter-tiers-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var token = "", thread = ""
        do {
            let server = try TestServer(dataDirectory: directory) { $0.tiers = true }
            let pair = try CoachingFixture.linkedPair(on: server)
            (token, thread) = (pair.client.access, pair.thread)
            let socket = try SpotterSocket(port: server.port, token: token)
            for n in 1...20 { #expect(try Self.send(socket, thread, "m\(n)")["ok"] as? Bool == true) }
            _ = server.stop()
        }
        let server = try TestServer(dataDirectory: directory) { $0.tiers = true }
        defer { server.stop() }
        let socket = try SpotterSocket(port: server.port, token: token)
        #expect(Self.messages(try Self.quota(socket))["used"] as? Int == 20)
        #expect(errorCode(try Self.send(socket, thread, "m21")) == "quota_exceeded")
    }
}
