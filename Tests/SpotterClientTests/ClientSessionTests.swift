import Foundation
import SpotterClient

import Testing
import TestSupport

/// Tokens, revocation, resume and reset against a live server.
@Suite("SpotterClient: tokens, revocation, resume", .serialized)
struct ClientSessionTests {
    @Test func authExpiringIsAnsweredOnTheSocket() async throws {
        // 12 s tokens, warned 6 s before they lapse (half the life): room for a connect and a refresh on a busy
        // machine (with 6 s, 3 s of warning was seen not to be enough under a parallel build: a 4001).
        let server = try LiveServer(arguments: ["--access-token-lifetime", "12"])
        defer { server.cleanup() }
        let (_, client, thread) = try server.pair()
        let side = server.client(client)
        defer { Task { await side.close() } }
        let heard = await Recorder(side)
        let started = Date()
        await side.connect()
        try await live(side)
        try await eventually(10, "new tokens") { !heard.tokens.isEmpty }
        #expect(heard.tokens[0].accessToken != client.access)
        #expect(heard.tokens[0].refreshToken != client.refresh)
        // Past the first token's life, the same socket still works.
        let past = 13 - Date().timeIntervalSince(started)
        if past > 0 { try await Task.sleep(for: .milliseconds(Int(past * 1000))) }
        #expect(try await side.send(text: "still here", to: thread).seq == 1)
        #expect(heard.disconnects.isEmpty)
        // The old refresh token was rotated away.
        let reused = try server.api.call("POST", "/v1/auth/refresh", ["refresh_token": client.refresh])
        #expect(reused.errorCode == "refresh_token_reused")
    }

    @Test func aLapsedTokenIs4001ThenRefreshedOverHTTP() async throws {
        let server = try LiveServer(arguments: ["--access-token-lifetime", "6"])
        defer { server.cleanup() }
        let (coach, client, thread) = try server.pair()
        // This app never hears `auth.expiring` (the transport drops it), so its token lapses on the socket.
        let side = server.client(client, transport: DroppingTransport(dropping: "auth.expiring"))
        defer { Task { await side.close() } }
        let heard = await Recorder(side)
        await side.connect()
        try await live(side)
        try await eventually(15, "the 4001 close") { heard.disconnects.contains(4001) }
        try await eventually(15, "tokens refreshed over HTTP") { !heard.tokens.isEmpty }
        try await eventually(15, "live again") { await side.state == .live }
        let coachSide = server.client(coach)
        defer { Task { await coachSide.close() } }
        await coachSide.connect()
        _ = try await coachSide.send(text: "after the lapse", to: thread)
        try await eventually("the message on the new socket") { heard.messages.contains { $0.message.text == "after the lapse" } }
        #expect(heard.stops.isEmpty)
    }

    @Test func theAppsOwnRefreshCallbackReopensAndResumes() async throws {
        let server = try LiveServer(arguments: ["--access-token-lifetime", "6"])
        defer { server.cleanup() }
        let (coach, client, thread) = try server.pair()
        let calls = Locked(0)
        let api = server.api
        let side = server.client(client, refresh: { refreshToken in
            calls.withLock { $0 += 1 }
            let answer = try api.call("POST", "/v1/auth/refresh", ["refresh_token": refreshToken])
            return Tokens(accessToken: answer.string("access_token") ?? "", refreshToken: answer.string("refresh_token") ?? "")
        })
        let coachSide = server.client(coach)
        defer { Task { await side.close(); await coachSide.close() } }
        let heard = await Recorder(side)
        await side.connect()
        await coachSide.connect()
        try await live(side, coachSide)
        try await eventually(10, "the refresh callback") { calls.withLock { $0 } >= 1 }
        _ = try await coachSide.send(text: "after the refresh", to: thread)
        try await eventually(10, "the message on the refreshed socket") { heard.messages.contains { $0.message.seq == 1 } }
        #expect(heard.messages.map(\.message.seq) == [1])
        #expect(await side.tokens.accessToken != client.access)
    }

    @Test func aRevokedSessionStopsTheClient() async throws {
        let server = try LiveServer()
        defer { server.cleanup() }
        let (_, client, thread) = try server.pair()
        let side = server.client(client)
        let heard = await Recorder(side)
        await side.connect()
        try await live(side)
        let signOut = try server.api.call("POST", "/v1/auth/signout", ["refresh_token": client.refresh])
        #expect(signOut.status == 204)
        try await eventually("the revocation") { await side.state == .closed(.revoked) }
        // The recorder reads the event stream on a task of its own: it may hear the close a moment after the state.
        try await eventually("the 4003 heard") { !heard.disconnects.isEmpty }
        #expect(heard.disconnects == [4003])
        let closed = await refusal { _ = try await side.me() }
        #expect(closed?.code == "closed")
        let queued = await refusal { _ = try await side.send(text: "too late", to: thread) }
        #expect(queued?.code == "closed")
        try await Task.sleep(for: .milliseconds(500))
        #expect(heard.stops == [.revoked], "no reconnect loop")
        #expect(await side.state == .closed(.revoked))

        // A connect with the revoked token stops at once too (refused upgrade: 401 session_revoked).
        let again = server.client(client)
        let heardAgain = await Recorder(again)
        await again.connect()
        try await eventually("the second client to give up") { await again.state == .closed(.revoked) }
        #expect(heardAgain.stops == [.revoked])
    }

    @Test func anErasedAccountStopsTheClientAtOnce() async throws {
        let server = try LiveServer()
        defer { server.cleanup() }
        let (_, client, _) = try server.pair()
        let side = server.client(client)
        let heard = await Recorder(side)
        await side.connect()
        try await live(side)
        let erased = try server.api.call("DELETE", "/v1/me", ["password": "secret1"], token: client.access)
        #expect(erased.status == 204)
        try await eventually("the erasure") { await side.state == .closed(.revoked) }
        try await Task.sleep(for: .milliseconds(500))
        #expect(heard.disconnects == [4004])
        #expect(heard.stops == [.revoked])
    }

    @Test func aCursorTheServerCannotResumeResetsTheClient() async throws {
        let server = try LiveServer()
        defer { server.cleanup() }
        let (_, client, _) = try server.pair()
        let side = server.client(client, cursor: 999_999)
        defer { Task { await side.close() } }
        let heard = await Recorder(side)
        await side.connect()
        try await live(side)
        #expect(heard.resets.map(\.code) == ["out_of_range"])
        let cursor = try #require(await side.cursor)
        #expect(cursor < 999_999)
        #expect(try await side.threads().cursor == cursor)
    }

    @Test func aStoredCursorResumesWhatWasMissedOnceInOrder() async throws {
        let server = try LiveServer()
        defer { server.cleanup() }
        let (coach, client, thread) = try server.pair()
        let first = server.client(client)
        await first.connect()
        try await live(first)
        let cursor = try #require(await first.cursor)
        await first.close()

        let coachSide = server.client(coach)
        defer { Task { await coachSide.close() } }
        await coachSide.connect()
        for index in 0..<5 { _ = try await coachSide.send(text: "while away \(index)", to: thread) }

        let back = server.client(client, cursor: cursor)
        defer { Task { await back.close() } }
        let heard = await Recorder(back)
        await back.connect()
        try await live(back)
        try await eventually("the missed messages") { heard.messages.count == 5 }
        #expect(heard.messages.map(\.message.seq) == [1, 2, 3, 4, 5])
        #expect(heard.cursors == heard.cursors.sorted())
        #expect(heard.resets.isEmpty)
        #expect(await back.cursor == heard.cursors.last)
    }
}

/// A transport that drops the server's text frames containing `dropping` (an app that does not hear them).
struct DroppingTransport: WebSocketTransport {
    let dropping: String
    let inner: any WebSocketTransport = DefaultWebSocketTransport()

    func connect(url: URL, headers: [String: String], subprotocols: [String]) -> any WebSocketConnection {
        Filtered(inner.connect(url: url, headers: headers, subprotocols: subprotocols), dropping: dropping)
    }

    final class Filtered: WebSocketConnection {
        let inner: any WebSocketConnection
        let events: AsyncStream<TransportEvent>

        init(_ inner: any WebSocketConnection, dropping: String) {
            self.inner = inner
            let source = inner.events
            events = AsyncStream { continuation in
                let task = Task {
                    for await event in source {
                        if case .text(let text) = event, text.contains(dropping) { continue }
                        continuation.yield(event)
                    }
                    continuation.finish()
                }
                continuation.onTermination = { _ in task.cancel() }
            }
        }

        func send(_ text: String) { inner.send(text) }
        func close(code: Int, reason: String) { inner.close(code: code, reason: reason) }
    }
}
