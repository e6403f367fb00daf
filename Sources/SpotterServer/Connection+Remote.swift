import EventLoop
import WebSocket

/// A connection whose socket lives on a socket loop (`--loops N`): loop 0 keeps the meaning (the endpoint,
/// the account's bound, the close code it recorded), the socket loop the bytes.
struct RemoteLink {
    /// Frames and closes for the socket, posted to its loop once per iteration of this one.
    let outbox: LoopOutbox<ToSocketLoop>
    /// What the socket held for its peer when it last reported a backlog (for `OutboundLedger`).
    var held = 0
    /// `whenDrained` callbacks waiting for the socket loop's answers, oldest first.
    var drainWaiters: [(UVError?) -> Void] = []
}

extension Connection {
    /// An app socket's upgrade with socket loops: once the 101 has left, the socket moves to a socket loop
    /// (nothing of it is read here meanwhile: the bytes behind the upgrade travel with it), and the endpoint
    /// opens here, sending through the link. A socket that cannot move (closed, or the 101 not taken) stays.
    func moveThenUpgrade(to endpoint: WebSocketEndpoint, leftover: [UInt8]) {
        awaitingResponse = true
        tcp.stopReading()
        tcp.whenDrained { [weak self] error in
            guard let self, error == nil, case .http = phase, !tcp.isClosed else { return }
            awaitingResponse = false
            tcp.onClose = nil  // the handle closes now; the socket goes on
            guard let target = server.nextSocketLoop(), let descriptor = tcp.detachDescriptor() else {
                tcp.onClose = { [weak self] in self?.finished() }
                tcp.startReading()
                upgrade(to: endpoint, leftover: leftover)
                return
            }
            remote = RemoteLink(outbox: target)
            server.metrics.socketsMoved.increment()
            target.append(.adopt(id: id, descriptor: descriptor, leftover: leftover))
            upgrade(to: endpoint, leftover: [])
        }
    }

    /// Calls `callback` once everything sent so far has been taken by the kernel, or with the error if the
    /// socket fails or closes first (`TCPConnection.whenDrained`, wherever the socket is).
    func whenDrained(_ callback: @escaping (UVError?) -> Void) {
        guard remote != nil else { return tcp.whenDrained(callback) }
        remote!.drainWaiters.append(callback)
        remote!.outbox.append(.whenDrained(id: id))
    }

    /// The socket loop's answer to the oldest `whenDrained`.
    func remoteDrained(_ ok: Bool) {
        guard remote != nil, !remote!.drainWaiters.isEmpty else { return }
        let callback = remote!.drainWaiters.removeFirst()
        callback(ok ? nil : .canceled)
    }

    /// Fails the `whenDrained` callbacks still waiting (the socket is gone).
    func failDrainWaiters() {
        guard let waiters = remote?.drainWaiters, !waiters.isEmpty else { return }
        remote!.drainWaiters = []
        for callback in waiters { callback(.canceled) }
    }

    /// A complete message the socket loop read.
    func remoteReceived(_ event: WebSocketEvent) {
        lastHeard = server.loop.nowMilliseconds
        guard case .webSocket(let endpoint) = phase else { return }  // closing: what follows is discarded
        endpoint.handle(event, on: self)
    }

    /// The socket loop ended the WebSocket (the peer's close, a slow reader, an idle peer, a drop).
    func remoteClosing(_ code: CloseCode) {
        recordClose(code)
        if case .webSocket = phase { phase = .closing }
    }
}
