import EventLoop
import FoundationEssentials
import WebSocket
import LoadSupport

/// One benchmark WebSocket client on the runner's loop. Loop thread only.
///
/// Life: connect, send the upgrade request, read the 101 head, then (in the
/// echo phase) keep `inFlight` text messages outstanding, and finally send
/// close 1000 and wait for the server's close frame and FIN.
///
/// A message is `messageBytes` of ASCII: the send time (CLOCK_MONOTONIC ns,
/// 16 hex digits — 8 bytes of clock in a frame that must be valid UTF-8),
/// then padding that is fixed per connection. An echo is checked against
/// the oldest stamp outstanding and the padding, byte for byte.
final class BenchClient {
    enum State { case idle, connecting, upgrading, open, closing, failed, closed }

    let index: Int
    unowned let runner: Runner
    private(set) var state: State = .idle
    /// Loop time (ms) when the connect started, for the connect timeout.
    private(set) var startedAt: UInt64 = 0
    private var tcp: TCPConnection?
    private var session: WebSocketSession
    private var handshake: ClientUpgrade
    /// The next message: stamp in bytes 0..<16, this connection's padding after.
    private var payload: [UInt8]
    /// Send stamps of the messages outstanding, oldest first (a ring).
    private var stamps: [UInt64]
    private var ringStart = 0
    private var ringCount = 0
    /// The server's close frame arrived (our close handshake is complete).
    private var closeFrameReceived = false
    /// We sent close 1000 (the runner waits for these to finish).
    private(set) var closeInitiated = false

    static let maxHeadBytes = 8192

    init(index: Int, runner: Runner, messageBytes: Int, inFlight: Int) {
        self.index = index
        self.runner = runner
        var generator = SystemRandomNumberGenerator()
        handshake = ClientUpgrade(key: ClientUpgrade.randomKey(using: &generator), maxHeadBytes: Self.maxHeadBytes)
        session = WebSocketSession(role: .client, maxMessageBytes: 1 << 20, maskSeed: generator.next())
        payload = (0..<messageBytes).map { UInt8(ascii: "a") + UInt8((index &+ $0) % 26) }
        stamps = [UInt64](repeating: 0, count: inFlight)
    }

    // MARK: - Connect and upgrade

    func connect(to address: SocketAddress, from source: SocketAddress?) {
        state = .connecting
        startedAt = runner.loop.nowMilliseconds
        TCPConnection.connect(loop: runner.loop, to: address, from: source) { [unowned self] result in
            switch result {
            case .failure(let error):
                fail("connect: \(error.name)")
            case .success(let tcp):
                guard state == .connecting else {  // timed out while the connect was pending
                    tcp.close()
                    return
                }
                upgrade(tcp)
            }
        }
    }

    private func upgrade(_ tcp: TCPConnection) {
        self.tcp = tcp
        state = .upgrading
        tcp.onRead = { [unowned self] bytes in didRead(bytes) }
        tcp.onEnd = { [unowned self] error in peerEnded(error) }
        tcp.onClose = { [unowned self] in didClose() }
        tcp.send(handshake.request(target: runner.config.path, host: runner.config.hostHeader))
        tcp.startReading()
    }

    /// Gives up on a connection that never opened (refused, bad 101, timeout).
    func fail(_ reason: String) {
        guard state == .connecting || state == .upgrading else { return }
        state = .failed
        tcp?.close()
        runner.clientSettled(self, failure: reason)
    }

    private func readHead(_ bytes: UnsafeRawBufferPointer) {
        guard case let (text, leftover)? = handshake.read(bytes) else {
            if handshake.isTooLarge { fail("upgrade: response head too large") }
            return
        }
        if let problem = checkHead(text) {
            fail("upgrade: \(problem)")
            return
        }
        state = .open
        runner.clientSettled(self, failure: nil)
        if !leftover.isEmpty { leftover.withUnsafeBytes { receiveFrames($0) } }
    }

    /// Checks the status line, `Upgrade` and `Sec-WebSocket-Accept`; nil when all is well.
    private func checkHead(_ text: String) -> String? {
        let lines = text.split(separator: "\r\n", omittingEmptySubsequences: false)
        guard let status = lines.first, status.hasPrefix("HTTP/1.1 101") else {
            return "expected 101, got '\(lines.first.map(String.init) ?? "")'"
        }
        var upgrade: String?
        var accept: String?
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased()
            let value = String(line[line.index(after: colon)...].drop { $0 == " " || $0 == "\t" })
                .reversed().drop { $0 == " " || $0 == "\t" }.reversed()
            if name == "upgrade" { upgrade = String(value).lowercased() }
            if name == "sec-websocket-accept" { accept = String(value) }
        }
        guard upgrade == "websocket" else { return "missing Upgrade: websocket" }
        guard accept == Handshake.acceptKey(for: handshake.key) else { return "wrong Sec-WebSocket-Accept" }
        return nil
    }

    // MARK: - Reading

    private func didRead(_ bytes: UnsafeRawBufferPointer) {
        switch state {
        case .upgrading: readHead(bytes)
        case .open, .closing: receiveFrames(bytes)
        default: break
        }
    }

    /// The session's actions are collected first: carrying them out sends on
    /// this connection, which needs the session again.
    private func receiveFrames(_ bytes: UnsafeRawBufferPointer) {
        let actions = runner.actionBuffer.collect(bytes, through: &session)
        for action in actions { perform(action) }
        runner.actionBuffer.giveBack(actions)
    }

    private func perform(_ action: WebSocketSession.Action) {
        switch action {
        case .deliver(.text(let echoed)):
            checkEcho(echoed)
        case .deliver:
            runner.recordMismatch("unexpected non-text message")
        case .send(let bytes):
            tcp?.send(bytes)  // pong, or the close frame answering the server's
        case .receivedPong:
            break
        case .closeConnection(let code):
            closeFrameReceived = true
            if state == .open {
                state = .closing
                runner.clientLost(self, reason: "server closed with \(code.rawValue)")
            }
            // Wait for the server's FIN (it closes TCP first); the runner's grace timer bounds the wait.
        }
    }

    private func peerEnded(_ error: UVError) {
        switch state {
        case .upgrading:
            fail("upgrade: \(error.name) before the 101")
        case .open:
            state = .closing
            runner.clientLost(self, reason: "connection ended without a close frame: \(error.name)")
            tcp?.close()
        case .closing:
            if !closeFrameReceived { runner.recordCloseFailure("\(error.name) before the server's close frame") }
            tcp?.close()
        default:
            tcp?.close()
        }
    }

    private func didClose() {
        let wasClosing = state == .closing || state == .open
        if state != .failed { state = .closed }
        tcp = nil
        if wasClosing { runner.clientClosed(self) }
    }

    // MARK: - Echo

    func startEcho() {
        guard state == .open else { return }
        for _ in 0..<stamps.count { sendOne() }
    }

    private func sendOne() {
        guard let tcp else { return }
        let now = monotonicNanos()
        Self.writeStamp(now, into: &payload)
        stamps[(ringStart + ringCount) % stamps.count] = now
        ringCount += 1
        tcp.withOutbound { buffer in
            payload.withUnsafeBytes { _ = session.append(.text, $0, to: &buffer) }
        }
    }

    private func checkEcho(_ echoed: [UInt8]) {
        let now = monotonicNanos()
        guard ringCount > 0 else {
            runner.recordMismatch("echo with no message outstanding")
            return
        }
        let stamp = stamps[ringStart]
        ringStart = (ringStart + 1) % stamps.count
        ringCount -= 1
        if matches(echoed, stamp: stamp) {
            runner.recordEcho(nanoseconds: now &- stamp)
        } else {
            runner.recordMismatch("echoed payload differs from the message sent")
        }
        if runner.isSending && state == .open { sendOne() }
    }

    private func matches(_ echoed: [UInt8], stamp: UInt64) -> Bool {
        guard echoed.count == payload.count else { return false }
        return echoed.withUnsafeBufferPointer { got in
            payload.withUnsafeBufferPointer { sent in
                for i in 0..<16 where got[i] != Self.hexDigit(stamp >> UInt64(60 - 4 * i)) { return false }
                for i in 16..<got.count where got[i] != sent[i] { return false }
                return true
            }
        }
    }

    @inline(__always)
    private static func hexDigit(_ value: UInt64) -> UInt8 {
        let nibble = UInt8(truncatingIfNeeded: value & 0xF)
        return nibble < 10 ? 48 + nibble : 87 + nibble
    }

    private static func writeStamp(_ stamp: UInt64, into payload: inout [UInt8]) {
        for i in 0..<16 { payload[i] = hexDigit(stamp >> UInt64(60 - 4 * i)) }
    }

    // MARK: - Close

    /// Starts the closing handshake with 1000.
    func sendClose() {
        guard state == .open, let tcp else { return }
        state = .closing
        closeInitiated = true
        if let frame = session.close(.normal) { tcp.send(frame) }
    }

    /// Drops the socket (closing handshake timed out, or the run is over).
    func forceClose() {
        tcp?.close()
    }

    var isClosing: Bool { state == .closing }
    var isOpen: Bool { state == .open }
    var isPending: Bool { state == .connecting || state == .upgrading }
}
