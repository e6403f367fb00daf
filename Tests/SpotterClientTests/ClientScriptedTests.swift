import Foundation
import SpotterClient
import Testing

/// A transport the test plays the server on: each connect is a `Scripted` connection the test feeds by hand.
final class ScriptedTransport: WebSocketTransport, @unchecked Sendable {
    let connections = Locked<[Scripted]>([])

    func connect(url: URL, headers: [String: String], subprotocols: [String]) -> any WebSocketConnection {
        let connection = Scripted(url: url, headers: headers, subprotocols: subprotocols)
        connections.withLock { $0.append(connection) }
        return connection
    }

    var last: Scripted? { connections.withLock { $0.last } }

    final class Scripted: WebSocketConnection, @unchecked Sendable {
        let url: URL
        let headers: [String: String]
        let subprotocols: [String]
        let events: AsyncStream<TransportEvent>
        private let continuation: AsyncStream<TransportEvent>.Continuation
        let sent = Locked<[JSONValue]>([])
        let closes = Locked<[Int]>([])

        init(url: URL, headers: [String: String], subprotocols: [String]) {
            self.url = url
            self.headers = headers
            self.subprotocols = subprotocols
            (events, continuation) = AsyncStream.makeStream(of: TransportEvent.self)
        }

        func send(_ text: String) {
            if let frame = try? JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)) { sent.withLock { $0.append(frame) } }
        }

        func close(code: Int, reason: String) { closes.withLock { $0.append(code) } }

        func deliver(_ frame: JSONValue) {
            continuation.yield(.text(String(decoding: try! JSONEncoder().encode(frame), as: UTF8.self)))
        }

        func end(code: Int, reason: String = "") {
            continuation.yield(.closed(code: code, reason: reason))
            continuation.finish()
        }

        var frames: [JSONValue] { sent.withLock { $0 } }
    }
}

/// The client's rules with a scripted server: what is dropped, what waits, what matches.
@Suite("SpotterClient: rules against a scripted server", .serialized)
struct ClientScriptedTests {
    func client(_ transport: ScriptedTransport, cursor: Int? = 5) -> SpotterClient {
        SpotterClient(configuration: SpotterConfiguration(
            url: URL(string: "http://127.0.0.1:9")!, tokens: Tokens(accessToken: "a", refreshToken: "r"), language: "ar",
            cursor: cursor, transport: transport, minDelayMilliseconds: 10, maxDelayMilliseconds: 50))
    }

    static let user: JSONValue = ["id": "u", "role": "client", "language": "en", "onboarding_completed": true, "time_zone": "UTC"]

    static func message(_ cursor: Int, seq: Int = 1) -> JSONValue {
        ["type": "message", "cursor": .int(cursor), "unread": 0, "total_unread": 0,
         "message": ["thread_id": "t", "seq": .int(seq), "client_message_id": .string("m\(seq)"), "kind": "text", "text": "hi",
                     "created_at": 1]]
    }

    @Test func eventsAtOrBelowTheCursorAreDroppedCommandsWaitForLiveRepliesMatchById() async throws {
        let transport = ScriptedTransport()
        let side = client(transport)
        let heard = await Recorder(side)
        await side.connect()
        try await eventually("the socket") { transport.last != nil }
        let socket = try #require(transport.last)
        #expect(socket.url.absoluteString == "ws://127.0.0.1:9/v1/ws?cursor=5")
        #expect(socket.headers["Authorization"] == "Bearer a")
        #expect(socket.headers["Accept-Language"] == "ar")
        #expect(socket.subprotocols == ["spotter.v1"])

        let me = Task { try await side.me() }
        socket.deliver(["type": "hello", "protocol": "spotter.v1", "cursor": 9, "user": Self.user, "expires_at": 0])
        try await eventually("replaying") { await side.state == .replaying }
        try await Task.sleep(for: .milliseconds(50))
        #expect(socket.frames.isEmpty, "a command waits for the replay to end")
        for cursor in [6, 6, 4, 7] { socket.deliver(Self.message(cursor)) }
        socket.deliver(["type": "live", "cursor": 7])
        try await eventually("live") { await side.state == .live }
        // A resume-style replay may repeat what was delivered live: dropped.
        for cursor in [7, 8, 5, 8, 9] { socket.deliver(Self.message(cursor)) }
        try await eventually("the events") { heard.messages.count >= 4 }
        try await eventually("the command out") { socket.frames.count == 1 }
        #expect(heard.messages.map(\.cursor) == [6, 7, 8, 9])
        #expect(heard.cursors == [6, 7, 8, 9])
        #expect(await side.cursor == 9)

        let id = try #require(socket.frames[0]["id"]?.stringValue)
        #expect(socket.frames[0]["type"] == "me")
        socket.deliver(["type": "reply", "id": "nope", "ok": true, "result": [:]])
        socket.deliver(["type": "reply", "id": .string(id), "ok": false,
                        "error": ["code": "forbidden", "message": "لا", "field": "x", "retry_after": 2]])
        let error = await refusal { _ = try await me.value }
        #expect(error == SpotterError(code: "forbidden", message: "لا", field: "x", retryAfter: 2))
        await side.close()
    }

    @Test func aRefusedResumeResetsToTheHellosCursor() async throws {
        let transport = ScriptedTransport()
        let side = client(transport, cursor: 999_999)
        let heard = await Recorder(side)
        await side.connect()
        try await eventually("the socket") { transport.last != nil }
        let socket = try #require(transport.last)
        socket.deliver(["type": "hello", "protocol": "spotter.v1", "cursor": 12, "user": Self.user, "expires_at": 0])
        socket.deliver(["type": "reply", "id": nil, "ok": false, "error": ["code": "cursor_expired", "message": "gone"]])
        try await eventually("live after the reset") { await side.state == .live }
        #expect(heard.resets.map(\.code) == ["cursor_expired"])
        #expect(await side.cursor == 12)
        socket.deliver(Self.message(12))  // at the new cursor: dropped
        socket.deliver(Self.message(13, seq: 2))
        try await eventually("the new event") { !heard.messages.isEmpty }
        #expect(heard.messages.map(\.cursor) == [13])
        await side.close()
    }

    @Test func aSendWaitsWhenToldToAndNothingOvertakesIt() async throws {
        let transport = ScriptedTransport()
        let side = client(transport, cursor: nil)
        await side.connect()
        try await eventually("the socket") { transport.last != nil }
        let socket = try #require(transport.last)
        socket.deliver(["type": "hello", "protocol": "spotter.v1", "cursor": 0, "user": Self.user, "expires_at": 0])
        try await eventually("live") { await side.state == .live }
        let first = await side.enqueue(.text("one"), to: "t")
        let second = await side.enqueue(.text("two"), to: "t")
        try await eventually("the first send") { socket.frames.count == 1 }
        #expect(socket.frames[0]["client_message_id"]?.stringValue == first)
        socket.deliver(["type": "reply", "id": socket.frames[0]["id"]!, "ok": false,
                        "error": ["code": "rate_limited", "message": "wait", "retry_after": 1]])
        try await Task.sleep(for: .milliseconds(300))
        #expect(socket.frames.count == 1, "the second send overtook the first while it waited")
        try await eventually(5, "the first send again") { socket.frames.count == 2 }
        #expect(socket.frames[1]["client_message_id"]?.stringValue == first)
        #expect(socket.frames[1]["text"] == "one")
        // The socket ends with the send unanswered: it goes again on the next socket, with the same id.
        socket.end(code: 1006)
        try await eventually(5, "a new socket") { transport.connections.withLock { $0.count } == 2 }
        let next = try #require(transport.last)
        #expect(next.url.absoluteString == "ws://127.0.0.1:9/v1/ws?cursor=0")
        next.deliver(["type": "hello", "protocol": "spotter.v1", "cursor": 0, "user": Self.user, "expires_at": 0])
        next.deliver(["type": "live", "cursor": 0])
        try await eventually("the resend") { next.frames.count == 1 }
        #expect(next.frames[0]["client_message_id"]?.stringValue == first)
        #expect(await side.unacknowledged.map(\.clientMessageId) == [first, second])
        await side.close()
    }

    @Test func aConnectWithNoHelloIsGivenUpAndRetried() async throws {
        let transport = ScriptedTransport()
        let side = SpotterClient(configuration: SpotterConfiguration(
            url: URL(string: "https://chat.example.com")!, tokens: Tokens(accessToken: "a", refreshToken: "r"),
            transport: transport, minDelayMilliseconds: 10, maxDelayMilliseconds: 50, connectTimeout: .milliseconds(200)))
        let heard = await Recorder(side)
        await side.connect()
        // The first socket never answers: given up (closed by the client) and a second one opened.
        try await eventually("a second socket") { transport.connections.withLock { $0.count } >= 2 }
        let first = try #require(transport.connections.withLock { $0.first })
        #expect(first.url.absoluteString == "wss://chat.example.com/v1/ws")
        #expect(first.closes.withLock { $0 }.count == 1)
        #expect(heard.all.contains { if case .connectTimeout = $0 { true } else { false } })
        let second = try #require(transport.last)
        second.deliver(["type": "hello", "protocol": "spotter.v1", "cursor": 3, "user": Self.user, "expires_at": 0])
        try await eventually("live on the second socket") { await side.state == .live }
        #expect(await side.cursor == 3)
        await side.close()
    }
}
