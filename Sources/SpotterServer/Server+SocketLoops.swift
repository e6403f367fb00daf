import EventLoop
import WebSocket

/// `--loops N`: loops 1…N-1 carry app WebSockets (`SocketLoop`); this loop keeps everything else.
extension Server {
    /// Starts the socket loops (none with `loops` 1). Loop 0's thread, in `start()`.
    func startSocketLoops() {
        guard config.loops > 1 else { return }
        let mailbox = LoopMailbox<FromSocketLoop>(loop: loop) { [weak self] batch in self?.fromSocketLoops(batch) }
        mailbox.unref()  // the listener keeps loop 0 running, as it did with one loop
        socketMailbox = mailbox
        let limits = SocketLoopLimits(config)
        for index in 1..<config.loops {
            let socketLoop = SocketLoop(index: index, core: mailbox, limits: limits, metrics: metrics, logger: logger)
            socketLoops.append((socketLoop, LoopOutbox(from: loop, to: socketLoop.mailbox)))
        }
    }

    /// Whether an upgrade to `endpoint` moves its socket to a socket loop: app sockets without TLS (a TLS
    /// session's state does not travel with the descriptor), while not draining.
    func movesSocket(_ endpoint: WebSocketEndpoint, _ tcp: TCPConnection) -> Bool {
        !socketLoops.isEmpty && endpoint is AppSocket && tcp.transform == nil && !isDraining
    }

    /// The socket loop the next moved socket goes to (in turn), nil when there is none or the server drains.
    func nextSocketLoop() -> LoopOutbox<ToSocketLoop>? {
        guard !socketLoops.isEmpty, !isDraining else { return nil }
        socketLoopTurn = (socketLoopTurn + 1) % socketLoops.count
        return socketLoops[socketLoopTurn].outbox
    }

    private func fromSocketLoops(_ batch: [FromSocketLoop]) {
        for item in batch {
            switch item {
            case .message(let id, let event):
                connections[id]?.remoteReceived(event)
            case .closing(let id, let code):
                connections[id]?.remoteClosing(code)
            case .backlog(let id, let held):
                guard let connection = connections[id], connection.remote != nil else { continue }
                connection.remote?.held = held
                if let account = connection.account { outbound.noteBacklog(account) }
            case .drained(let id, let ok):
                connections[id]?.remoteDrained(ok)
            case .gone(let id):
                connections[id]?.failDrainWaiters()
                connections[id]?.finished()
            }
        }
    }

    /// Ends the socket loops (their sockets close without a handshake). After loop 0 stopped.
    func stopSocketLoops() {
        for (socketLoop, _) in socketLoops { socketLoop.stop() }
        socketLoops = []
    }
}
