import Foundation
import Testing
import SpotterServer
import TestSupport
import WebSocket

/// Many sockets of one account that never read: what they hold is bounded for the account as a whole,
/// the kernel's send queues counted, and past the bound the slowest are closed with 1008.
@Suite("Account outbound bound", .serialized)
struct AccountOutboundTests {
    @Test(.disabled(if: TestCluster.isOn, "the account's outbound bound is per process, and the metric read is one node's"))
    func manySilentSocketsOfOneAccountAreClosedWith1008() throws {
        let chat = try ChatFixture {
            $0.maxAccountOutboundBytes = 1 << 20
            $0.socketSendBufferBytes = 64 * 1024
            $0.commandBurst = 100_000
            $0.commandsPerSecond = 100_000
            $0.closeTimeoutSeconds = 60  // the silent sockets read their backlog below, long after the close is queued
        }
        defer { chat.server.stop() }
        let silentCount = 20
        // Upgraded as the client, then never read (a small receive buffer, as a phone that stopped reading).
        let silent = try (0..<silentCount).map { _ in
            try WebSocketTestClient(port: chat.server.port, path: "/v1/ws",
                                    headers: [("Authorization", "Bearer \(chat.fixture.clientA.access)")], receiveBufferBytes: 4096)
        }
        let coach = try chat.socket(chat.fixture.coachX.access)
        let text = String(repeating: "x", count: 1000)
        // Up to 800 messages of 1,000 characters to each silent socket (about 0.9 MB each: under the 1 MiB
        // bound of one socket, so only the bound of the account, or the kernel counted, can close them).
        var sent = 0
        var closed: Double = 0
        while sent < 800 {
            _ = try coach.result("message.send", ["thread_id": chat.thread, "client_message_id": "m\(sent)", "text": text])
            sent += 1
            if sent % 50 == 0 {
                closed = try chat.server.metric("spotter_backpressure_disconnects_total") ?? 0
                if closed >= Double(silentCount - 1) { break }
            }
        }
        closed = try chat.server.metric("spotter_backpressure_disconnects_total") ?? 0
        #expect(closed >= Double(silentCount - 1), "after \(sent) messages only \(closed) of \(silentCount) silent sockets were closed")

        // Each closed socket, reading at last, finds the 1008 behind what the server held for it: never more
        // than the account's bound plus one message per socket.
        var closedWith1008 = 0
        for client in silent {
            var bytes = 0
            var code: CloseCode??
            // The one socket left open (under the bound) has nothing more to say: its read times out.
            while let event = try? client.next() {
                if case .text(let payload) = event { bytes += payload.count }
                if case .close(let received, _) = event {
                    code = .some(received)
                    break
                }
                if bytes > 4 << 20 { break }
            }
            if code == .some(.policyViolation) {
                closedWith1008 += 1
                #expect(bytes < (1 << 20) + (64 << 10), "a silent socket got \(bytes) bytes before its 1008")
            }
            client.socket.close()
        }
        #expect(closedWith1008 >= silentCount - 1)
        let line = try chat.server.metricsText().split(separator: "\n")
            .first { $0.hasPrefix("spotter_account_backpressure_disconnects_total ") }
        #expect(line.map { Double($0.split(separator: " ").last ?? "") ?? 0 } ?? 0 >= 1, "\(String(describing: line))")
    }
}
