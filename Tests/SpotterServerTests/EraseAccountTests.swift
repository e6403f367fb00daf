import Foundation
import Testing
import SpotterCore
import SpotterProtocol
import SpotterServer
import SpotterPorts
import TestSupport
import WebSocket

/// Erasing an account (issue 29, item 3) over real HTTP and sockets: who may, what proves it, what closes, and what
/// the other side keeps (Protocol/README.md, "Erasing an account").
@Suite("Erasing an account", .serialized)
struct EraseAccountTests {
    @Test func aWrongPasswordErasesNothingAndWrongTriesAreLimitedLikeSignIns() throws {
        let server = try TestServer()
        defer { server.stop() }
        let api = APIClient(port: server.port)
        let me = try api.signUp(role: "client", name: "Sara Keeps", email: "sara@keep.test", password: "secret1")
        func erase(_ body: [String: Any]?, language: String = "en") throws -> APIResponse {
            try api.call("DELETE", "/v1/me", body, token: me.access, headers: [("Accept-Language", language)])
        }

        #expect(try erase(nil).errorCode == "missing_field")
        #expect(try erase(["password": ""]).errorField == "password")
        #expect(try erase(["password": "secret1", "colour": "red"]).errorCode == "unknown_field")
        #expect(try erase(["password": 12]).errorCode == "bad_request")
        let wrong = try erase(["password": "secret2"], language: "ar")
        #expect(wrong.status == 401 && wrong.errorCode == "invalid_credentials" && wrong.errorField == "password")
        #expect(wrong.errorMessage?.hasArabic == true)
        #expect(try erase(["password": "secret1\u{0}\u{1B}[2J"]).errorCode == "invalid_credentials")
        #expect(try erase(["password": String(repeating: "x", count: 2 << 20)]).status == 413)
        // A code is no proof for an account with a password.
        #expect(try erase(["code": "123456"]).errorCode == "missing_field")

        // Nothing changed: the profile, the token, the sign-in.
        let profile = try api.call("GET", "/v1/me", token: me.access)
        #expect(profile.status == 200 && profile.string("full_name") == "Sara Keeps" && profile["erased_at"] == nil)
        #expect(try api.call("POST", "/v1/auth/signin", ["email": "sara@keep.test", "password": "secret1"]).status == 200)

        // Wrong passwords are counted per account as sign-ins are: past 5, even the right one waits.
        var codes: [String] = []
        for _ in 0..<5 { codes.append(try erase(["password": "nope123"]).errorCode ?? "none") }
        #expect(codes.last == "rate_limited", "\(codes)")
        let limited = try erase(["password": "secret1"])
        #expect(limited.status == 429 && limited.headers["Retry-After"] != nil)
        #expect(try api.call("GET", "/v1/me", token: me.access).string("email") == "sara@keep.test")
    }

    @Test func anErasureClosesEverySocketAndEndsEveryToken() throws {
        let server = try TestServer()
        defer { server.stop() }
        let api = APIClient(port: server.port)
        let me = try api.signUp(role: "client", name: "Gone Soon", email: "gone@erase.test")
        let tablet = try api.call("POST", "/v1/auth/signin", ["email": "gone@erase.test", "password": "secret1"])
        let tabletAccess = try #require(tablet.string("access_token"))
        let tabletRefresh = try #require(tablet.string("refresh_token"))
        let phone = try SpotterSocket(port: server.port, token: me.access)
        let other = try SpotterSocket(port: server.port, token: tabletAccess)
        let bystander = try api.signUp(role: "client", name: "Stays", email: "stays@erase.test")
        let watching = try SpotterSocket(port: server.port, token: bystander.access)

        let erased = try api.call("DELETE", "/v1/me", ["password": "secret1"], token: me.access)
        #expect(erased.status == 204, "\(erased.text)")
        // Every socket of the account closes with 4004 (both sessions); another user's stays open.
        #expect(try phone.ws.awaitClose() == .some(CloseCode(SpotterCloseCode.accountErased)))
        #expect(try other.ws.awaitClose() == .some(CloseCode(SpotterCloseCode.accountErased)))
        #expect(try watching.result("me")["id"] as? String == bystander.id)

        // No token works any more: access (HTTP and the socket's handshake), refresh, sign-in.
        for token in [me.access, tabletAccess] {
            #expect(try api.call("GET", "/v1/me", token: token).errorCode == "session_revoked")
            #expect(throws: (any Error).self) { try SpotterSocket(port: server.port, token: token) }
        }
        for refresh in [me.refresh, tabletRefresh] {
            #expect(try api.call("POST", "/v1/auth/refresh", ["refresh_token": refresh]).errorCode == "refresh_token_invalid")
        }
        #expect(try api.call("POST", "/v1/auth/signin", ["email": "gone@erase.test", "password": "secret1"]).errorCode
                == "invalid_credentials")
        #expect(try server.metric("spotter_accounts_erased_total") == 1)

        // The email is free: a new account, a new id.
        let again = try api.signUp(role: "client", name: "Someone New", email: "gone@erase.test")
        #expect(again.id != me.id)
        #expect(try api.call("GET", "/v1/me", token: again.access).string("full_name") == "Someone New")
    }

    @Test func aPhoneAccountProvesItselfWithACodeAndThePhoneIsFreeAfter() throws {
        let server = try TestServer()
        defer { server.stop() }
        let api = APIClient(port: server.port)
        func code() throws -> String { try #require(server.otp.lastCode(for: "+966551230001")) }
        #expect(try api.call("POST", "/v1/auth/otp/request", ["phone": "0551230001"]).status == 202)
        let signedIn = try api.call("POST", "/v1/auth/otp/verify", ["phone": "0551230001", "code": try code()])
        let token = try #require(signedIn.string("access_token"))
        let id = try #require(signedIn.object("user")?["id"] as? String)

        // The sign-in used its code up; a code is needed, and a password is no proof here.
        #expect(try api.call("DELETE", "/v1/me", ["password": "secret1"], token: token).errorField == "code")
        #expect(try api.call("DELETE", "/v1/me", ["code": "123456"], token: token).errorCode == "otp_expired")
        // A code asked for the usual way; a wrong one is invalid credentials and erases nothing.
        #expect(try api.call("POST", "/v1/auth/otp/request", ["phone": "0551230001"]).status == 202)
        let right = try code()
        let wrong = try api.call("DELETE", "/v1/me", ["code": right == "000000" ? "111111" : "000000"], token: token)
        #expect(wrong.status == 401 && wrong.errorCode == "invalid_credentials" && wrong.errorField == "code")
        #expect(try api.call("GET", "/v1/me", token: token).string("phone") == "+966551230001")

        #expect(try api.call("DELETE", "/v1/me", ["code": right], token: token).status == 204)
        #expect(try api.call("GET", "/v1/me", token: token).errorCode == "session_revoked")
        // The phone is free: its next sign-in makes a new account.
        #expect(try api.call("POST", "/v1/auth/otp/request", ["phone": "0551230001"]).status == 202)
        let fresh = try api.call("POST", "/v1/auth/otp/verify", ["phone": "0551230001", "code": try code()])
        let freshID = try #require(fresh.object("user")?["id"] as? String)
        #expect(freshID != id)
    }

    @Test func aCoachIsRefusedWhileClientsAreLinkedAndTheCoachKeepsADeletedAccountsThread() throws {
        let fixture = try CoachingFixture()
        defer { fixture.server.stop() }
        let api = fixture.api
        let thread = try #require(try api.call("GET", "/v1/me/coach", token: fixture.clientA.access).string("thread_id"))
        let coachSocket = try SpotterSocket(port: fixture.server.port, token: fixture.coachX.access)
        let clientSocket = try SpotterSocket(port: fixture.server.port, token: fixture.clientA.access)
        #expect(try clientSocket.result("message.send", ["thread_id": thread, "client_message_id": "m1", "text": "hello coach"])["seq"]
                as? Int == 1)
        _ = try coachSocket.next("message")
        let start = Int(Date().timeIntervalSince1970) + 3 * 86_400
        let session = try coachSocket.result("session.invite", ["thread_id": thread, "start": start, "duration_minutes": 30,
                                                                 "purpose": "Check-in"])
        let sessionID = try #require(session["id"] as? String)

        // Refused while Amal is linked: the count, in both languages, and nothing changed.
        let refused = try api.call("DELETE", "/v1/me", ["password": "secret1"], token: fixture.coachX.access)
        #expect(refused.status == 409 && refused.errorCode == "coach_has_clients")
        #expect((refused.json["error"] as? [String: Any])?["linked_clients"] as? Int == 1)
        #expect(refused.errorMessage?.contains("Hand your client to another coach") == true, "\(refused.text)")
        let arabic = try api.call("DELETE", "/v1/admin/users/\(fixture.coachX.id)", token: fixture.admin.access,
                                  headers: [("Accept-Language", "ar")])
        #expect(arabic.errorCode == "coach_has_clients" && arabic.errorMessage?.hasArabic == true)
        #expect(try api.call("GET", "/v1/me", token: fixture.coachX.access).string("full_name") == "Xavier Coach")
        #expect(try coachSocket.result("me")["id"] as? String == fixture.coachX.id)

        // Amal erases her account: the link ends, and the coach keeps the thread with a deleted account.
        #expect(try api.call("DELETE", "/v1/me", ["password": "secret1"], token: fixture.clientA.access).status == 204)
        let ended = try coachSocket.next("thread")
        #expect(ended["thread_id"] as? String == thread && ended["active"] as? Bool == false)
        #expect(ended["peer_name"] is NSNull, "\(ended)")
        let listed = try #require((try coachSocket.result("threads")["threads"] as? [[String: Any]])?.first { $0["thread_id"] as? String == thread })
        #expect(listed["peer_id"] as? String == fixture.clientA.id && listed["peer_erased"] as? Bool == true)
        #expect(listed["peer_name"] == nil && listed["active"] as? Bool == false)
        // Her message is the log's to forget (its `erasure` record); the thread's place in the history stays.
        #expect(try coachSocket.wholeHistory(thread).count >= 1)
        // The session keeps its times (cancelled with the link, as an ended link's sessions are).
        let sessions = try coachSocket.result("sessions", ["from": start - 86_400, "to": start + 86_400])["sessions"] as? [[String: Any]]
        let kept = try #require(sessions?.first { $0["id"] as? String == sessionID }, "\(String(describing: sessions))")
        #expect(kept["start"] as? Int == start && kept["duration_minutes"] as? Int == 30)
        // Other lists forget her: the coach's clients, the profile.
        let clients = try api.call("GET", "/v1/coach/clients", token: fixture.coachX.access)
        #expect(clients.status == 200 && clients.array.isEmpty, "\(clients.text)")
        #expect(try api.call("GET", "/v1/clients/\(fixture.clientA.id)/profile", token: fixture.coachX.access).status != 200)

        // With no client linked, the coach may go; the coach is then no longer offered to clients.
        #expect(try api.call("DELETE", "/v1/me", ["password": "secret1"], token: fixture.coachX.access).status == 204)
        let coaches = try api.call("GET", "/v1/coaches", token: fixture.clientC.access)
        #expect(!coaches.text.contains(fixture.coachX.id) && coaches.text.contains(fixture.coachY.id))
        #expect(try api.call("POST", "/v1/me/coach", ["coach_id": fixture.coachX.id], token: fixture.clientC.access).errorCode
                == "coach_not_found")
    }

    @Test func aCoachWhoseClientsMovedMayGo() throws {
        let fixture = try CoachingFixture()
        defer { fixture.server.stop() }
        let api = fixture.api
        // Badr, Yara's one client, asks to move to Xavier; an admin approves: Yara has no client left.
        let asked = try api.call("POST", "/v1/me/coach-change-requests", ["coach_id": fixture.coachX.id, "reason": "closer"],
                                 token: fixture.clientB.access)
        let request = try #require(asked.string("id"), "\(asked.text)")
        #expect(try api.call("DELETE", "/v1/me", ["password": "secret1"], token: fixture.coachY.access).errorCode == "coach_has_clients")
        #expect(try api.call("POST", "/v1/admin/coach-change-requests/\(request)/approve", token: fixture.admin.access).status == 200)
        #expect(try api.call("DELETE", "/v1/me", ["password": "secret1"], token: fixture.coachY.access).status == 204)
        // Badr's old thread with Yara reads as a deleted account.
        let badr = try SpotterSocket(port: fixture.server.port, token: fixture.clientB.access)
        let threads = try #require(try badr.result("threads")["threads"] as? [[String: Any]])
        let old = try #require(threads.first { $0["peer_id"] as? String == fixture.coachY.id })
        #expect(old["peer_erased"] as? Bool == true && old["peer_name"] == nil)
        let current = try #require(threads.first { $0["peer_id"] as? String == fixture.coachX.id })
        #expect(current["peer_erased"] as? Bool == false && current["peer_name"] as? String == "Xavier Coach")
    }

    @Test func anAdminErasesAnAccountAndNoOneElseMay() throws {
        let fixture = try CoachingFixture()
        defer { fixture.server.stop() }
        let api = fixture.api
        let target = fixture.clientC
        let socket = try SpotterSocket(port: fixture.server.port, token: target.access)
        // Another client, a coach, no token: refused, and nothing changed.
        #expect(try api.call("DELETE", "/v1/admin/users/\(target.id)", token: fixture.clientA.access).errorCode == "forbidden")
        #expect(try api.call("DELETE", "/v1/admin/users/\(target.id)", token: fixture.coachY.access).errorCode == "forbidden")
        #expect(try api.call("DELETE", "/v1/admin/users/\(target.id)").errorCode == "unauthorized")
        #expect(try api.call("DELETE", "/v1/admin/users/\(target.id)", ["password": "secret1"], token: target.access).errorCode == "forbidden")
        #expect(try api.call("GET", "/v1/me", token: target.access).string("full_name") == "Chadi Client")
        // An admin erases others, not themself (that is DELETE /v1/me); an unknown id is not found.
        #expect(try api.call("DELETE", "/v1/admin/users/\(fixture.admin.id)", token: fixture.admin.access).errorCode == "forbidden")
        #expect(try api.call("DELETE", "/v1/admin/users/no-such-user", token: fixture.admin.access).errorCode == "not_found")
        #expect(try api.call("DELETE", "/v1/admin/users/%00%27%20OR%201%3D1", token: fixture.admin.access).errorCode == "not_found")
        #expect(try api.call("DELETE", "/v1/admin/users/" + String(repeating: "a", count: 4000), token: fixture.admin.access)
                .status / 100 == 4)

        #expect(try api.call("DELETE", "/v1/admin/users/\(target.id)", token: fixture.admin.access).status == 204)
        #expect(try socket.ws.awaitClose() == .some(CloseCode(SpotterCloseCode.accountErased)))
        #expect(try api.call("GET", "/v1/me", token: target.access).errorCode == "session_revoked")
        // Again: nothing left to do, still 204. The admin's list shows the tombstone.
        #expect(try api.call("DELETE", "/v1/admin/users/\(target.id)", token: fixture.admin.access).status == 204)
        let users = try api.call("GET", "/v1/admin/users?role=client", token: fixture.admin.access)
        let tombstone = try #require((users.json["users"] as? [[String: Any]])?.first { $0["id"] as? String == target.id }, "\(users.text)")
        #expect(tombstone["erased_at"] is Int && tombstone["full_name"] == nil && tombstone["email"] == nil)
        #expect(tombstone["role"] as? String == "client")
    }

    @Test func aRestartKeepsTheTombstoneAndStillRefusesTheTokens() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("spotter-erase-restart-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var server = try TestServer(dataDirectory: directory)
        let (coach, client, thread) = try CoachingFixture.linkedPair(on: server)
        var api = APIClient(port: server.port)
        #expect(try api.call("DELETE", "/v1/me", ["password": "secret1"], token: client.access).status == 204)
        #expect(server.stop())

        server = try TestServer(dataDirectory: directory)
        defer { server.stop() }
        api = APIClient(port: server.port)
        // The access token has not expired, and the server that refused it is gone: the revocation was kept.
        #expect(try api.call("GET", "/v1/me", token: client.access).errorCode == "session_revoked")
        let coachSocket = try SpotterSocket(port: server.port, token: coach.access)
        let listed = try #require((try coachSocket.result("threads")["threads"] as? [[String: Any]])?.first)
        #expect(listed["thread_id"] as? String == thread && listed["peer_erased"] as? Bool == true)
        #expect(listed["peer_name"] == nil && listed["active"] as? Bool == false)
        #expect(errorCode(try coachSocket.command("message.send", ["thread_id": thread, "client_message_id": "k1", "text": "hi"]))
                == "thread_inactive")
        #expect(try api.call("POST", "/v1/auth/signin", ["email": "s@x.test", "password": "secret1"]).errorCode == "invalid_credentials")
    }
}
