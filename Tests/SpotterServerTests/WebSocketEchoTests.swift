import Testing
import TestSupport
import WebSocket

@Suite("WebSocket over loopback", .serialized)
struct WebSocketEchoTests {
    @Test func echoesTextAndBinaryAndNegotiatesSubprotocol() throws {
        let server = try TestServer()
        defer { server.stop() }
        let client = try WebSocketTestClient(port: server.port, headers: [("Sec-WebSocket-Protocol", "chat, spotter.v1")])
        #expect(client.handshake.headers["Sec-WebSocket-Protocol"] == "spotter.v1")
        client.send(text: "مرحبا coach 👋")
        #expect(try client.next() == .text(Array("مرحبا coach 👋".utf8)))
        let blob = (0..<60_000).map { UInt8(truncatingIfNeeded: $0 * 7) }
        client.send(.binary, blob)
        #expect(try client.next() == .binary(blob))
    }

    @Test func reassemblesFragmentsAroundAPing() throws {
        let server = try TestServer()
        defer { server.stop() }
        let client = try WebSocketTestClient(port: server.port)
        client.send(.text, Array("Hel".utf8), fin: false)
        client.send(.ping, Array("are you there".utf8))
        client.send(.continuation, Array("lo".utf8))
        #expect(try client.next() == .pong(Array("are you there".utf8)))
        #expect(try client.next() == .text(Array("Hello".utf8)))
    }

    @Test func framesSentWithTheUpgradeRequestAreNotLost() throws {
        let server = try TestServer()
        defer { server.stop() }
        let socket = try BlockingSocket(port: server.port)
        var bytes = Array((
            "GET /echo HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n").utf8)
        bytes += FrameEncoder.frame(.text, payload: Array("early".utf8), maskingKey: 0xA1B2_C3D4)
        socket.write(bytes)
        var received: [UInt8] = []
        let expected = FrameEncoder.frame(.text, payload: Array("early".utf8))
        while !received.ends(with: expected) {
            let chunk = try socket.read()
            try #require(!chunk.isEmpty)
            received += chunk
        }
        #expect(String(decoding: received, as: UTF8.self).hasPrefix("HTTP/1.1 101 Switching Protocols\r\n"))
    }

    @Test func closeHandshakeEchoesTheCodeAndServerDropsTCP() throws {
        let server = try TestServer()
        defer { server.stop() }
        let client = try WebSocketTestClient(port: server.port)
        client.send(.close, FrameEncoder.closePayload(.normal, reason: "bye"))
        #expect(try client.next() == .close(code: .normal, reason: ""))
        #expect(try client.next() == nil)  // server closed the TCP connection
    }

    @Test(arguments: [
        ("unmasked frame", FrameEncoder.frame(.text, payload: Array("hi".utf8)), CloseCode.protocolError),
        ("reserved opcode", [0x83, 0x80, 1, 2, 3, 4], CloseCode.protocolError),
        ("invalid UTF-8", FrameEncoder.frame(.text, payload: [0x68, 0xC0, 0xAF], maskingKey: 7), CloseCode.invalidPayload),
        // Only the header of a 1 MiB frame: refused before any payload is sent.
        ("oversized message", [0x82, 0xFF, 0, 0, 0, 0, 0, 0x10, 0, 0, 1, 2, 3, 4], CloseCode.messageTooBig),
    ] as [(String, [UInt8], CloseCode)])
    func protocolViolationsCloseWithTheRightCode(_ name: String, _ frame: [UInt8], _ expected: CloseCode) throws {
        let server = try TestServer()
        defer { server.stop() }
        let client = try WebSocketTestClient(port: server.port)
        client.socket.write(frame)
        #expect(try client.awaitClose() == .some(expected), "\(name)")
        #expect(try client.next() == nil)
        let closes = try server.metricsText().split(separator: "\n")
            .first { $0.hasPrefix("spotter_websocket_closes_total{") && $0.contains("\"\(expected.rawValue)\"") }
        #expect(closes?.hasSuffix(" 1") == true, "close \(expected.rawValue) not counted")
    }

    @Test func refusedUpgradesGetTheRightStatus() throws {
        let server = try TestServer { $0.allowedOrigins = ["https://app.example"] }
        defer { server.stop() }
        let base: [(String, String)] = [("Upgrade", "websocket"), ("Connection", "Upgrade"), ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")]

        let noUpgrade = try HTTPTestClient(port: server.port).request("GET", "/echo")
        #expect(noUpgrade.status == 426)
        #expect(noUpgrade.headers["Sec-WebSocket-Version"] == "13")

        let oldVersion = try HTTPTestClient(port: server.port).request("GET", "/echo", headers: base + [("Sec-WebSocket-Version", "8")])
        #expect(oldVersion.status == 426)
        #expect(oldVersion.headers["Sec-WebSocket-Version"] == "13")

        let badKey = try HTTPTestClient(port: server.port).request(
            "GET", "/echo", headers: [("Upgrade", "websocket"), ("Connection", "Upgrade"), ("Sec-WebSocket-Version", "13"), ("Sec-WebSocket-Key", "short")])
        #expect(badKey.status == 400)

        let post = try HTTPTestClient(port: server.port).request("POST", "/echo", headers: base + [("Sec-WebSocket-Version", "13")])
        #expect(post.status == 405)

        let wrongOrigin = try HTTPTestClient(port: server.port).request(
            "GET", "/echo", headers: base + [("Sec-WebSocket-Version", "13"), ("Origin", "https://evil.example")])
        #expect(wrongOrigin.status == 403)

        let client = try WebSocketTestClient(port: server.port, headers: [("Origin", "https://app.example")])
        client.send(text: "allowed")
        #expect(try client.next() == .text(Array("allowed".utf8)))
    }
}

extension Array where Element: Equatable {
    func ends(with suffix: [Element]) -> Bool { count >= suffix.count && Array(self[(count - suffix.count)...]) == suffix }
}
