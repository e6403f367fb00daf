import EventLoop
import Logging
import WebSocket

/// What the core loop (loop 0) tells a socket loop, in per-iteration batches (`LoopOutbox`).
enum ToSocketLoop: Sendable {
    /// A socket upgraded on loop 0, moved here by descriptor, with the bytes read behind its upgrade.
    case adopt(id: UInt64, descriptor: Int32, leftover: [UInt8])
    /// A complete frame (an event's shared bytes, a reply) for the socket.
    case frame(id: UInt64, bytes: [UInt8])
    /// The server closes the WebSocket (4001, 4003, 1001 on a drain…): the closing handshake starts here.
    case close(id: UInt64, code: CloseCode, reason: String)
    /// The socket's account holds too much for its peers (`OutboundLedger`): closed as a slow reader.
    case closeSlowReader(id: UInt64, reason: String)
    /// Answer `drained` once everything sent so far has been taken by the kernel (a replay's pacing).
    case whenDrained(id: UInt64)
}

/// What a socket loop tells the core loop, in per-iteration batches.
enum FromSocketLoop: Sendable {
    /// A complete message from the client (text or binary).
    case message(id: UInt64, WebSocketEvent)
    /// The WebSocket ended here (the peer's close, a protocol error, a slow reader, an idle peer, a drop):
    /// loop 0 records the code and sends nothing more.
    case closing(id: UInt64, code: CloseCode)
    /// The socket's backlog (queued here and in the kernel) when it backed up: the account is checked.
    case backlog(id: UInt64, held: Int)
    /// Everything sent before the matching `whenDrained` has left (`ok`), or the socket failed first. In the
    /// order asked.
    case drained(id: UInt64, ok: Bool)
    /// The handle is closed: the last word about this socket.
    case gone(id: UInt64)
}

/// The bounds a socket loop applies, copied from the server's configuration.
struct SocketLoopLimits: Sendable {
    var maxMessageBytes: Int
    var maxOutboundBytes: Int
    var closeTimeoutMilliseconds: UInt64
    var pingMilliseconds: UInt64
    var idleMilliseconds: UInt64
    var socketSendBufferBytes: Int

    init(_ config: ServerConfig) {
        maxMessageBytes = config.maxMessageBytes
        maxOutboundBytes = config.maxOutboundBytes
        closeTimeoutMilliseconds = UInt64(config.closeTimeoutSeconds) * 1000
        pingMilliseconds = UInt64(config.effectivePingIntervalSeconds) * 1000
        idleMilliseconds = UInt64(config.idleTimeoutSeconds) * 1000
        socketSendBufferBytes = config.socketSendBufferBytes
    }
}

/// A loop of its own carrying app WebSockets (`--loops N`, N ≥ 2): each socket's TCP handle, its WebSocket
/// codec (frames, UTF-8, ping/pong, close, the size limit), its output buffer and flushes, its idle timeout and
/// its per-socket bound. What the socket means — the session, the commands, the events — stays on loop 0,
/// which sees complete messages and sends complete frames, both in batches once per iteration of either loop
/// (`LoopMailbox`): no lock per message. Loop thread (its own) only, but for `init`.
final class SocketLoop {
    let thread: LoopThread
    /// Where loop 0 posts; made before the thread runs.
    private(set) var mailbox: LoopMailbox<ToSocketLoop>!
    private var toCore: LoopOutbox<FromSocketLoop>!
    private var sockets: [UInt64: LoopSocket] = [:]
    private var actionBuffer = WebSocketSession.ActionBuffer(keptCapacity: 64)
    private var sweepTimer: Timer?
    let limits: SocketLoopLimits
    let metrics: ServerMetrics
    let logger: Logger

    init(index: Int, core: LoopMailbox<FromSocketLoop>, limits: SocketLoopLimits, metrics: ServerMetrics, logger: Logger) {
        self.limits = limits
        self.metrics = metrics
        self.logger = logger
        // The loop's callbacks reach this object through `router`, set before anything can call them: the
        // mailbox's first batch and the sweep timer's start both come through a lock taken after it is set.
        let router = Router()
        var made: (LoopMailbox<ToSocketLoop>, LoopOutbox<FromSocketLoop>)?
        thread = LoopThread(name: "spotter-loop-\(index)", open: { loop in
            let mailbox = LoopMailbox<ToSocketLoop>(loop: loop) { batch in
                guard let owner = router.owner else { return }
                for item in batch { owner.receive(item) }
            }
            made = (mailbox, LoopOutbox(from: loop, to: core))
        })
        mailbox = made!.0
        toCore = made!.1
        router.owner = self
        let boundRouter = LoopBound(router, loop: thread.loop)
        thread.execute { boundRouter.value.owner?.startSweep() }
    }

    /// The loop's way back to this object (created before it).
    private final class Router {
        weak var owner: SocketLoop?
    }

    private func startSweep() {
        let timer = Timer(loop: loop)
        timer.start(after: 1000, repeat: 1000) { [weak self] in self?.sweep() }
        sweepTimer = timer
    }

    var loop: Loop { thread.loop }

    /// Closes every socket still here (without a handshake) and ends the thread. From loop 0, after it stopped.
    func stop() {
        thread.stop()
        thread.join()
    }

    // MARK: - From loop 0

    private func receive(_ item: ToSocketLoop) {
        switch item {
        case .adopt(let id, let descriptor, let leftover):
            adopt(id, descriptor, leftover)
        case .frame(let id, let bytes):
            sockets[id]?.sendFrame(bytes)
        case .close(let id, let code, let reason):
            sockets[id]?.close(code, reason: reason)
        case .closeSlowReader(let id, let reason):
            sockets[id]?.closeSlowReader(reason: reason, decidedHere: false)
        case .whenDrained(let id):
            if let socket = sockets[id] {
                socket.tcp.whenDrained { [weak self] error in self?.tell(.drained(id: id, ok: error == nil)) }
            } else {
                tell(.drained(id: id, ok: false))
            }
        }
    }

    private func adopt(_ id: UInt64, _ descriptor: Int32, _ leftover: [UInt8]) {
        let tcp: TCPConnection
        do {
            tcp = try TCPConnection.adopt(descriptor: descriptor, loop: loop)
        } catch {
            logger.warning("could not take a socket over from loop 0", metadata: ["error": "\(error)"])
            tell(.closing(id: id, code: .abnormal))
            tell(.gone(id: id))
            return
        }
        tcp.setSendBufferSize(limits.socketSendBufferBytes)
        let socket = LoopSocket(id: id, tcp: tcp, home: self)
        sockets[id] = socket
        socket.start(leftover: leftover)
    }

    // MARK: - For the sockets

    func tell(_ item: FromSocketLoop) { toCore.append(item) }

    func collectActions(_ bytes: UnsafeRawBufferPointer, through session: inout WebSocketSession) -> [WebSocketSession.Action] {
        actionBuffer.collect(bytes, through: &session)
    }

    func giveBack(_ actions: [WebSocketSession.Action]) { actionBuffer.giveBack(actions) }

    func socketClosed(_ id: UInt64) {
        sockets[id] = nil
        tell(.gone(id: id))
    }

    private func sweep() {
        let now = loop.nowMilliseconds
        for socket in Array(sockets.values) { socket.sweep(now: now) }
    }
}
