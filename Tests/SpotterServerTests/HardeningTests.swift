import Foundation
import SpotterCore
import Testing
import TestSupport
import WebSocket

/// Sends one raw text frame and returns the next frame that is a reply.
private func rawReply(_ socket: SpotterSocket, _ text: String) throws -> [String: Any] {
    socket.ws.send(text: text)
    while true {
        let frame = try socket.ws.nextJSON()
        if frame["type"] as? String == "reply" { return frame }
    }
}

private func errorField(_ reply: [String: Any]) -> String? { (reply["error"] as? [String: Any])?["field"] as? String }

@Suite("Revoked sessions", .serialized)
struct RevocationTests {
    @Test func signOutClosesThatSessionsSocketsAndRefusesItsTokensOnly() throws {
        let server = try TestServer()
        defer { server.stop() }
        let api = APIClient(port: server.port)
        let first = try api.signUp(role: "client", name: "Sara", email: "sara@example.com")
        let second = try api.call("POST", "/v1/auth/signin", ["email": "sara@example.com", "password": "secret1"])
        let otherAccess = try #require(second.string("access_token"))
        let phone = try SpotterSocket(port: server.port, token: first.access)
        let tablet = try SpotterSocket(port: server.port, token: first.access)
        let laptop = try SpotterSocket(port: server.port, token: otherAccess)

        #expect(try api.call("POST", "/v1/auth/signout", ["refresh_token": first.refresh]).status == 204)
        #expect(try phone.ws.awaitClose() == .some(CloseCode(4003)))
        #expect(try tablet.ws.awaitClose() == .some(CloseCode(4003)))
        // The access token of the revoked session is refused everywhere, at once.
        let me = try api.call("GET", "/v1/me", token: first.access)
        #expect(me.status == 401)
        #expect(me.errorCode == "session_revoked")
        let upgrade = try HTTPTestClient(port: server.port).request(
            "GET", "/v1/ws", headers: [("Upgrade", "websocket"), ("Connection", "Upgrade"), ("Sec-WebSocket-Version", "13"),
                                       ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="), ("Authorization", "Bearer \(first.access)")])
        #expect(upgrade.status == 401)
        #expect(upgrade.bodyText.contains("session_revoked"))
        // The other session goes on.
        #expect(try laptop.result("me")["id"] as? String == first.id)
        #expect(try api.call("GET", "/v1/me", token: otherAccess).status == 200)
        #expect(try server.metric("spotter_sessions_revoked_total") == 1)
    }

    @Test func aReusedRefreshTokenOverHTTPClosesTheSessionsSockets() throws {
        let server = try TestServer()
        defer { server.stop() }
        let api = APIClient(port: server.port)
        let session = try api.signUp(role: "coach", name: "Carter", email: "carter@example.com")
        let socket = try SpotterSocket(port: server.port, token: session.access)
        #expect(try api.call("POST", "/v1/auth/refresh", ["refresh_token": session.refresh]).status == 200)
        let reuse = try api.call("POST", "/v1/auth/refresh", ["refresh_token": session.refresh])
        #expect(reuse.errorCode == "refresh_token_reused")
        #expect(try socket.ws.awaitClose() == .some(CloseCode(4003)))
        #expect(try api.call("GET", "/v1/me", token: session.access).errorCode == "session_revoked")
    }

    /// A restart reloads the revocations its tokens could still need, counted back from now on the server's clock:
    /// here the last second of the revoked session's access token, on a clock years behind the system's.
    @Test func revocationsSurviveARestart() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("spotter-revoked-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clock = TestClock(now: 1_700_000_000)
        let session: (access: String, refresh: String, id: String)
        do {
            let server = try TestServer(dataDirectory: directory) { $0.clock = clock }
            let api = APIClient(port: server.port)
            session = try api.signUp(role: "client", name: "Sara", email: "sara@example.com")
            #expect(try api.call("POST", "/v1/auth/signout", ["refresh_token": session.refresh]).status == 204)
            #expect(server.stop())
        }
        clock.advance(by: 900 - 1)
        let restarted = try TestServer(dataDirectory: directory) { $0.clock = clock }
        defer { restarted.stop() }
        #expect(try APIClient(port: restarted.port).call("GET", "/v1/me", token: session.access).errorCode == "session_revoked")
    }

    @Test func aSocketRefreshWithAnotherAccountsTokenChangesNothing() throws {
        let server = try TestServer()
        defer { server.stop() }
        let api = APIClient(port: server.port)
        let attacker = try api.signUp(role: "client", name: "Mallory", email: "mallory@example.com")
        let victim = try api.signUp(role: "client", name: "Victor", email: "victor@example.com")
        let socket = try SpotterSocket(port: server.port, token: attacker.access)
        let refused = try socket.command("auth.refresh", ["refresh_token": victim.refresh])
        #expect(errorCode(refused) == "forbidden")
        // The victim's token was not rotated: it still refreshes, and nothing was revoked.
        let refreshed = try api.call("POST", "/v1/auth/refresh", ["refresh_token": victim.refresh])
        #expect(refreshed.status == 200, "\(refreshed.text)")
        #expect(try api.call("GET", "/v1/me", token: victim.access).status == 200)
        #expect(try socket.result("me")["id"] as? String == attacker.id)
    }
}

@Suite("The command envelope and fields", .serialized)
struct ContractTests {
    @Test func idsAreRequiredAndBounded() throws {
        let server = try TestServer()
        defer { server.stop() }
        let session = try APIClient(port: server.port).signUp(role: "client", name: "Sara", email: "sara@example.com")
        let socket = try SpotterSocket(port: server.port, token: session.access)
        let missing = try rawReply(socket, #"{"type":"me"}"#)
        #expect(missing["id"] is NSNull)
        #expect(missing["ok"] as? Bool == false)
        #expect(errorCode(missing) == "missing_field" && errorField(missing) == "id")
        let long = try rawReply(socket, #"{"id":"\#(String(repeating: "x", count: 65))","type":"me"}"#)
        #expect(long["id"] is NSNull)
        #expect(errorCode(long) == "out_of_range" && errorField(long) == "id")
        let empty = try rawReply(socket, #"{"id":"","type":"me"}"#)
        #expect(errorCode(empty) == "out_of_range")
        let number = try rawReply(socket, #"{"id":7,"type":"me"}"#)
        #expect(number["id"] is NSNull)
        #expect(errorCode(number) == "bad_request" && errorField(number) == "id")
        let longest = String(repeating: "x", count: 64)
        let fine = try rawReply(socket, #"{"id":"\#(longest)","type":"me"}"#)
        #expect(fine["id"] as? String == longest && fine["ok"] as? Bool == true)
        // A resume without an id is not executed: no `live` marker, just the error.
        socket.ws.send(text: #"{"type":"resume","cursor":0}"#)
        let frames = socket.drain(for: 0.3)
        #expect(frames.count == 1, "\(frames)")
        #expect(frames.first.map(errorCode) == "missing_field")
    }

    @Test func unknownFieldsAreRefusedEverywhere() throws {
        let fixture = try CoachingFixture()
        defer { fixture.server.stop() }
        let api = fixture.api
        let thread = try #require(try api.call("GET", "/v1/me/coach", token: fixture.clientA.access).string("thread_id"))
        let socket = try SpotterSocket(port: fixture.server.port, token: fixture.clientA.access)
        let meal: [String: Any] = ["name": "Oats", "calories": 420, "protein_g": 15, "carbs_g": 65, "fats_g": 9,
                                   "meal_type": "breakfast", "ingredients": ["oats"], "text": "lost?"]
        let card = try socket.command("message.send", ["thread_id": thread, "client_message_id": "m1", "kind": "meal_log", "meal": meal])
        #expect(errorCode(card) == "unknown_field" && errorField(card) == "meal.text", "\(card)")
        let extra = try socket.command("threads", ["colour": "blue"])
        #expect(errorCode(extra) == "unknown_field" && errorField(extra) == "colour")
        // Nothing was stored by the refused card.
        #expect((try socket.result("history", ["thread_id": thread])["messages"] as? [Any])?.count == 0)

        let signUp = try api.call("POST", "/v1/auth/signup", [
            "role": "client", "full_name": "N", "email": "n@example.com", "password": "secret1",
            "password_confirmation": "secret1", "referrer": "x",
        ])
        #expect(signUp.status == 400 && signUp.errorCode == "unknown_field" && signUp.errorField == "referrer")
        let onboarding = try api.call("PUT", "/v1/me/onboarding", CoachingFixture.onboarding.merging(["shoe_size": 42]) { a, _ in a },
                                      token: fixture.clientC.access)
        #expect(onboarding.errorCode == "unknown_field" && onboarding.errorField == "shoe_size")
    }

    @Test func negativeCursorsAndSeqsAreOutOfRange() throws {
        let fixture = try CoachingFixture()
        defer { fixture.server.stop() }
        let thread = try #require(try fixture.api.call("GET", "/v1/me/coach", token: fixture.clientA.access).string("thread_id"))
        let socket = try SpotterSocket(port: fixture.server.port, token: fixture.clientA.access)
        let resume = try socket.command("resume", ["cursor": -1])
        #expect(errorCode(resume) == "out_of_range" && errorField(resume) == "cursor")
        #expect(errorCode(try socket.command("resume", [:])) == "missing_field")
        let read = try socket.command("thread.read", ["thread_id": thread, "seq": -3])
        #expect(errorCode(read) == "out_of_range" && errorField(read) == "seq")
    }

    @Test func aReusedMessageIDWithOtherContentConflicts() throws {
        let fixture = try CoachingFixture()
        defer { fixture.server.stop() }
        let thread = try #require(try fixture.api.call("GET", "/v1/me/coach", token: fixture.clientA.access).string("thread_id"))
        let socket = try SpotterSocket(port: fixture.server.port, token: fixture.clientA.access)
        let first = try socket.result("message.send", ["thread_id": thread, "client_message_id": "k1", "text": "original"])
        let retry = try socket.result("message.send", ["thread_id": thread, "client_message_id": "k1", "text": "original"])
        #expect(retry["seq"] as? Int == first["seq"] as? Int)
        let other = try socket.command("message.send", ["thread_id": thread, "client_message_id": "k1", "text": "changed"])
        #expect(errorCode(other) == "idempotency_conflict" && errorField(other) == "client_message_id")
        let history = try socket.result("history", ["thread_id": thread])["messages"] as? [[String: Any]]
        #expect(history?.map { $0["text"] as? String } == ["original"])
    }

    @Test func textIsBoundedInBytesAsWellAsCharacters() throws {
        let fixture = try CoachingFixture()
        defer { fixture.server.stop() }
        let thread = try #require(try fixture.api.call("GET", "/v1/me/coach", token: fixture.clientA.access).string("thread_id"))
        let socket = try SpotterSocket(port: fixture.server.port, token: fixture.clientA.access)
        // One character, 40,001 bytes.
        let zalgo = "a" + String(repeating: "\u{0301}", count: 20_000)
        let refused = try socket.command("message.send", ["thread_id": thread, "client_message_id": "z", "text": zalgo])
        #expect(errorCode(refused) == "message_too_long")
        // 1,000 Arabic letters with two marks each (6,000 bytes) are fine, and the preview stays small.
        let marked = String(repeating: "بَّ", count: 1000)
        _ = try socket.result("message.send", ["thread_id": thread, "client_message_id": "ar", "text": marked])
        let threads = try socket.result("threads")["threads"] as? [[String: Any]]
        let preview = try #require(threads?.first?["last_preview"] as? String)
        #expect(preview.count <= 100 && preview.utf8.count <= 400)
        let name = try fixture.api.call("POST", "/v1/auth/signup", [
            "role": "client", "full_name": "N" + String(repeating: "\u{0301}", count: 2000), "email": "z@example.com",
            "password": "secret1", "password_confirmation": "secret1",
        ])
        #expect(name.errorCode == "invalid_name")
    }
}

@Suite("Coach changes reach open sockets", .serialized)
struct LinkChangeTests {
    @Test func anApprovedChangeUpdatesEveryOpenSocket() throws {
        let fixture = try CoachingFixture()
        defer { fixture.server.stop() }
        let api = fixture.api
        let port = fixture.server.port
        let oldThread = try #require(try api.call("GET", "/v1/me/coach", token: fixture.clientA.access).string("thread_id"))
        let client = try SpotterSocket(port: port, token: fixture.clientA.access)
        let oldCoach = try SpotterSocket(port: port, token: fixture.coachX.access)
        let newCoach = try SpotterSocket(port: port, token: fixture.coachY.access)
        _ = try client.result("typing", ["thread_id": oldThread])

        let request = try api.call("POST", "/v1/me/coach-change-requests", ["coach_id": fixture.coachY.id], token: fixture.clientA.access)
        let id = try #require(request.string("id"))
        #expect(try api.call("POST", "/v1/admin/coach-change-requests/\(id)/approve", token: fixture.admin.access).status == 200)

        let oldForCoach = try oldCoach.next("thread")
        #expect(oldForCoach["thread_id"] as? String == oldThread)
        #expect(oldForCoach["active"] as? Bool == false)
        #expect(oldForCoach["peer_id"] as? String == fixture.clientA.id)
        let newForCoach = try newCoach.next("thread")
        #expect(newForCoach["active"] as? Bool == true)
        #expect(newForCoach["peer_name"] as? String == "Amal Client")
        let newThread = try #require(newForCoach["thread_id"] as? String)
        var seen: [String: Bool] = [:]
        for _ in 0..<2 {
            let event = try client.next("thread")
            #expect(event["cursor"] as? Int ?? 0 > 0)
            seen[event["thread_id"] as? String ?? ""] = event["active"] as? Bool
        }
        #expect(seen == [oldThread: false, newThread: true])

        // Sockets opened before the change no longer relay typing on the old thread, either way.
        #expect(errorCode(try client.command("typing", ["thread_id": oldThread])) == "thread_inactive")
        #expect(errorCode(try oldCoach.command("typing", ["thread_id": oldThread])) == "thread_inactive")
        // And the new pair can type to each other at once.
        _ = try newCoach.result("typing", ["thread_id": newThread])
        let typing = try client.next("typing")
        #expect(typing["thread_id"] as? String == newThread)
    }

    @Test func pickingACoachTellsTheCoach() throws {
        let fixture = try CoachingFixture()
        defer { fixture.server.stop() }
        let coach = try SpotterSocket(port: fixture.server.port, token: fixture.coachX.access)
        let picked = try fixture.api.call("POST", "/v1/me/coach", ["coach_id": fixture.coachX.id], token: fixture.clientC.access)
        #expect(picked.status == 201)
        let event = try coach.next("thread")
        #expect(event["thread_id"] as? String == picked.string("thread_id"))
        #expect(event["peer_id"] as? String == fixture.clientC.id)
        #expect(event["active"] as? Bool == true)
        #expect(try fixture.api.call("POST", "/v1/me/coach", ["coach_id": fixture.coachY.id], token: fixture.clientC.access)
            .errorCode == "coach_already_assigned")
    }
}

@Suite("Development mode", .serialized)
struct DevelopmentModeTests {
    @Test func codesAndLimitResetsOnlyInDevelopment() throws {
        for development in [false, true] {
            let server = try TestServer(logOTPCodes: true) {
                $0.development = development
                $0.signupsPerHour = 1
            }
            defer { server.stop() }
            let api = APIClient(port: server.port)
            let otp = try api.call("POST", "/v1/auth/otp/request", ["phone": "0551234567"])
            #expect(otp.status == 202)
            let code = otp.string("dev_code")
            #expect((code != nil) == development, "\(otp.text)")
            if let code {
                let verified = try api.call("POST", "/v1/auth/otp/verify", ["phone": "0551234567", "code": code])
                #expect(verified.status == 200)
            }
            _ = try api.signUp(role: "client", name: "One", email: "one@example.com")
            let second: [String: Any] = ["role": "client", "full_name": "Two", "email": "two@example.com",
                                         "password": "secret1", "password_confirmation": "secret1"]
            #expect(try api.call("POST", "/v1/auth/signup", second).status == 429)
            let reset = try api.call("POST", "/v1/dev/reset-limits")
            #expect(reset.status == (development ? 204 : 404))
            #expect(try api.call("POST", "/v1/auth/signup", second).status == (development ? 201 : 429))
        }
    }
}
