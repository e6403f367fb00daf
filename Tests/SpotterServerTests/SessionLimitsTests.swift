import Foundation
import Testing
import TestSupport

/// Sessions under attack, over real sockets: an ended link ends its sessions and refuses every session command,
/// invites and requests are limited per account across all its sockets, and a pair's open sessions are bounded.
@Suite("Session limits on the live socket", .serialized)
struct SessionLimitsTests {
    static func now() -> Int { Int(Date().timeIntervalSince1970) }

    func invite(_ socket: SpotterSocket, _ thread: String, start: Int) throws -> [String: Any] {
        try socket.command("session.invite", ["thread_id": thread, "start": start, "duration_minutes": 30, "purpose": "Check-in"])
    }

    @Test func anEndedLinkCancelsItsSessionsAndTheFormerCoachCanNoLongerMoveThem() throws {
        let chat = try ChatFixture()
        defer { chat.server.stop() }
        let fixture = chat.fixture
        let coach = try chat.socket(fixture.coachX.access)
        let client = try chat.socket(fixture.clientA.access)
        let start = Self.now() + 2 * 86_400
        // One scheduled, one invited, one the client asked for.
        let scheduled = try #require(try coach.result("session.invite", ["thread_id": chat.thread, "start": start,
                                                                          "duration_minutes": 30, "purpose": "Plan"])["id"] as? String)
        _ = try client.result("session.act", ["session_id": scheduled, "action": "accept"])
        let invited = try #require(try invite(coach, chat.thread, start: start + 86_400)["result"] as? [String: Any])["id"] as? String
        let requested = try #require(try client.result("session.request", ["thread_id": chat.thread, "start": start + 3 * 3600,
                                                                           "duration_minutes": 30, "purpose": "Form"])["id"] as? String)
        _ = client.drain(for: 0.3)
        _ = coach.drain(for: 0.3)

        // The client changes coach through the admin's approval.
        let request = try fixture.api.call("POST", "/v1/me/coach-change-requests", ["coach_id": fixture.coachY.id],
                                           token: fixture.clientA.access)
        let id = try #require(request.string("id"))
        #expect(try fixture.api.call("POST", "/v1/admin/coach-change-requests/\(id)/approve", token: fixture.admin.access).status == 200)

        // The server cancels all three, each with a system message both sides get, worded for the ended link.
        var cancelled: Set<String> = []
        for _ in 0..<3 {
            let event = try client.next("session")
            let session = try #require(event["session"] as? [String: Any])
            #expect(session["status"] as? String == "cancelled" && session["cancel_reason"] as? String == "link_ended")
            let text = (event["message"] as? [String: Any])?["text"] as? String ?? ""
            #expect(text.contains("The coaching relationship has ended."))
            cancelled.insert(session["id"] as? String ?? "")
        }
        #expect(cancelled == [scheduled, invited!, requested])
        _ = client.drain(for: 0.3)

        // Every session command of the old thread is refused as the chat is, and the former client hears nothing.
        #expect(errorCode(try coach.command("session.act", ["session_id": scheduled, "action": "reschedule",
                                                            "start": start + 7200])) == "thread_inactive")
        #expect(errorCode(try coach.command("session.act", ["session_id": scheduled, "action": "cancel",
                                                            "reason": "call me on my own number"])) == "thread_inactive")
        #expect(errorCode(try client.command("session.act", ["session_id": invited!, "action": "accept"])) == "thread_inactive")
        #expect(errorCode(try invite(coach, chat.thread, start: start + 5 * 86_400)) == "thread_inactive")
        let heard = client.drain(for: 0.5).filter { ["session", "message"].contains($0["type"] as? String) }
        #expect(heard.isEmpty)
        // The calendar keeps them, cancelled.
        let list = try client.result("sessions", ["from": start - 60, "to": start + 5 * 86_400])
        let statuses = (list["sessions"] as? [[String: Any]] ?? []).map { $0["status"] as? String }
        #expect(statuses == ["cancelled", "cancelled", "cancelled"])
    }

    @Test func invitesAreLimitedPerAccountAcrossAllItsSockets() throws {
        let desk = try SessionsTests.Desk()
        defer { desk.chat.server.stop() }
        let sockets = try (0..<3).map { _ in try desk.chat.socket(desk.fixture.coachX.access) }
        let threads = [desk.chat.thread, desk.threadC]
        let base = Self.now() + 86_400
        var accepted = 0, limited: [[String: Any]] = [], other: [String?] = []
        // 45 invites from three sockets (15 each, well inside each socket's own budget), over two clients.
        for index in 0..<45 {
            let reply = try invite(sockets[index % 3], threads[index % 2], start: base + index * 3600)
            if reply["ok"] as? Bool == true { accepted += 1 }
            else if errorCode(reply) == "rate_limited" { limited.append(try #require(reply["error"] as? [String: Any])) }
            else { other.append(errorCode(reply)) }
        }
        #expect(accepted <= 30 && accepted > 0)
        #expect(!limited.isEmpty && other.isEmpty)
        #expect(limited.allSatisfy { ($0["retry_after"] as? Int ?? 0) >= 1 })
        // The sockets stay open.
        for socket in sockets { #expect(try socket.result("me")["id"] as? String == desk.fixture.coachX.id) }
    }

    @Test func aPairHasAtMostTwentyOpenSessions() throws {
        let chat = try ChatFixture()
        defer { chat.server.stop() }
        let coach = try chat.socket(chat.fixture.coachX.access)
        let client = try chat.socket(chat.fixture.clientA.access)
        let base = Self.now() + 86_400
        var ids: [String] = []
        for index in 0..<20 {
            let made = try #require(try invite(coach, chat.thread, start: base + index * 3600)["result"] as? [String: Any])
            ids.append(try #require(made["id"] as? String))
        }
        let refused = try invite(coach, chat.thread, start: base + 21 * 3600)
        #expect(errorCode(refused) == "too_many_sessions")
        #expect(((refused["error"] as? [String: Any])?["message"] as? String)?.isEmpty == false)
        #expect(errorCode(try client.command("session.request", ["thread_id": chat.thread, "start": base + 22 * 3600,
                                                                 "duration_minutes": 30, "purpose": "Call"])) == "too_many_sessions")
        // One ends (declined): there is room for one more.
        _ = try client.result("session.act", ["session_id": ids[0], "action": "decline"])
        #expect(try invite(coach, chat.thread, start: base + 23 * 3600)["ok"] as? Bool == true)
        #expect(errorCode(try invite(coach, chat.thread, start: base + 24 * 3600)) == "too_many_sessions")
    }
}
