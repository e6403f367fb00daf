// Shared by the load tools' WebSocket clients: one client socket, from the TCP connect through the upgrade to the
// frames. Each tool's client owns one per connection and decides what the frames mean.
import EventLoop
import WebSocket

/// What a load tool's client hears from its `ClientSocket`, on the loop thread. Each call names the socket, so a
/// client that reconnects can ignore a socket it has replaced.
public protocol ClientSocketOwner: AnyObject {
    /// The server answered the upgrade with a good 101; frames may follow at once.
    func socketOpened(_ socket: ClientSocket)
    /// The socket never opened: the connect failed, the answer to the upgrade was not a good 101, or the server
    /// ended the connection before it. The socket has closed its TCP connection.
    func socket(_ socket: ClientSocket, failedToOpen reason: String)
    /// One action of the WebSocket session for bytes the server sent, in order: a message, bytes to send (the
    /// session's pong or close answer: pass them to `send(framed:)`), a pong, or the end of the connection.
    func socket(_ socket: ClientSocket, perform action: WebSocketSession.Action)
    /// The server ended the TCP stream (EOF or an error) after the upgrade.
    func socket(_ socket: ClientSocket, ended error: UVError)
    /// The TCP connection is closed; nothing more comes from this socket.
    func socketClosed(_ socket: ClientSocket)
}

/// One `WebSocketSession.ActionBuffer` for every socket of a loop, which reads one socket at a time. Loop thread only.
public final class LoopActionBuffer {
    var buffer = WebSocketSession.ActionBuffer()
    public init() {}
}

/// A client WebSocket on a loop: connects, sends the upgrade request, checks the 101 (status, `Upgrade`,
/// `Sec-WebSocket-Accept`), then runs the bytes read through a `WebSocketSession` and hands its actions to the
/// owner. One socket per connection: a client that reconnects makes a new one. Loop thread only.
///
/// The socket lives until its TCP connection's close callback (the connection's callbacks hold it); the owner
/// must outlive it (the load tools keep every client for the whole run).
public final class ClientSocket {
    public enum State { case connecting, upgrading, open, closed }

    public private(set) var state: State = .connecting
    private unowned let owner: any ClientSocketOwner
    private let actions: LoopActionBuffer
    private var tcp: TCPConnection?
    private var session: WebSocketSession
    private var handshake: ClientUpgrade

    /// - Parameters:
    ///   - maxMessageBytes: the largest message the session accepts from the server.
    ///   - maxHeadBytes: the largest response head to the upgrade.
    public init(owner: any ClientSocketOwner, actions: LoopActionBuffer, maxMessageBytes: Int, maxHeadBytes: Int) {
        self.owner = owner
        self.actions = actions
        var generator = SystemRandomNumberGenerator()
        handshake = ClientUpgrade(key: ClientUpgrade.randomKey(using: &generator), maxHeadBytes: maxHeadBytes)
        session = WebSocketSession(role: .client, maxMessageBytes: maxMessageBytes, maskSeed: generator.next())
    }

    /// Connects to `address` (from `source` when given) and asks to upgrade `target` on `host`, offering
    /// `subprotocol` when given. The owner hears `socketOpened` or `failedToOpen`.
    public func connect(loop: Loop, to address: SocketAddress, from source: SocketAddress?,
                        target: String, host: String, subprotocol: String? = nil) {
        TCPConnection.connect(loop: loop, to: address, from: source) { [self] result in
            switch result {
            case .failure(let error):
                guard state == .connecting else { return }
                state = .closed
                owner.socket(self, failedToOpen: "connect: \(error.name)")
            case .success(let tcp):
                guard state == .connecting else {  // closed (timed out) while the connect was pending
                    tcp.close()
                    return
                }
                upgrade(tcp, target: target, host: host, subprotocol: subprotocol)
            }
        }
    }

    // The connection's callbacks hold the socket until the close callback, which drops them.
    private func upgrade(_ tcp: TCPConnection, target: String, host: String, subprotocol: String?) {
        self.tcp = tcp
        state = .upgrading
        tcp.onRead = { [self] bytes in didRead(bytes) }
        tcp.onEnd = { [self] error in peerEnded(error) }
        tcp.onClose = { [self] in didClose() }
        tcp.send(handshake.request(target: target, host: host, subprotocol: subprotocol))
        tcp.startReading()
    }

    private func didRead(_ bytes: UnsafeRawBufferPointer) {
        switch state {
        case .upgrading: readHead(bytes)
        case .open: receiveFrames(bytes)
        case .connecting, .closed: break
        }
    }

    private func readHead(_ bytes: UnsafeRawBufferPointer) {
        guard case let (text, leftover)? = handshake.read(bytes) else {
            if handshake.isTooLarge { failToOpen("upgrade: response head too large") }
            return
        }
        if let problem = handshake.problem(withHead: text) {
            failToOpen("upgrade: \(problem)")
            return
        }
        state = .open
        owner.socketOpened(self)
        if state == .open && !leftover.isEmpty { leftover.withUnsafeBytes { receiveFrames($0) } }
    }

    /// The session's actions are collected first: carrying them out may send on this socket, which needs the
    /// session again.
    private func receiveFrames(_ bytes: UnsafeRawBufferPointer) {
        let collected = actions.buffer.collect(bytes, through: &session)
        for action in collected { owner.socket(self, perform: action) }
        actions.buffer.giveBack(collected)
    }

    private func peerEnded(_ error: UVError) {
        switch state {
        case .upgrading: failToOpen("upgrade: \(error.name) before the 101")
        case .open: owner.socket(self, ended: error)
        case .connecting, .closed: tcp?.close()
        }
    }

    private func failToOpen(_ reason: String) {
        state = .closed
        tcp?.close()
        owner.socket(self, failedToOpen: reason)
    }

    private func didClose() {
        state = .closed
        tcp = nil
        owner.socketClosed(self)
    }

    // MARK: - Sending and closing

    /// Sends `payload` as one text message (nothing once the connection is closing).
    public func sendText(_ payload: [UInt8]) {
        guard state == .open, let tcp else { return }
        tcp.withOutbound { buffer in
            payload.withUnsafeBytes { _ = session.append(.text, $0, to: &buffer) }
        }
    }

    /// Sends bytes the session framed itself (`WebSocketSession.Action.send`).
    public func send(framed bytes: [UInt8]) {
        tcp?.send(bytes)
    }

    /// The session is open: no close frame sent or received yet.
    public var sessionIsOpen: Bool { session.state == .open }

    /// Starts the closing handshake with `code`; false if the session was already closing.
    @discardableResult
    public func sendClose(_ code: CloseCode = .normal) -> Bool {
        guard let tcp, let frame = session.close(code) else { return false }
        tcp.send(frame)
        return true
    }

    /// Sends FIN once everything queued is written; reading goes on.
    public func shutdownAfterFlush() {
        tcp?.shutdownAfterFlush()
    }

    /// Closes the connection now (or drops it as soon as a pending connect completes). The owner hears
    /// `socketClosed` once the TCP connection is closed.
    public func close() {
        state = .closed
        tcp?.close()
    }
}
