import Foundation
import Testing
import SpotterCore
import SpotterPorts
import TestSupport

/// Video sessions over real sockets: invite → accept → join gating, the three conflict resolutions end to end,
/// resume and a restart.
@Suite("Video sessions on the live socket", .serialized)
struct SessionsTests {
    /// Coach X with clients A (the chat fixture's thread) and C (linked here).
    struct Desk {
        let chat: ChatFixture
        let threadC: String
        var fixture: CoachingFixture { chat.fixture }

        init(dataDirectory: String? = nil) throws {
            chat = try ChatFixture()
            let api = chat.fixture.api
            _ = try api.call("PUT", "/v1/me/onboarding", CoachingFixture.onboarding, token: chat.fixture.clientC.access)
            _ = try api.call("POST", "/v1/me/coach", ["coach_id": chat.fixture.coachX.id], token: chat.fixture.clientC.access)
            threadC = try #require(try api.call("GET", "/v1/me/coach", token: chat.fixture.clientC.access).string("thread_id"))
        }
    }

    static func now() -> Int { Int(Date().timeIntervalSince1970) }

    func session(_ reply: [String: Any]) -> [String: Any] { reply }

    func nextSession(_ socket: SpotterSocket) throws -> (event: [String: Any], session: [String: Any]) {
        let event = try socket.next("session")
        return (event, try #require(event["session"] as? [String: Any]))
    }

    /// The next `session` event whose session has `status` (earlier ones are skipped).
    func nextSession(_ socket: SpotterSocket, status: String) throws -> (event: [String: Any], session: [String: Any]) {
        var next = try nextSession(socket)
        while next.session["status"] as? String != status { next = try nextSession(socket) }
        return next
    }

    @Test func inviteAcceptAndTheCoachJoinsFirst() throws {
        let desk = try Desk()
        defer { desk.chat.server.stop() }
        let coach = try desk.chat.socket(desk.fixture.coachX.access)
        let client = try desk.chat.socket(desk.fixture.clientA.access)
        let tablet = try desk.chat.socket(desk.fixture.clientA.access)
        let stranger = try desk.chat.socket(desk.fixture.coachY.access)

        let start = Self.now() + 120  // inside the join window (10 minutes before the start)
        let invited = try coach.result("session.invite", ["thread_id": desk.chat.thread, "start": start,
                                                          "duration_minutes": 15, "purpose": "Form check"])
        #expect(invited["status"] as? String == "invited")
        let id = try #require(invited["id"] as? String)
        let meet = try #require(invited["meet_url"] as? String)
        #expect(meet.hasPrefix("https://meet.jit.si/spotter-") && meet.count == "https://meet.jit.si/spotter-".count + 32)
        let (event, seen) = try nextSession(client)
        #expect(event["change"] as? String == "created" && seen["id"] as? String == id)
        #expect(text(event)?.hasPrefix("🎥 New Session Scheduled") == true)
        #expect(event["cursor"] is Int)

        // A client cannot invite; the coach cannot accept their own invite; a stranger sees nothing.
        #expect(try client.command("session.invite", ["thread_id": desk.chat.thread, "start": start, "duration_minutes": 15,
                                                      "purpose": "x"])["error"].map { ($0 as? [String: Any])?["code"] as? String } == "forbidden")
        #expect(try errorCode(coach.command("session.act", ["session_id": id, "action": "accept"])) == "session_action_not_allowed")
        #expect(try errorCode(stranger.command("session.act", ["session_id": id, "action": "decline"])) == "session_not_found")

        _ = try client.result("session.act", ["session_id": id, "action": "accept"])
        let confirmed = try nextSession(coach, status: "scheduled")
        #expect(text(confirmed.event)?.hasPrefix("✅ Session Confirmed") == true)

        // The Join button stays grey until the coach joins.
        let early = try client.command("session.act", ["session_id": id, "action": "join"])
        #expect(errorCode(early) == "waiting_for_coach")
        #expect((early["error"] as? [String: Any])?["message"] as? String == "Waiting for coach to start the session…")
        _ = try coach.result("session.act", ["session_id": id, "action": "join"])
        for device in [client, tablet] {
            var joined = try nextSession(device)
            while joined.event["change"] as? String != "coach_joined" { joined = try nextSession(device) }
            #expect(joined.session["status"] as? String == "in_progress" && joined.session["coach_joined"] as? Bool == true)
        }
        let clientJoin = try client.result("session.act", ["session_id": id, "action": "join"])
        #expect(clientJoin["status"] as? String == "in_progress")
        #expect(stranger.drain(for: 0.2).filter { $0["type"] as? String == "session" }.isEmpty)
    }

    /// Every change is a system message of the thread: it takes the next seq, counts as unread for the side that
    /// did not make it, and `history` lists it worded for whoever reads it.
    @Test func changesAreSystemMessagesOfTheThread() throws {
        let desk = try Desk()
        defer { desk.chat.server.stop() }
        _ = try desk.fixture.api.call("PUT", "/v1/me", ["language": "ar", "time_zone": "Asia/Riyadh"],
                                      token: desk.fixture.clientA.access)
        let coach = try desk.chat.socket(desk.fixture.coachX.access)
        let client = try desk.chat.socket(desk.fixture.clientA.access)
        _ = try coach.result("message.send", ["thread_id": desk.chat.thread, "client_message_id": "hello", "text": "Hi"])

        let start = Self.now() + 86_400
        let id = try #require(try coach.result("session.invite", ["thread_id": desk.chat.thread, "start": start,
                                                                  "duration_minutes": 30, "purpose": "Plan"])["id"] as? String)
        let (event, _) = try nextSession(client)
        let message = try #require(event["message"] as? [String: Any])
        #expect(message["seq"] as? Int == 2 && message["kind"] as? String == "system" && message["sender_id"] == nil)
        #expect(message["session_id"] as? String == id && message["thread_id"] as? String == desk.chat.thread)
        #expect(text(event)?.hasPrefix("🎥 جلسة جديدة") == true)
        #expect(event["unread"] as? Int == 2 && event["total_unread"] as? Int == 2)
        let coachSaw = try nextSession(coach).event
        #expect(text(coachSaw)?.hasPrefix("🎥 New Session Scheduled") == true && coachSaw["unread"] as? Int == 0)

        // The client's accept is the next message; she made it, so her side has read the thread.
        _ = try client.result("session.act", ["session_id": id, "action": "accept"])
        let accepted = try nextSession(coach, status: "scheduled").event
        #expect((accepted["message"] as? [String: Any])?["seq"] as? Int == 3 && accepted["unread"] as? Int == 1)

        let clientHistory = try #require(try client.result("history", ["thread_id": desk.chat.thread])["messages"] as? [[String: Any]])
        #expect(clientHistory.map { $0["seq"] as? Int } == [3, 2, 1])
        #expect(clientHistory.map { $0["kind"] as? String } == ["system", "system", "text"])
        #expect((clientHistory[1]["text"] as? String)?.hasPrefix("🎥 جلسة جديدة") == true)
        let coachHistory = try #require(try coach.result("history", ["thread_id": desk.chat.thread])["messages"] as? [[String: Any]])
        #expect((coachHistory[1]["text"] as? String)?.hasPrefix("🎥 New Session Scheduled") == true)
        #expect(coachHistory[0]["session_id"] as? String == id)

        // The conversation list counts them; reading to the last seq clears them.
        let threads = try #require(try coach.result("threads")["threads"] as? [[String: Any]])
        #expect(threads.first { $0["thread_id"] as? String == desk.chat.thread }?["unread"] as? Int == 1)
        #expect(try coach.result("thread.read", ["thread_id": desk.chat.thread, "seq": 3])["unread"] as? Int == 0)
    }

    /// A coach and a linked client on `server`: the coach's account and their thread.
    func linkedPair(_ server: TestServer) throws -> (coach: (access: String, refresh: String, id: String), thread: String) {
        let pair = try CoachingFixture.linkedPair(on: server)
        return (pair.coach, pair.thread)
    }

    /// The system message's text in a `session` event.
    func text(_ event: [String: Any]) -> String? {
        (event["message"] as? [String: Any])?["text"] as? String
    }


    /// A's session scheduled at `start`; C's invite for the same hour held in needs_resolution.
    func conflict(_ desk: Desk, _ coach: SpotterSocket, _ clientA: SpotterSocket, start: Int) throws -> (existing: String, proposed: String) {
        let existing = try coach.result("session.invite", ["thread_id": desk.chat.thread, "start": start, "duration_minutes": 60,
                                                           "purpose": "Strength"])
        let existingID = try #require(existing["id"] as? String)
        _ = try clientA.result("session.act", ["session_id": existingID, "action": "accept"])
        let proposed = try coach.result("session.invite", ["thread_id": desk.threadC, "start": start + 1800,
                                                           "duration_minutes": 30, "purpose": "Intro"])
        #expect(proposed["status"] as? String == "needs_resolution")
        #expect(proposed["conflict_with"] as? String == existingID)
        let list = try coach.result("sessions", [:])
        #expect(list["pending_resolutions"] as? Int == 1)
        return (existingID, try #require(proposed["id"] as? String))
    }

    @Test func theThreeWaysOutOfAConflict() throws {
        let desk = try Desk()
        defer { desk.chat.server.stop() }
        let coach = try desk.chat.socket(desk.fixture.coachX.access)
        let clientA = try desk.chat.socket(desk.fixture.clientA.access)
        let clientC = try desk.chat.socket(desk.fixture.clientC.access)
        let day = 86_400

        // 1. Keep the existing session: the proposed one is not created.
        var pair = try conflict(desk, coach, clientA, start: Self.now() + day)
        let kept = try coach.result("session.act", ["session_id": pair.proposed, "action": "keep_existing"])
        #expect(kept["status"] as? String == "cancelled")
        #expect(try coach.result("sessions", [:])["pending_resolutions"] as? Int == 0)

        // 2. Ask the existing client to move; she accepts: she moves, the proposed one goes on.
        pair = try conflict(desk, coach, clientA, start: Self.now() + 3 * day)
        let newStart = Self.now() + 4 * day
        let askedReply = try coach.result("session.act", ["session_id": pair.proposed, "action": "ask_reschedule", "start": newStart])
        // The reply is the session the command names (still waiting); the existing one comes as an event.
        #expect(askedReply["id"] as? String == pair.proposed && askedReply["status"] as? String == "needs_resolution")
        var asked = try nextSession(clientA)
        while asked.session["id"] as? String != pair.existing || asked.session["status"] as? String != "reschedule_requested" {
            asked = try nextSession(clientA)
        }
        #expect(text(asked.event)?.contains("Coach is asking to move your session from") == true)
        // Issue 26: client A's answer is about her own session; the coach's session with client C, which her
        // accept lets go on, is not hers to see (its meet_url above all).
        let moved = try clientA.result("session.act", ["session_id": pair.existing, "action": "accept"])
        #expect(moved["id"] as? String == pair.existing && moved["status"] as? String == "scheduled")
        #expect(moved["client_id"] as? String == desk.fixture.clientA.id)
        // Her event names her action; client C's session, which goes on because of it, changed by the server's doing.
        let accepted = try nextSession(clientA, status: "scheduled")
        #expect(accepted.session["id"] as? String == pair.existing && accepted.event["change"] as? String == "accept")
        let goesOn = try nextSession(clientC, status: "invited")
        #expect(goesOn.session["id"] as? String == pair.proposed && goesOn.event["change"] as? String == "updated")
        let list = try coach.result("sessions", ["from": Self.now(), "to": Self.now() + 10 * day])
        let sessions = try #require(list["sessions"] as? [[String: Any]])
        let byID = Dictionary(uniqueKeysWithValues: sessions.map { ($0["id"] as! String, $0) })
        #expect(byID[pair.existing]?["status"] as? String == "scheduled" && byID[pair.existing]?["start"] as? Int == newStart)
        #expect(byID[pair.proposed]?["status"] as? String == "invited")
        _ = try clientC.result("session.act", ["session_id": pair.proposed, "action": "accept"])

        // 3. Cancel the existing session (with the reason) and confirm the proposed one.
        pair = try conflict(desk, coach, clientA, start: Self.now() + 6 * day)
        _ = try coach.result("session.act", ["session_id": pair.proposed, "action": "replace_existing", "reason": "Coach unavailable"])
        var cancelled = try nextSession(clientA)
        while cancelled.session["id"] as? String != pair.existing || cancelled.session["status"] as? String != "cancelled" {
            cancelled = try nextSession(clientA)
        }
        #expect(text(cancelled.event)?.contains("Reason: Coach unavailable") == true)
        #expect(try coach.result("sessions", [:])["pending_resolutions"] as? Int == 0)
    }

    @Test func badInputIsRefusedInBothLanguages() throws {
        let desk = try Desk()
        defer { desk.chat.server.stop() }
        let coach = try desk.chat.socket(desk.fixture.coachX.access, headers: [("Accept-Language", "ar")])
        func invite(_ fields: [String: Any]) throws -> [String: Any] {
            var all: [String: Any] = ["thread_id": desk.chat.thread, "start": Self.now() + 3600, "duration_minutes": 30,
                                      "purpose": "x"]
            all.merge(fields) { $1 }
            return try coach.command("session.invite", all)
        }
        #expect(try errorCode(invite(["start": Self.now() - 10])) == "start_in_past")
        #expect(try errorCode(invite(["duration_minutes": 70])) == "invalid_duration")
        #expect(try errorCode(invite(["duration_minutes": 22])) == "invalid_duration")
        #expect(try errorCode(invite(["purpose": String(repeating: "x", count: 201)])) == "invalid_purpose")
        #expect(try errorCode(invite(["thread_id": "nope"])) == "forbidden")
        #expect(try errorCode(coach.command("session.act", ["session_id": "nope", "action": "accept"])) == "session_not_found")
        #expect(try errorCode(coach.command("session.act", ["session_id": "nope", "action": "expire"])) == "bad_request")
        let refused = try invite(["duration_minutes": 70])
        let message = (refused["error"] as? [String: Any])?["message"] as? String ?? ""
        #expect(message.hasArabic)
        #expect(try coach.result("sessions", [:])["sessions"] as? [Any] == nil
                || (try coach.result("sessions", [:])["sessions"] as? [Any])?.isEmpty == true)
    }

    @Test func sessionsSurviveARestartAndReplayOnResume() throws {
        let directory = NSTemporaryDirectory() + "spotter-sessions-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var id = ""
        var coachToken = ""
        do {
            let server = try TestServer(dataDirectory: directory)
            let (coach, thread) = try linkedPair(server)
            let socket = try SpotterSocket(port: server.port, token: coach.access)
            let invited = try socket.result("session.invite", ["thread_id": thread, "start": Self.now() + 7200,
                                                               "duration_minutes": 45, "purpose": "Plan"])
            id = try #require(invited["id"] as? String)
            coachToken = coach.access
            _ = server.stop()
        }
        let server = try TestServer(dataDirectory: directory)
        defer { server.stop() }
        let socket = try SpotterSocket(port: server.port, token: coachToken)
        let list = try #require(try socket.result("sessions", [:])["sessions"] as? [[String: Any]])
        #expect(list.map { $0["id"] as? String } == [id])
        #expect(list.first?["status"] as? String == "invited")
        // Replayed from the log like a message.
        _ = try socket.result("resume", ["cursor": 0])
        let replayed = socket.drain(for: 0.3).filter { $0["type"] as? String == "session" }
        #expect(replayed.count == 1 && (replayed.first?["session"] as? [String: Any])?["id"] as? String == id)
    }

    @Test func anUnansweredInviteExpiresOnceEvenAcrossARestart() throws {
        let directory = NSTemporaryDirectory() + "spotter-sessions-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clock = TestClock(now: Int64(Self.now()))
        var coachToken = ""
        var id = ""
        do {
            let server = try TestServer(dataDirectory: directory) { $0.clock = clock }
            let (coach, thread) = try linkedPair(server)
            let socket = try SpotterSocket(port: server.port, token: coach.access)
            id = try #require(try socket.result("session.invite", ["thread_id": thread, "start": clock.now + 120,
                                                                   "duration_minutes": 15, "purpose": "Soon"])["id"] as? String)
            coachToken = coach.access
            _ = server.stop()  // down while the start passes
        }
        clock.advance(by: 600)
        let server = try TestServer(dataDirectory: directory) { $0.clock = clock }
        defer { server.stop() }
        let socket = try SpotterSocket(port: server.port, token: coachToken)
        // The timers' first pass after the restart expires it (the loop's own pass may have come first).
        server.server.tickTimers()
        let list = try #require(try socket.result("sessions", ["from": clock.now - 86_400, "to": clock.now + 86_400])["sessions"] as? [[String: Any]])
        #expect(list.first { $0["id"] as? String == id }?["status"] as? String == "expired")
        server.server.tickTimers()  // more passes: nothing fires twice
        server.server.tickTimers()
        let live = socket.drain(for: 0.3).filter { $0["type"] as? String == "session" }
        #expect(live.count <= 1)  // the expiry, if it fired after this socket went live
        _ = try socket.result("resume", ["cursor": 0])
        let replayed = socket.drain(for: 0.3).filter { $0["type"] as? String == "session" }
        #expect(replayed.compactMap { ($0["session"] as? [String: Any])?["status"] as? String } == ["invited", "expired"])
    }

    /// Every session command × every kind of user: the thread's coach and client, another coach, another coach's
    /// client, a client with no coach, an admin. Only the participants reach a session; the calendar shows each
    /// user their own sessions only (the meeting link never reaches anyone else).
    @Test func theAuthorizationMatrix() throws {
        let chat = try ChatFixture {
            $0.commandBurst = 1000
            $0.sessionCreatesPerMinute = 1000  // the rate is SessionLimitsTests'; here only who may act
        }
        defer { chat.server.stop() }
        let f = chat.fixture
        let users: [(name: String, token: String)] = [
            ("coach", f.coachX.access), ("client", f.clientA.access), ("other coach", f.coachY.access),
            ("other coach's client", f.clientB.access), ("client without coach", f.clientC.access), ("admin", f.admin.access),
        ]
        var sockets: [String: SpotterSocket] = [:]
        for user in users { sockets[user.name] = try chat.socket(user.token) }
        let create: [String: Any] = ["thread_id": chat.thread, "start": Self.now() + 86_400, "duration_minutes": 30, "purpose": "x"]
        for user in users {
            let socket = try #require(sockets[user.name])
            let invite = try socket.command("session.invite", create)
            let request = try socket.command("session.request", create.merging(["start": Self.now() + 3 * 86_400]) { $1 })
            #expect(errorCode(invite) == (user.name == "coach" ? nil : "forbidden"), "\(user.name) invite")
            #expect(errorCode(request) == (user.name == "client" ? nil : "forbidden"), "\(user.name) request")
        }
        // One invite by the coach; every action by every user on it (a fresh invite per action: the table is in
        // SessionMachineTests, here only who reaches the session).
        for action in ["accept", "decline", "propose", "reschedule", "cancel", "join", "leave", "complete",
                       "keep_existing", "ask_reschedule", "replace_existing"] {
            for user in users where user.name != "coach" && user.name != "client" {
                let invited = try #require(try sockets["coach"]!.result("session.invite", create.merging(
                    ["start": Self.now() + 5 * 86_400 + Int.random(in: 0..<1_000_000)]) { $1 })["id"] as? String)
                let reply = try sockets[user.name]!.command("session.act", ["session_id": invited, "action": action,
                                                                           "start": Self.now() + 9 * 86_400])
                #expect(errorCode(reply) == "session_not_found", "\(user.name) \(action)")
                _ = try sockets["coach"]!.result("session.act", ["session_id": invited, "action": "cancel"])
            }
        }
        // The calendar: the participants see the sessions, nobody else sees any.
        for user in users {
            let list = try #require(try sockets[user.name]!.result("sessions", ["from": Self.now(), "to": Self.now() + 90 * 86_400])["sessions"] as? [[String: Any]])
            let participant = user.name == "coach" || user.name == "client"
            #expect(participant ? !list.isEmpty : list.isEmpty, "\(user.name) sees \(list.count) sessions")
        }
        // No session event reached anyone else.
        for user in users where user.name != "coach" && user.name != "client" {
            #expect(sockets[user.name]!.drain(for: 0.1).filter { $0["type"] as? String == "session" }.isEmpty, "\(user.name)")
        }
    }

    @Test func theJoinWindowIsAServerSetting() throws {
        let chat = try ChatFixture { $0.sessionJoinEarlySeconds = 60 }
        defer { chat.server.stop() }
        let coach = try chat.socket(chat.fixture.coachX.access)
        let client = try chat.socket(chat.fixture.clientA.access)
        let id = try #require(try coach.result("session.invite", ["thread_id": chat.thread, "start": Self.now() + 300,
                                                                   "duration_minutes": 15, "purpose": "x"])["id"] as? String)
        _ = try client.result("session.act", ["session_id": id, "action": "accept"])
        // Five minutes early: inside the default 10-minute window, outside this server's one minute.
        #expect(try errorCode(coach.command("session.act", ["session_id": id, "action": "join"])) == "outside_join_window")
    }
}
