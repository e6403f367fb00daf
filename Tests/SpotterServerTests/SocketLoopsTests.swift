import Foundation
import Testing
import SpotterServer
import TestSupport
import WebSocket

/// `--loops N`: app sockets move to socket loops after their upgrade; what they are sent, and the bounds on
/// it, must not change.
@Suite("Socket loops", .serialized)
struct SocketLoopsTests {
    /// One message's events reach every socket of both people, spread over two socket loops, each socket's
    /// events in cursor order with nothing missing.
    @Test func eventsReachSocketsOnEveryLoopInOrder() throws {
        let chat = try ChatFixture { $0.loops = 3 }
        defer { chat.server.stop() }
        let sender = try chat.socket(chat.fixture.clientA.access)
        let readers = try [chat.fixture.clientA.access, chat.fixture.coachX.access, chat.fixture.coachX.access,
                           chat.fixture.clientA.access].map { try chat.socket($0) }
        // Five app sockets moved, by turns: both socket loops carry some.
        #expect(try chat.server.metric("spotter_sockets_moved_total") == 5)
        let count = 30
        for index in 0..<count {
            _ = try sender.result("message.send", ["thread_id": chat.thread, "client_message_id": "m\(index)", "text": "n\(index)"])
        }
        for reader in readers {
            var texts: [String] = []
            var cursors: [Int] = []
            for _ in 0..<count {
                let event = try reader.next("message")
                texts.append((event["message"] as? [String: Any])?["text"] as? String ?? "?")
                cursors.append(event["cursor"] as? Int ?? -1)
            }
            #expect(texts == (0..<count).map { "n\($0)" })
            #expect(zip(cursors, cursors.dropFirst()).allSatisfy { $0 < $1 }, "\(cursors)")
        }
    }

    /// A socket on a socket loop that never reads is closed with 1008 past its own bound, there, while a
    /// socket of the same person that reads goes on.
    @Test func aSlowReaderOnASocketLoopIsDroppedPastItsBound() throws {
        let chat = try ChatFixture {
            $0.loops = 2
            $0.maxOutboundBytes = 64 * 1024
            $0.socketSendBufferBytes = 16 * 1024
            $0.commandBurst = 100_000
            $0.commandsPerSecond = 100_000
            $0.closeTimeoutSeconds = 60  // the silent socket reads its backlog below, after the close is queued
        }
        defer { chat.server.stop() }
        let silent = try WebSocketTestClient(port: chat.server.port, path: "/v1/ws",
                                             headers: [("Authorization", "Bearer \(chat.fixture.clientA.access)")],
                                             receiveBufferBytes: 4096)
        let reading = try chat.socket(chat.fixture.clientA.access)
        let coach = try chat.socket(chat.fixture.coachX.access)
        #expect(try chat.server.metric("spotter_sockets_moved_total") == 3)
        let text = String(repeating: "x", count: 1000)
        var sent = 0
        var closed: Double = 0
        while sent < 2000, closed < 1 {
            _ = try coach.result("message.send", ["thread_id": chat.thread, "client_message_id": "m\(sent)", "text": text])
            sent += 1
            if sent % 20 == 0 {
                closed = try chat.server.metric("spotter_backpressure_disconnects_total") ?? 0
                // The socket that reads keeps up all along.
                while reading.drain(for: 0).count > 0 {}
            }
        }
        #expect(closed == 1, "after \(sent) messages of 1,000 characters")
        // The bound is the socket's (64 KiB plus what the kernel holds), not the account's (none was hit).
        #expect(sent < 400, "the slow reader was closed only after \(sent) messages")
        #expect(try chat.server.metric("spotter_account_backpressure_disconnects_total") ?? 0 == 0)
        var bytes = 0
        var code: CloseCode?
        while let event = try? silent.next() {
            if case .text(let payload) = event { bytes += payload.count }
            if case .close(let received, _) = event {
                code = received
                break
            }
        }
        #expect(code == .policyViolation)
        #expect(bytes < 64 * 1024 + 256 * 1024, "the slow reader was sent \(bytes) bytes")
        // The others are still served.
        let after = try coach.result("message.send", ["thread_id": chat.thread, "client_message_id": "after", "text": "after"])
        #expect(after["seq"] as? Int ?? 0 > 0)
        silent.socket.close()
    }

    /// A drain reaches the sockets on the socket loops: each gets 1001 and the server stops.
    @Test func aDrainClosesSocketsOnSocketLoopsWith1001() throws {
        let chat = try ChatFixture { $0.loops = 2 }
        let client = try chat.socket(chat.fixture.clientA.access)
        let coach = try chat.socket(chat.fixture.coachX.access)
        #expect(try chat.server.metric("spotter_sockets_moved_total") == 2)
        chat.server.server.requestShutdown()
        for socket in [client, coach] {
            var code: CloseCode?
            while let event = try? socket.ws.next() {
                if case .close(let received, _) = event {
                    code = received
                    break
                }
            }
            #expect(code == .goingAway)
            socket.ws.send(.close, FrameEncoder.closePayload(.goingAway))
        }
        #expect(chat.server.waitUntilStopped(timeoutSeconds: 15))
    }

    /// `spotter serve --loops`: 1…64, anything else refused before the server starts.
    @Test(arguments: ["0", "65", "-1", "9223372036854775807", "two", ""])
    func theLoopsOutOfRangeAreRefused(_ value: String) throws {
        let (status, text) = try ServerProcess.serveUntilExit(["--loops", value])
        #expect(status != 0)
        #expect(text.contains("loops"), "\(text)")
    }

    /// `spotter serve --idle-timeout`: 2…86,400 s; past it the loops' millisecond deadlines would overflow.
    @Test(arguments: ["1", "86401", "9223372036854775807", "-9223372036854775808"])
    func anIdleTimeoutOutOfRangeIsRefused(_ value: String) throws {
        let (status, text) = try ServerProcess.serveUntilExit(["--idle-timeout=\(value)"])  // "=": a negative value is not taken for an option
        #expect(status != 0)
        #expect(text.contains("idle timeout"), "\(text)")
    }

    /// The real binary at `--loops 2`: a message sent on one moved socket reaches the other, and SIGTERM ends it
    /// cleanly (close 1001 from the socket loop).
    @Test func theBinaryServesOnTwoLoops() throws {
        let directory = NSTemporaryDirectory() + "spotter-loops-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = try ServerProcess(dataDirectory: directory, arguments: ["--loops", "2"])
        let api = APIClient(port: server.port)
        let (coach, clients, threads) = try api.coachWithClients(1, domain: "loops.test")
        let coachSocket = try SpotterSocket(port: server.port, token: coach.access)
        let clientSocket = try SpotterSocket(port: server.port, token: clients[0].access)
        _ = try clientSocket.result("message.send", ["thread_id": threads[0], "client_message_id": "m1", "text": "over two loops"])
        let event = try coachSocket.next("message")
        #expect((event["message"] as? [String: Any])?["text"] as? String == "over two loops")
        let metrics = try api.call("GET", "/metrics").text
        #expect(metrics.contains("spotter_sockets_moved_total 2"), "\(metrics.prefix(200))")
        #expect(server.stop() == 0)
    }
}
