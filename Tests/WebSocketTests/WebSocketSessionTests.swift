import Testing
@testable import WebSocket

@Suite("WebSocketSession")
struct WebSocketSessionTests {
    typealias Action = WebSocketSession.Action

    static func server(maxMessageBytes: Int = 1 << 16) -> WebSocketSession {
        WebSocketSession(role: .server, maxMessageBytes: maxMessageBytes)
    }

    /// Feeds `bytes` (in the given pieces) and collects the actions.
    static func receive(_ session: inout WebSocketSession, _ pieces: [UInt8]...) -> [Action] {
        var actions: [Action] = []
        for piece in pieces { session.receive(piece) { actions.append($0) } }
        return actions
    }

    /// Decodes the frames a session sent, as its peer would.
    static func decodeSent(_ actions: [Action], by role: FrameReader.Role) -> ReadOutcome {
        let bytes = actions.flatMap { action -> [UInt8] in
            if case .send(let bytes) = action { return bytes }
            return []
        }
        return readFrames(bytes, role: role)
    }

    @Test("a ping is answered with a pong carrying the same payload")
    func pingPong() {
        var session = Self.server()
        let payload = utf8("Hello مرحبا")
        let actions = Self.receive(&session, clientFrame(.ping, payload))
        #expect(actions == [.send(serverFrame(.pong, payload))])
        #expect(Self.receive(&session, clientFrame(.ping, [])) == [.send([0x8A, 0x00])])
        #expect(session.state == .open)
    }

    @Test("a pong from the peer is reported")
    func pongReported() {
        var session = Self.server()
        #expect(Self.receive(&session, clientFrame(.pong, utf8("x"))) == [.receivedPong])
    }

    @Test("text and binary messages are delivered, fragmented or not, in any split")
    func deliver() {
        var session = Self.server()
        let frames = clientFrame(.text, utf8("Hel"), fin: false) + clientFrame(.ping, [7])
            + clientFrame(.continuation, utf8("lo")) + clientFrame(.binary, [1, 2, 3])
        let actions = Self.receive(&session, Array(frames[..<5]), Array(frames[5..<17]), Array(frames[17...]))
        #expect(actions == [
            .send(serverFrame(.pong, [7])), .deliver(.text(utf8("Hello"))), .deliver(.binary([1, 2, 3])),
        ])
    }

    @Test("close with 1000 is echoed, then the connection closes with 1000")
    func closeEchoed() {
        var session = Self.server()
        let actions = Self.receive(&session, clientFrame(.close, FrameEncoder.closePayload(.normal, reason: "bye")))
        #expect(actions == [.send([0x88, 0x02, 0x03, 0xE8]), .closeConnection(.normal)])
        #expect(session.state == .closed)
        #expect(session.close(.normal) == nil)
        #expect(session.encode(.text, utf8("late")) == nil)
        #expect(Self.receive(&session, clientFrame(.ping, [])).isEmpty)
    }

    @Test("close without a code is answered with an empty close, connection code 1005")
    func closeWithoutCode() {
        var session = Self.server()
        let actions = Self.receive(&session, clientFrame(.close, []))
        #expect(actions == [.send([0x88, 0x00]), .closeConnection(.noStatus)])
        #expect(session.state == .closed)
    }

    @Test("a protocol error sends a close frame with its code, then closes", arguments: [
        (serverFrame(.text, utf8("unmasked")), CloseCode.protocolError),
        (clientFrame(.continuation, utf8("orphan")), .protocolError),
        (clientFrame(.close, [0x03]), .protocolError),
        (clientFrame(.text, [0x61, 0xFF]), .invalidPayload),
        (Array(clientFrame(.binary, Array(repeating: 1, count: 2000))[..<8]), .messageTooBig),
    ])
    func protocolError(_ bytes: [UInt8], _ code: CloseCode) {
        var session = Self.server(maxMessageBytes: 1000)
        let actions = Self.receive(&session, bytes)
        #expect(actions.count == 2)
        #expect(actions.last == .closeConnection(code))
        let sent = Self.decodeSent(actions, by: .client)
        #expect(sent.error == nil)
        guard case .close(let sentCode, let reason)? = sent.events.first, sent.events.count == 1 else {
            Issue.record("expected one close frame, got \(sent.events)")
            return
        }
        #expect(sentCode == code)
        #expect(!reason.isEmpty)
        #expect(session.state == .closed)
        // Nothing more happens once the connection failed.
        #expect(Self.receive(&session, clientFrame(.ping, [1])).isEmpty)
    }

    @Test("events before a violation in the same read are acted on first")
    func eventsBeforeError() {
        var session = Self.server()
        let actions = Self.receive(&session, clientFrame(.text, utf8("ok")) + clientFrame(.ping, [9]) + [0x81, 0x00])
        #expect(actions.count == 4)
        #expect(Array(actions.prefix(2)) == [.deliver(.text(utf8("ok"))), .send(serverFrame(.pong, [9]))])
        #expect(actions.last == .closeConnection(.protocolError))
    }

    @Test("server-initiated close: wait for the peer's close, drop data meanwhile, send no second close")
    func serverInitiatedClose() throws {
        var session = Self.server()
        let closeFrame = session.close(.goingAway, reason: "restart")
        let frame = try #require(closeFrame)
        #expect(frame == serverFrame(.close, FrameEncoder.closePayload(.goingAway, reason: "restart")))
        #expect(readFrames(frame, role: .client).events == [.close(code: .goingAway, reason: "restart")])
        #expect(session.state == .waitingForPeerClose)
        #expect(session.close(.normal) == nil)
        #expect(session.encode(.text, utf8("no")) == nil)

        #expect(Self.receive(&session, clientFrame(.text, utf8("late"))).isEmpty)
        #expect(Self.receive(&session, clientFrame(.binary, [1])).isEmpty)
        #expect(Self.receive(&session, clientFrame(.pong, [])) == [.receivedPong])
        let actions = Self.receive(&session, clientFrame(.close, FrameEncoder.closePayload(.goingAway)))
        #expect(actions == [.closeConnection(.goingAway)])
        #expect(session.state == .closed)
    }

    @Test("a protocol error after our close sends no close frame")
    func errorWhileClosing() {
        var session = Self.server()
        _ = session.close(.normal)
        #expect(Self.receive(&session, serverFrame(.text, [])) == [.closeConnection(.protocolError)])
        #expect(session.state == .closed)
    }

    @Test("close twice returns nil the second time")
    func closeTwice() {
        var session = Self.server()
        #expect(session.close(.normal) != nil)
        #expect(session.close(.normal) == nil)
        #expect(session.close(.goingAway) == nil)
    }

    @Test("a message after the peer's close in the same read is not delivered")
    func dataAfterPeerClose() {
        var session = Self.server()
        let actions = Self.receive(&session, clientFrame(.text, utf8("a")) + clientFrame(.close, []) + clientFrame(.text, utf8("b")))
        #expect(actions == [.deliver(.text(utf8("a"))), .send([0x88, 0x00]), .closeConnection(.noStatus)])
    }

    @Test("abandon closes without a handshake")
    func abandon() {
        var session = Self.server()
        session.abandon()
        #expect(session.state == .closed)
        #expect(session.close(.normal) == nil)
        #expect(Self.receive(&session, clientFrame(.text, utf8("x"))).isEmpty)
        var buffer: [UInt8] = []
        let appended = [UInt8](utf8("x")).withUnsafeBytes { session.append(.text, $0, to: &buffer) }
        #expect(!appended && buffer.isEmpty)
    }

    @Test("a client session masks its frames and a server reader decodes them", arguments: [0, 5, 125, 126, 65535, 70_000])
    func clientFramesMasked(_ length: Int) throws {
        var client = WebSocketSession(role: .client, maxMessageBytes: 1 << 20, maskSeed: 7)
        let payload = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 13) }
        let firstFrame = client.encode(.binary, payload)
        let first = try #require(firstFrame)
        let secondFrame = client.encode(.text, utf8("second"))
        let second = try #require(secondFrame)
        #expect(first[1] & 0x80 == 0x80 && second[1] & 0x80 == 0x80)
        let header = FrameEncoder.headerSize(payloadCount: length, masked: true)
        #expect(first.count == header + length)
        // Each frame has its own, non-zero key.
        let key1 = Array(first[(header - 4)..<header]), key2 = Array(second[2..<6])
        #expect(key1 != key2 && key1 != [0, 0, 0, 0])
        var buffer: [UInt8] = []
        let appended = payload.withUnsafeBytes { client.append(.binary, $0, to: &buffer) }
        #expect(appended)
        let outcome = readFrames(first + second + buffer, role: .server, cuts: [1, 3, header + 1])
        #expect(outcome.error == nil)
        #expect(outcome.events == [.binary(payload), .text(utf8("second")), .binary(payload)])
    }

    @Test("a client session reads unmasked frames and answers with masked ones")
    func clientSession() {
        var client = WebSocketSession(role: .client, maxMessageBytes: 1000)
        let actions = Self.receive(&client, serverFrame(.ping, [1, 2]) + serverFrame(.text, utf8("hi")) + serverFrame(.close, [0x03, 0xE8]))
        #expect(actions.count == 4)
        #expect(actions[1] == .deliver(.text(utf8("hi"))))
        #expect(actions[3] == .closeConnection(.normal))
        let sent = Self.decodeSent(actions, by: .server)  // masked, or the server reader would fail
        #expect(sent.error == nil)
        #expect(sent.events == [.pong([1, 2]), .close(code: .normal, reason: "")])
    }
}
