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
final class BenchClient: ClientSocketOwner {
    /// `connecting` lasts until the 101 (connect and upgrade).
    enum State { case idle, connecting, open, closing, failed, closed }

    let index: Int
    unowned let runner: Runner
    private(set) var state: State = .idle
    /// Loop time (ms) when the connect started, for the connect timeout.
    private(set) var startedAt: UInt64 = 0
    private var socket: ClientSocket?
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
        payload = (0..<messageBytes).map { UInt8(ascii: "a") + UInt8((index &+ $0) % 26) }
        stamps = [UInt64](repeating: 0, count: inFlight)
    }

    // MARK: - Connect and upgrade

    func connect(to address: SocketAddress, from source: SocketAddress?) {
        state = .connecting
        startedAt = runner.loop.nowMilliseconds
        let socket = ClientSocket(owner: self, actions: runner.actions, maxMessageBytes: 1 << 20, maxHeadBytes: Self.maxHeadBytes)
        self.socket = socket
        socket.connect(loop: runner.loop, to: address, from: source, target: runner.config.path, host: runner.config.hostHeader)
    }

    /// Gives up on a connection that never opened (refused, bad 101, timeout).
    func fail(_ reason: String) {
        guard state == .connecting else { return }
        state = .failed
        socket?.close()
        runner.clientSettled(self, failure: reason)
    }

    func socketOpened(_ socket: ClientSocket) {
        state = .open
        runner.clientSettled(self, failure: nil)
    }

    func socket(_ socket: ClientSocket, failedToOpen reason: String) {
        fail(reason)
    }

    // MARK: - Reading

    func socket(_ socket: ClientSocket, perform action: WebSocketSession.Action) {
        switch action {
        case .deliver(.text(let echoed)):
            checkEcho(echoed)
        case .deliver:
            runner.recordMismatch("unexpected non-text message")
        case .send(let bytes):
            socket.send(framed: bytes)  // pong, or the close frame answering the server's
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

    func socket(_ socket: ClientSocket, ended error: UVError) {
        switch state {
        case .open:
            state = .closing
            runner.clientLost(self, reason: "connection ended without a close frame: \(error.name)")
        case .closing:
            if !closeFrameReceived { runner.recordCloseFailure("\(error.name) before the server's close frame") }
        default:
            break
        }
        socket.close()
    }

    func socketClosed(_ socket: ClientSocket) {
        let wasClosing = state == .closing || state == .open
        if state != .failed { state = .closed }
        self.socket = nil
        if wasClosing { runner.clientClosed(self) }
    }

    // MARK: - Echo

    func startEcho() {
        guard state == .open else { return }
        for _ in 0..<stamps.count { sendOne() }
    }

    private func sendOne() {
        guard let socket else { return }
        let now = monotonicNanos()
        Self.writeStamp(now, into: &payload)
        stamps[(ringStart + ringCount) % stamps.count] = now
        ringCount += 1
        socket.sendText(payload)
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
        guard state == .open, let socket else { return }
        state = .closing
        closeInitiated = true
        socket.sendClose(.normal)
    }

    /// Drops the socket (closing handshake timed out, or the run is over).
    func forceClose() {
        socket?.close()
    }

    var isClosing: Bool { state == .closing }
    var isOpen: Bool { state == .open }
    var isPending: Bool { state == .connecting }
}
