import EventLoop
import LoadSupport
import Testing
import TestSupport
import WebSocket

/// The load tools' one client socket, against a real server's `/echo` on a loop of the test's own.
@Suite("Load tools' client socket")
struct ClientSocketTests {
    /// Writes down what the socket reports, and answers like a load tool's client: a text on opening, close 1000
    /// after the echo, closing the socket when the server's close frame arrives.
    final class Owner: ClientSocketOwner {
        let loop = Loop()
        let actions = LoopActionBuffer()
        var events: [String] = []
        var textOnOpen: [UInt8]?

        func socketOpened(_ socket: ClientSocket) {
            events.append("opened")
            if let textOnOpen { socket.sendText(textOnOpen) }
        }

        func socket(_ socket: ClientSocket, failedToOpen reason: String) { events.append("failed: \(reason)") }

        func socket(_ socket: ClientSocket, perform action: WebSocketSession.Action) {
            switch action {
            case .deliver(.text(let bytes)):
                events.append("text: \(String(decoding: bytes, as: UTF8.self))")
                #expect(socket.sendClose(.normal))
                #expect(!socket.sessionIsOpen)
            case .deliver(let event): events.append("other: \(event)")
            case .send(let bytes): socket.send(framed: bytes)
            case .receivedPong: events.append("pong")
            case .closeConnection(let code):
                events.append("close \(code.rawValue)")
                socket.close()
            }
        }

        func socket(_ socket: ClientSocket, ended error: UVError) { events.append("ended: \(error.name)") }

        func socketClosed(_ socket: ClientSocket) { events.append("closed") }

        /// Connects a socket to `port`, lets `adjust` act on it, and runs the loop until nothing is left open
        /// (bounded: a stuck run stops after 10 s and says so).
        func run(port: Int, target: String = "/echo", adjust: (ClientSocket) -> Void = { _ in }) throws {
            let socket = ClientSocket(owner: self, actions: actions, maxMessageBytes: 1 << 16, maxHeadBytes: 8192)
            let guardTimer = Timer(loop: loop)
            guardTimer.start(after: 10_000) { [unowned self] in
                events.append("timed out")
                loop.stop()
            }
            guardTimer.unref()
            socket.connect(loop: loop, to: try SocketAddress(host: "127.0.0.1", port: port), from: nil,
                           target: target, host: "127.0.0.1:\(port)")
            adjust(socket)
            loop.run()
            loop.closeAllHandles()
        }
    }

    @Test func opensSendsReceivesTheEchoAndClosesWith1000() throws {
        let server = try TestServer()
        defer { server.stop() }
        let owner = Owner()
        owner.textOnOpen = Array("hello from the load tools".utf8)
        try owner.run(port: server.port)
        #expect(owner.events == ["opened", "text: hello from the load tools", "close 1000", "closed"])
    }

    @Test func aRefusedConnectAndANon101FailToOpen() throws {
        let server = try TestServer()
        let port = server.port
        let wrongPath = Owner()
        try wrongPath.run(port: port, target: "/not-a-socket")
        #expect(wrongPath.events.count == 2)
        #expect(wrongPath.events.first?.hasPrefix("failed: upgrade: expected 101, got 'HTTP/1.1 404") == true, "\(wrongPath.events)")
        #expect(wrongPath.events.last == "closed")
        server.stop()
        let refused = Owner()
        try refused.run(port: port)
        #expect(refused.events == ["failed: connect: ECONNREFUSED"])
    }

    @Test func aSocketClosedWhileConnectingDropsTheConnectionWhenItCompletes() throws {
        let server = try TestServer()
        defer { server.stop() }
        let owner = Owner()
        try owner.run(port: server.port) { socket in socket.close() }
        #expect(owner.events.isEmpty)
    }
}

@Suite("Load tools' upgrade")
struct ClientUpgradeTests {
    static func head(status: String = "HTTP/1.1 101 Switching Protocols", upgrade: String? = "websocket", accept: String) -> String {
        var lines = [status, "Connection: Upgrade"]
        if let upgrade { lines.append("Upgrade: \(upgrade)") }
        lines.append("Sec-WebSocket-Accept:  \(accept) ")
        return lines.joined(separator: "\r\n")
    }

    @Test func theHeadIsCheckedForStatusUpgradeAndAccept() {
        let upgrade = ClientUpgrade(key: "dGhlIHNhbXBsZSBub25jZQ==", maxHeadBytes: 1024)
        let accept = Handshake.acceptKey(for: upgrade.key)
        #expect(upgrade.problem(withHead: Self.head(accept: accept)) == nil)
        #expect(upgrade.problem(withHead: Self.head(upgrade: "WebSocket", accept: accept)) == nil)
        #expect(upgrade.problem(withHead: Self.head(status: "HTTP/1.1 401 Unauthorized", accept: accept))
            == "expected 101, got 'HTTP/1.1 401 Unauthorized'")
        #expect(upgrade.problem(withHead: Self.head(upgrade: nil, accept: accept)) == "missing Upgrade: websocket")
        #expect(upgrade.problem(withHead: Self.head(accept: Handshake.acceptKey(for: "other"))) == "wrong Sec-WebSocket-Accept")
    }

    @Test func theHeadIsGatheredAcrossReadsAndTheBytesAfterItKept() {
        var upgrade = ClientUpgrade(key: "k", maxHeadBytes: 64)
        let bytes = Array("HTTP/1.1 101 OK\r\nUpgrade: websocket\r\n\r\n".utf8) + [0x81, 0x00]
        var result: (text: String, leftover: [UInt8])?
        for chunk in [bytes[..<10], bytes[10..<36], bytes[36...]] {
            #expect(result == nil)
            result = Array(chunk).withUnsafeBytes { upgrade.read($0) }
        }
        #expect(result?.text == "HTTP/1.1 101 OK\r\nUpgrade: websocket")
        #expect(result?.leftover == [0x81, 0x00])
        var tooLong = ClientUpgrade(key: "k", maxHeadBytes: 8)
        #expect(Array("HTTP/1.1 101 and no end".utf8).withUnsafeBytes { tooLong.read($0) } == nil)
        #expect(tooLong.isTooLarge)
    }
}
