import EventLoop
import WebSocket

/// One app WebSocket on a socket loop (`SocketLoop`): the transport half of a `Connection` whose meaning stays
/// on loop 0. It runs the bytes through the WebSocket codec, answers pings, keeps the peer alive or drops it,
/// bounds what it holds for the peer, and does the closing handshake; complete messages go to loop 0 and
/// complete frames come from it. Socket loop thread only.
final class LoopSocket {
    let id: UInt64
    let tcp: TCPConnection
    private unowned let home: SocketLoop
    private var session: WebSocketSession
    private var lastHeard: UInt64
    private var pingSentAt: UInt64?
    private var closeDeadline: UInt64?
    /// Closing or closed: nothing more is sent but the close frame already queued.
    private var closing = false
    /// A backlog was reported to loop 0 and not yet cleared (reported again only when it grows past double).
    private var reportedBacklog = 0

    init(id: UInt64, tcp: TCPConnection, home: SocketLoop) {
        self.id = id
        self.tcp = tcp
        self.home = home
        session = WebSocketSession(role: .server, maxMessageBytes: home.limits.maxMessageBytes)
        lastHeard = home.loop.nowMilliseconds
    }

    func start(leftover: [UInt8]) {
        tcp.onRead = { [unowned self] bytes in didRead(bytes) }
        tcp.onEnd = { [unowned self] _ in peerEnded() }
        tcp.onClose = { [unowned self] in home.socketClosed(id) }
        if !leftover.isEmpty { leftover.withUnsafeBytes { didRead($0) } }
        tcp.startReading()
    }

    private func didRead(_ bytes: UnsafeRawBufferPointer) {
        lastHeard = home.loop.nowMilliseconds
        pingSentAt = nil
        home.metrics.bytesIn.increment(by: bytes.count)
        guard !closing else { return }  // bytes after the closing handshake are discarded
        let actions = home.collectActions(bytes, through: &session)
        for action in actions {
            switch action {
            case .deliver(let event):
                home.metrics.framesIn.increment()
                if !closing { home.tell(.message(id: id, event)) }
            case .send(let frame):
                send(frame)
            case .receivedPong:
                break
            case .closeConnection(let code):
                home.tell(.closing(id: id, code: code))
                beginClosing()
            }
        }
        home.giveBack(actions)
        checkOutbound()
    }

    private func send(_ frame: [UInt8]) {
        home.metrics.framesOut.increment()
        home.metrics.bytesOut.increment(by: frame.count)
        tcp.send(frame)
    }

    /// A frame from loop 0 (an event, a reply).
    func sendFrame(_ frame: [UInt8]) {
        guard !closing else { return }
        send(frame)
        checkOutbound()
    }

    /// The per-socket bound, as `Connection.checkOutbound` applies it; a backed-up socket's backlog goes to
    /// loop 0 for its account's bound.
    private func checkOutbound() {
        let bound = home.limits.maxOutboundBytes
        guard !closing, tcp.isBackedUp || tcp.queuedBytes > bound else {
            reportedBacklog = 0
            return
        }
        let held = tcp.queuedBytes &+ tcp.kernelQueuedBytes
        if tcp.queuedBytes > bound || held > bound {
            closeSlowReader(reason: "too slow: outbound queue full")
        } else if held > reportedBacklog &* 2 {
            reportedBacklog = held
            home.tell(.backlog(id: id, held: held))
        }
    }

    /// Close 1008 queued behind the backlog, no more reading, dropped at the close deadline whatever happens.
    /// `decidedHere`: by the socket's own bound (counted and logged here; loop 0 counts its account's closes).
    func closeSlowReader(reason: String, decidedHere: Bool = true) {
        guard !closing else { return }
        if decidedHere {
            home.metrics.backpressureDisconnects.increment()
            home.logger.info("closing slow reader", metadata: ["connection": "\(id)", "queued": "\(tcp.queuedBytes)"])
            home.tell(.closing(id: id, code: .policyViolation))
        }
        send(FrameEncoder.frame(.close, payload: FrameEncoder.closePayload(.policyViolation, reason: reason)))
        session.abandon()
        tcp.stopReading()
        beginClosing()
    }

    /// The server's close (from loop 0, or an idle peer here).
    func close(_ code: CloseCode, reason: String) {
        guard !closing else { return }
        if let frame = session.close(code, reason: reason) { send(frame) }
        beginClosing()
    }

    private func beginClosing() {
        guard !closing else { return }
        closing = true
        tcp.shutdownAfterFlush()
        closeDeadline = home.loop.nowMilliseconds + home.limits.closeTimeoutMilliseconds
    }

    private func peerEnded() {
        if !closing {
            session.abandon()
            home.tell(.closing(id: id, code: .abnormal))
        }
        closing = true
        tcp.close()
    }

    /// Once a second: the close deadline, the keepalive ping and the idle timeout (`Connection.sweep`'s rules).
    func sweep(now: UInt64) {
        if let deadline = closeDeadline {
            if now >= deadline {
                if tcp.queuedBytes > 0 || tcp.kernelQueuedBytes > 0 { tcp.resetAndClose() } else { tcp.close() }
            }
            return
        }
        let pingMs = home.limits.pingMilliseconds, idleMs = home.limits.idleMilliseconds
        if let sentAt = pingSentAt {
            if now &- sentAt >= idleMs - min(pingMs, idleMs - 1000) {
                home.metrics.idleTimeouts.increment()
                home.tell(.closing(id: id, code: .goingAway))
                close(.goingAway, reason: "idle timeout")
                closeDeadline = now + 1000  // a silent peer will not answer the handshake
            }
        } else if now &- lastHeard >= pingMs {
            pingSentAt = now
            send(FrameEncoder.frame(.ping, payload: []))
        }
    }
}
