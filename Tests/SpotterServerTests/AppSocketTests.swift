import Foundation
import SpotterCore
import Testing
import TestSupport
import WebSocket

@Suite("The live socket /v1/ws", .serialized)
struct AppSocketTests {
    @Test func helloThenCommandsWithRepliesAndTypedErrors() throws {
        let server = try TestServer()
        defer { server.stop() }
        let session = try APIClient(port: server.port).signUp(role: "client", name: "Sara", email: "sara@example.com")
        // Browsers cannot set headers on a WebSocket: the token may come in the query.
        let socket = try WebSocketTestClient(
            port: server.port, path: "/v1/ws?access_token=\(session.access)", headers: [("Sec-WebSocket-Protocol", "spotter.v1")])
        #expect(socket.handshake.headers["Sec-WebSocket-Protocol"] == "spotter.v1")
        let hello = try socket.nextJSON()
        #expect(hello["type"] as? String == "hello")
        #expect(hello["protocol"] as? String == "spotter.v1")
        #expect((hello["user"] as? [String: Any])?["id"] as? String == session.id)

        socket.send(text: #"{"id":"c1","type":"me"}"#)
        let me = try socket.nextJSON()
        #expect(me["type"] as? String == "reply")
        #expect(me["id"] as? String == "c1")
        #expect(me["ok"] as? Bool == true)
        #expect((me["result"] as? [String: Any])?["full_name"] as? String == "Sara")

        socket.send(text: #"{"id":"c2","type":"teleport"}"#)
        let unknown = try socket.nextJSON()
        #expect(unknown["id"] as? String == "c2")
        #expect(unknown["ok"] as? Bool == false)
        #expect((unknown["error"] as? [String: Any])?["code"] as? String == "unknown_command")

        socket.send(text: "{oops")
        let malformed = try socket.nextJSON()
        #expect(malformed["id"] is NSNull)
        #expect((malformed["error"] as? [String: Any])?["code"] as? String == "bad_request")

        socket.send(.binary, [1, 2, 3])
        #expect((try socket.nextJSON()["error"] as? [String: Any])?["code"] as? String == "bad_request")

        // Still open after all of that.
        socket.send(text: #"{"id":"c3","type":"me"}"#)
        #expect(try socket.nextJSON()["id"] as? String == "c3")
    }

    @Test func errorsComeInTheLanguageChosenAtConnect() throws {
        let server = try TestServer()
        defer { server.stop() }
        let session = try APIClient(port: server.port).signUp(role: "client", name: "Sara", email: "sara@example.com")
        let socket = try WebSocketTestClient(
            port: server.port, path: "/v1/ws",
            headers: [("Authorization", "Bearer \(session.access)"), ("Accept-Language", "ar")])
        #expect(try unknownCommandError(on: socket)?.hasArabic == true)
    }

    @Test func theSavedLanguageAppliesWhenTheAppSendsNone() throws {
        let server = try TestServer()
        defer { server.stop() }
        let api = APIClient(port: server.port)
        let session = try api.signUp(role: "client", name: "Sara", email: "sara@example.com")
        #expect(try api.call("PUT", "/v1/me/language", ["language": "fr"], token: session.access).errorCode == "bad_request")
        let saved = try api.call("PUT", "/v1/me/language", ["language": "ar"], token: session.access)
        #expect(saved.string("language") == "ar")
        let socket = try WebSocketTestClient(port: server.port, path: "/v1/ws", headers: [("Authorization", "Bearer \(session.access)")])
        #expect(try unknownCommandError(on: socket)?.hasArabic == true)
    }

    @Test func noOrBadTokenIsRefusedBeforeTheUpgrade() throws {
        let server = try TestServer()
        defer { server.stop() }
        let client = try HTTPTestClient(port: server.port)
        let response = try client.request("GET", "/v1/ws", headers: [
            ("Upgrade", "websocket"), ("Connection", "Upgrade"), ("Sec-WebSocket-Version", "13"),
            ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="), ("Authorization", "Bearer nonsense"),
        ])
        #expect(response.status == 401)
        #expect(response.bodyText.contains("\"code\":\"unauthorized\""))
    }

    /// The socket's token runs out on the server's clock: warned `tokenExpiryWarningSeconds` before, closed with
    /// 4001 at its expiry (the socket's once-a-second check sees the moved clock; nothing sleeps).
    @Test func expiringTokenIsWarnedThenClosedWith4001() throws {
        let (server, clock, _, socket) = try coachOnATestClock()
        defer { server.stop() }
        let hello = try socket.nextJSON()
        #expect(hello["expires_at"] as? Int == Int(clock.now) + 900)
        clock.advance(by: 900 - 60)
        let warning = try socket.nextJSON()
        #expect(warning["type"] as? String == "auth.expiring")
        #expect(warning["seconds_left"] as? Int == 60)
        clock.advance(by: 60)
        #expect(try socket.awaitClose() == .some(CloseCode(4001)))
    }

    @Test func refreshingOnTheSocketKeepsItOpen() throws {
        let (server, clock, session, socket) = try coachOnATestClock()
        defer { server.stop() }
        let hello = try socket.nextJSON()
        let firstExpiry = try #require(hello["expires_at"] as? Int)
        clock.advance(by: 900 - 60)
        #expect(try socket.nextJSON()["type"] as? String == "auth.expiring")
        socket.send(text: #"{"id":"r1","type":"auth.refresh","refresh_token":"\#(session.refresh)"}"#)
        let reply = try socket.nextJSON()
        #expect(reply["ok"] as? Bool == true, "\(reply)")
        let result = try #require(reply["result"] as? [String: Any])
        let secondExpiry = try #require(result["expires_at"] as? Int)
        #expect(secondExpiry == Int(clock.now) + 900)
        #expect((result["session"] as? [String: Any])?["refresh_token"] as? String != session.refresh)
        // Well past the first token's expiry the socket is warned about the second one (a check ran then and did
        // not close it), and still answers.
        clock.set(Int64(secondExpiry) - 60)
        #expect(clock.now > firstExpiry)
        let warning = try socket.nextJSON()
        #expect(warning["type"] as? String == "auth.expiring" && warning["expires_at"] as? Int == secondExpiry)
        socket.send(text: #"{"id":"c9","type":"me"}"#)
        #expect(try socket.nextJSON()["id"] as? String == "c9")

        // The old refresh token again: the session is revoked and the socket closed with 4003.
        socket.send(text: #"{"id":"r2","type":"auth.refresh","refresh_token":"\#(session.refresh)"}"#)
        let revoked = try socket.nextJSON()
        #expect((revoked["error"] as? [String: Any])?["code"] as? String == "refresh_token_reused")
        #expect(try socket.awaitClose() == .some(CloseCode(4003)))
    }

    /// A server whose clock the test moves, and a coach signed up on it with their socket open (hello not read yet).
    /// The caller stops the server.
    private func coachOnATestClock() throws
        -> (server: TestServer, clock: TestClock, session: (access: String, refresh: String, id: String), socket: WebSocketTestClient) {
        let clock = TestClock()
        let server = try TestServer { $0.clock = clock }
        do {
            let session = try APIClient(port: server.port).signUp(role: "coach", name: "Coach", email: "coach@example.com")
            let socket = try WebSocketTestClient(port: server.port, path: "/v1/ws", headers: [("Authorization", "Bearer \(session.access)")])
            return (server, clock, session, socket)
        } catch {
            server.stop()
            throw error
        }
    }

    /// The message of the error a socket answers an unknown command with (its hello read first).
    private func unknownCommandError(on socket: WebSocketTestClient) throws -> String? {
        _ = try socket.nextJSON()
        socket.send(text: #"{"id":"x","type":"nope"}"#)
        return (try socket.nextJSON()["error"] as? [String: Any])?["message"] as? String
    }
}
