import Foundation
import Testing
import TestSupport
import WebSocket

@Suite("Keepalive, back-pressure and shutdown", .serialized)
struct LivenessTests {
    @Test func silentClientIsPingedThenClosedAtTheIdleTimeout() throws {
        let server = try TestServer {
            $0.idleTimeoutSeconds = 3
            $0.pingIntervalSeconds = 1
        }
        defer { server.stop() }
        let client = try WebSocketTestClient(port: server.port)
        let opened = Date()
        // The client never answers: first a ping, then the close 1001.
        #expect(try client.next() == .ping([]))
        #expect(try client.awaitClose() == .some(.goingAway))
        let elapsed = Date().timeIntervalSince(opened)
        #expect(elapsed >= 2.5, "closed after \(elapsed)s, before the 3 s idle timeout")
        #expect(try client.next() == nil)
        #expect(try server.metric("spotter_idle_timeouts_total") == 1)
    }

    @Test func clientThatAnswersPingsOutlivesTheIdleTimeout() throws {
        let server = try TestServer {
            $0.idleTimeoutSeconds = 3
            $0.pingIntervalSeconds = 1
        }
        defer { server.stop() }
        let client = try WebSocketTestClient(port: server.port)
        let start = Date()
        while Date().timeIntervalSince(start) < 5 {
            let event = try client.next()
            guard case .ping(let payload) = event else {
                Issue.record("expected a ping, got \(String(describing: event))")
                return
            }
            client.send(.pong, payload)
        }
        client.send(text: "still here")
        var reply = try client.next()
        if case .ping = reply { reply = try client.next() }
        #expect(reply == .text(Array("still here".utf8)))
    }

    @Test func slowReaderIsDisconnectedWithoutDelayingOthers() throws {
        let server = try TestServer {
            $0.maxMessageBytes = 1024
            $0.maxOutboundBytes = 64 * 1024
            $0.closeTimeoutSeconds = 1
        }
        defer { server.stop() }
        let slow = try WebSocketTestClient(port: server.port, receiveBufferBytes: 4096)
        let other = try WebSocketTestClient(port: server.port)
        let payload = [UInt8](repeating: 0x61, count: 1000)
        let frame = FrameEncoder.frame(.text, payload: payload, maskingKey: 0x0102_0304)
        var batch: [UInt8] = []
        for _ in 0..<64 { batch += frame }
        // Send echoes the slow client never reads, until the server hangs up (≤ 64 MiB).
        var sent = 0
        while sent < 64 << 20, slow.socket.write(batch) {
            sent += batch.count
            if sent % (4 << 20) < batch.count {
                other.send(text: "ping \(sent)")
                #expect(try other.next() == .text(Array("ping \(sent)".utf8)))
            }
        }
        #expect(sent < 64 << 20, "server never disconnected the slow reader")
        var disconnects: Double?
        for _ in 0..<50 {
            disconnects = try server.metric("spotter_backpressure_disconnects_total")
            if disconnects == 1 { break }
            Thread.sleep(forTimeInterval: 0.1)
        }
        #expect(disconnects == 1)
        let closes = try server.metricsText().split(separator: "\n")
            .first { $0.hasPrefix("spotter_websocket_closes_total{") && $0.contains("\"1008\"") }
        #expect(closes?.hasSuffix(" 1") == true)
        other.send(text: "after")
        #expect(try other.next() == .text(Array("after".utf8)))
    }

    @Test(.disabled(if: TestCluster.isOn, "one process's shutdown; the socket may be on another node"))
    func shutdownSendsGoingAwayAndWaitsForTheHandshake() throws {
        let server = try TestServer()
        let client = try WebSocketTestClient(port: server.port)
        client.send(text: "hello")
        #expect(try client.next() == .text(Array("hello".utf8)))
        server.server.requestShutdown()
        var reason = ""
        while let event = try client.next() {
            if case .close(let code, let text) = event {
                #expect(code == .goingAway)
                reason = text
                break
            }
        }
        // A jittered reconnect hint, 1-10 s.
        let hint = Int(reason.split(separator: "=").last ?? "") ?? 0
        #expect(reason.hasPrefix("server restarting; retry_after_ms=") && (1000...10_000).contains(hint), "\(reason)")
        client.send(.close, FrameEncoder.closePayload(.goingAway))
        #expect(try client.next() == nil)  // the server's FIN
        client.socket.close()  // as a real client does on FIN
        #expect(server.waitUntilStopped(timeoutSeconds: 5))
        #expect(throws: BlockingSocket.Failure.self) { try BlockingSocket(port: server.port) }
    }

    @Test(.disabled(if: TestCluster.isOn, "one process's shutdown; the socket may be on another node"))
    func shutdownDropsPeersThatNeverAnswerAfterTheGrace() throws {
        let server = try TestServer { $0.shutdownGraceSeconds = 1 }
        let client = try WebSocketTestClient(port: server.port)
        let start = Date()
        server.server.requestShutdown()
        #expect(try client.awaitClose() == .some(.goingAway))
        #expect(server.waitUntilStopped(timeoutSeconds: 5))
        #expect(Date().timeIntervalSince(start) < 4)
    }
}
