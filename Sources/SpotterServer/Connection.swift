import EventLoop
import SpotterProtocol
import WebSocket

/// One client socket, from its first HTTP byte to its close. Loop thread only.
///
/// A connection starts in `.http`: requests to the side door (`/healthz`,
/// `/metrics`) are answered and the connection kept alive; an upgrade
/// request to a WebSocket endpoint moves it to `.webSocket`, where the pure
/// `WebSocketSession` decides what to do with every byte and this class
/// carries the actions out on the socket.
final class Connection {
    enum Phase {
        case http
        case webSocket(WebSocketEndpoint)
        /// Closing: waiting for the peer's FIN (or the deadline) before closing the socket.
        case closing
    }

    let id: UInt64
    let tcp: TCPConnection
    /// The server that accepted it (it drops the connection once closed, which ends the cycle).
    let server: Server
    var phase: Phase = .http {
        didSet {
            if case .http = oldValue, !isHTTP { server.leftHTTPPhase() }
        }
    }
    var parser: HTTPRequestParser
    var session: WebSocketSession
    /// The WebSocket endpoint, kept until the socket closes (to tell it so).
    var endpoint: WebSocketEndpoint?
    /// Loop time (ms) when the peer last sent anything.
    var lastHeard: UInt64
    /// Loop time (ms) of the accept: a layer under the bytes (TLS) must be ready within the request bound of it.
    let openedAt: UInt64
    /// Loop time (ms) of the unanswered keepalive ping, if one is out.
    var pingSentAt: UInt64?
    /// Loop time (ms) after which a closing connection is dropped regardless.
    var closeDeadline: UInt64?
    /// What the WebSocket ended with, counted once in metrics when decided.
    private(set) var closeCode: CloseCode?
    /// The signed-in account of an app socket (`OutboundLedger`), nil otherwise.
    var account: String?
    /// The client this connection speaks for (`Connection+Proxy`).
    var client: ClientAddress
    /// Accepted on `--metrics-listen`: only `/metrics` and the health endpoints are served here.
    var onMetricsListener = false
    /// An app WebSocket whose socket was moved to a socket loop (`--loops N`, `Connection+Remote`): `tcp` is
    /// closed, frames go through this link, and the socket loop says when the socket is gone.
    var remote: RemoteLink?

    init(id: UInt64, tcp: TCPConnection, server: Server, now: UInt64) {
        self.id = id
        self.tcp = tcp
        self.server = server
        self.lastHeard = now
        client = ClientAddress(peer: tcp.peerAddress, proxies: server.config.trustedProxies)
        self.openedAt = now
        parser = HTTPRequestParser(maxBodyBytes: server.config.maxRequestBodyBytes)
        // Uploads may be larger than other bodies; their endpoints say how large (anything more is refused from the head).
        parser.largerBodyLimit = { API.bodyLimit(for: $0) }
        // Their bodies are not buffered: the head is checked first (token, thread, the bound on uploads in
        // flight), then the body streams to a file (`UploadSink`).
        parser.streamsBody = { API.bodyLimit(for: $0) != nil }
        session = WebSocketSession(role: .server, maxMessageBytes: server.config.maxMessageBytes)
    }

    func start() {
        tcp.onRead = { [weak self] bytes in self?.didRead(bytes) }
        tcp.onEnd = { [weak self] _ in self?.peerEnded() }
        tcp.onClose = { [weak self] in self?.finished() }
        tcp.startReading()
    }

    /// The socket is gone (its handle closed here, or on the socket loop it was moved to): the last call.
    func finished() {
        if isHTTP { phase = .closing }  // leaves the HTTP-phase count
        endUpload()
        endStream()
        endpoint?.closed(on: self)
        endpoint = nil
        server.outbound.remove(self)
        server.connectionClosed(self)
    }

    var isWebSocket: Bool {
        if case .webSocket = phase { return true }
        return false
    }

    private func didRead(_ bytes: UnsafeRawBufferPointer) {
        let now = server.loop.nowMilliseconds
        lastHeard = now
        pingSentAt = nil
        server.metrics.bytesIn.increment(by: bytes.count)
        switch phase {
        case .http:
            if requestStartedAt == nil { requestStartedAt = now }
            if client.pending == nil {
                parser.append(bytes)
            } else {
                guard let rest = takeProxyHeader(bytes) else { return }  // more to read, or closed
                parser.append(rest)
            }
            if let upload {
                upload.sink.append(parser.takeStreamedBody())  // the rest (a pipelined request) waits in the parser
                // Nothing more is read until this upload is answered.
                if parser.streamedBodyRemaining == 0 { tcp.stopReading() }
            } else {
                serveHTTP()
            }
        case .webSocket(let endpoint):
            receive(bytes, endpoint)
            checkOutbound()
        case .closing:
            break  // bytes after the closing handshake are discarded
        }
    }

    // MARK: - HTTP

    /// True while a request's answer is being prepared off the loop, or while
    /// an answer is still unsent. Reading pauses meanwhile, so pipelined
    /// requests are answered one at a time as the client takes the answers:
    /// a client that never reads costs one answer and one read of memory.
    var awaitingResponse = false
    /// Loop time (ms) of the first byte of the request being read, nil
    /// between requests. Head and body must be complete within
    /// `requestTimeoutSeconds` of it (a slow head cannot hold the connection).
    var requestStartedAt: UInt64?

    /// A response whose body is being streamed (`Connection+Streaming`), nil otherwise.
    var streaming: (any ResponseStream)?

    /// An upload whose body is being streamed to disk (its head was admitted), nil otherwise.
    var upload: (request: HTTPRequest, sink: UploadSink, admission: UploadAdmission)?

    /// Still in the HTTP phase and not waiting on the server: may be evicted
    /// to admit a new connection when the HTTP-phase bound is reached.
    var isWaitingForRequest: Bool { isHTTP && !awaitingResponse && upload == nil }

    var isHTTP: Bool {
        if case .http = phase { return true }
        return false
    }

    private func serveHTTP() {
        while case .http = phase, !awaitingResponse {
            let request: HTTPRequest
            do {
                guard let next = try parser.next() else {
                    if parser.bufferedBytes > 0, requestStartedAt == nil { requestStartedAt = server.loop.nowMilliseconds }
                    return
                }
                request = next
            } catch {
                refuse(error, .english)
                return
            }
            if parser.streamedBodyRemaining > 0 {
                // An upload's head: decided before a byte of its body is read.
                switch server.route(request, peer: address(for: request), metricsListener: onMetricsListener) {
                case .receiveBody(let admission): receiveBody(request, admission)
                case .decideUpload(let decide): decideUpload(request, decide)
                case .respond(let response): answer(request, with: response)
                case .deferred, .upgrade, .stream, .later: refuse(HTTPError(400, "unexpected request body"), .english)
                }
                return
            }
            requestStartedAt = nil
            switch server.route(request, peer: address(for: request), metricsListener: onMetricsListener) {
            case .receiveBody(let admission):
                // Only a request with a body is admitted as an upload; the endpoint asks for one.
                admission.reservation.release()
                answer(request, with: .apiError(APIError(.missingField, field: "body"), .english))
            case .respond(let response):
                answer(request, with: response)
            case .deferred(let work):
                pause()
                work { [weak self] response in
                    guard let self, !self.tcp.isClosed, case .http = self.phase else { return }
                    self.answer(request, with: response)
                    self.resume()
                }
                return
            case .stream(let body):
                stream(request, body)
                return
            case .decideUpload(let decide):
                decideUpload(request, decide)
                return
            case .upgrade(let endpoint):
                accept(request, endpoint)
                return
            case .later(let decide):
                pause()
                decide { [weak self] route in
                    guard let self, !self.tcp.isClosed, case .http = self.phase else { return }
                    switch route {
                    case .upgrade(let endpoint):
                        self.awaitingResponse = false
                        self.tcp.startReading()
                        self.accept(request, endpoint)
                    case .respond(let response):
                        self.answer(request, with: response)
                        self.resume()
                    case .deferred, .stream, .receiveBody, .later, .decideUpload:
                        self.refuse(HTTPError(500, "unexpected route"), .english)
                    }
                }
                return
            }
            // The next pipelined request waits until this answer has left.
            if case .http = phase, tcp.queuedBytes > 0 {
                pause()
                resume()
                return
            }
        }
    }

    private func accept(_ request: HTTPRequest, _ endpoint: WebSocketEndpoint) {
        do {
            let accepted = try Handshake.accept(request, policy: server.handshakePolicy)
            send(accepted.response, keepAlive: true)
            if server.movesSocket(endpoint, tcp) {
                moveThenUpgrade(to: endpoint, leftover: parser.takeRemaining())
            } else {
                upgrade(to: endpoint, leftover: parser.takeRemaining())
            }
        } catch {
            refuse(error, Language(acceptLanguage: request.headers["Accept-Language"]))
        }
    }

    /// Stops reading until `resume` finds the output drained.
    func pause() {
        awaitingResponse = true
        tcp.stopReading()
    }

    /// Once every answer so far has been written, reads and serves again.
    func resume() {
        tcp.whenDrained { [weak self] error in
            guard let self, error == nil, case .http = self.phase else { return }
            self.awaitingResponse = false
            if self.parser.bufferedBytes > 0 { self.requestStartedAt = self.server.loop.nowMilliseconds }
            self.tcp.startReading()
            self.serveHTTP()  // requests that arrived behind this one
        }
    }

    func answer(_ request: HTTPRequest, with response: HTTPResponse) {
        // A refused upgrade closes: the bytes behind it are WebSocket frames,
        // not a next request.
        let refusedUpgrade = request.headers["Upgrade"] != nil
        // An upload refused from its head closes without reading its body: what the client already sent
        // stays in the kernel's receive buffer (bounded by its window) until the socket is dropped.
        let bodyUnread = parser.streamedBodyRemaining > 0
        let keepAlive = request.keepAlive && !server.isDraining && !refusedUpgrade && !bodyUnread
        send(response, keepAlive: keepAlive)
        if !keepAlive { beginClosing() }
        if bodyUnread { dropUnreadBody() }
    }

    /// After an answer to a request whose body is not wanted: nothing more is read (the peer's FIN would not
    /// be seen either), and the socket goes a second after the answer, time for the peer to read it.
    private func dropUnreadBody() {
        tcp.stopReading()
        _ = parser.takeRemaining()
        closeDeadline = min(closeDeadline ?? .max, server.loop.nowMilliseconds + 1000)
    }

    func send(_ response: HTTPResponse, keepAlive: Bool) {
        let bytes = response.bytes(keepAlive: keepAlive)
        server.metrics.bytesOut.increment(by: bytes.count)
        tcp.send(bytes)
    }

    /// Answers a bad request and closes: after a framing error the rest of
    /// the stream cannot be trusted.
    private func refuse(_ error: HTTPError, _ language: Language) {
        endUpload()  // a body timed out: its file goes
        let bodyUnread = parser.streamedBodyRemaining > 0
        server.metrics.recordHandshakeFailure(status: error.status, reason: HTTPError.metricReason(error.status))
        server.logger.debug(
            "refused request",
            metadata: ["connection": "\(id)", "address": "\(client.address)", "status": "\(error.status)", "reason": "\(error.reason)"])
        send(.refusal(error, language), keepAlive: false)
        beginClosing()
        if bodyUnread { dropUnreadBody() }  // the rest of an upload that timed out is not read
    }

    /// The head or body did not arrive in time: 408, then close.
    func requestTimedOut() {
        server.metrics.requestTimeouts.increment()
        refuse(HTTPError(408, "request not complete within \(server.config.requestTimeoutSeconds) s"), .english)
    }

    /// Closed to make room for a new connection (the HTTP-phase bound).
    func evict() {
        server.metrics.httpConnectionsEvicted.increment()
        phase = .closing
        tcp.close()
    }

    // MARK: - WebSocket

    func upgrade(to endpoint: WebSocketEndpoint, leftover: [UInt8]) {
        phase = .webSocket(endpoint)
        self.endpoint = endpoint
        parser = HTTPRequestParser(maxHeadBytes: 0, maxHeaderCount: 0, maxBodyBytes: 0)  // frees its buffer
        endpoint.opened(on: self)
        if remote == nil, !leftover.isEmpty { leftover.withUnsafeBytes { receive($0, endpoint) } }
    }

    /// Runs bytes through the session, then carries out its actions. The
    /// actions are collected first so that handlers may send on this
    /// connection (which needs the session) while carrying them out.
    private func receive(_ bytes: UnsafeRawBufferPointer, _ endpoint: WebSocketEndpoint) {
        let actions = server.actionBuffer.collect(bytes, through: &session)
        for action in actions { perform(action, endpoint) }
        server.actionBuffer.giveBack(actions)
    }

    private func perform(_ action: WebSocketSession.Action, _ endpoint: WebSocketEndpoint) {
        switch action {
        case .deliver(let event):
            server.metrics.framesIn.increment()
            endpoint.handle(event, on: self)
        case .send(let bytes):
            sendFrameBytes(bytes)
        case .receivedPong:
            break  // lastHeard was updated by the read itself
        case .closeConnection(let code):
            recordClose(code)
            beginClosing()
        }
    }

    /// Sends one data (or ping) frame. Returns false once the connection no
    /// longer accepts data (closing or closed).
    ///
    /// Decided by `phase`, not by the session: the session has already read
    /// ahead to the end of the input (maybe to a close frame) while the
    /// actions it produced are carried out in order, and a reply to a
    /// message that came before the close must still go out before it.
    @discardableResult
    func sendMessage(_ opcode: Opcode, _ payload: UnsafeRawBufferPointer) -> Bool {
        guard case .webSocket = phase else { return false }
        if let remote {
            var frame: [UInt8] = []
            FrameEncoder.append(opcode, payload: payload, to: &frame)
            remote.outbox.append(.frame(id: id, bytes: frame))
            return true
        }
        tcp.withOutbound { buffer in
            let before = buffer.count
            FrameEncoder.append(opcode, payload: payload, to: &buffer)  // server frames are not masked
            server.metrics.bytesOut.increment(by: buffer.count - before)
        }
        server.metrics.framesOut.increment()
        // A client that only receives (a coach with busy clients) and never
        // reads is bounded here; one that also sends is checked on each read.
        checkOutbound()
        return true
    }

    /// Unsent bytes held for this peer: the server's queue and the kernel's send queue.
    var heldOutboundBytes: Int { remote?.held ?? (tcp.queuedBytes &+ tcp.kernelQueuedBytes) }

    /// The per-socket bound counts what the kernel holds too (read only once the kernel refused bytes: a
    /// socket that keeps up costs no system call); a backed-up socket also has its account checked.
    func checkOutbound() {
        guard remote == nil else { return }  // the socket loop applies the bound, where the bytes are
        let bound = server.config.maxOutboundBytes
        guard tcp.isBackedUp || tcp.queuedBytes > bound else { return }
        if tcp.queuedBytes > bound || heldOutboundBytes > bound {
            closeSlowReader()
        } else if let account {
            server.outbound.noteBacklog(account)
        }
    }

    private func sendFrameBytes(_ bytes: [UInt8]) {
        server.metrics.framesOut.increment()
        server.metrics.bytesOut.increment(by: bytes.count)
        tcp.send(bytes)
    }

    /// Starts the closing handshake from the server side (shutdown, idle).
    /// The peer's close frame then arrives in `.closing` and is discarded;
    /// its FIN, or the deadline, ends the socket.
    func close(_ code: CloseCode, reason: String) {
        if let remote {
            if case .webSocket = phase {
                recordClose(code)
                remote.outbox.append(.close(id: id, code: code, reason: reason))
            }
            phase = .closing
            return
        }
        if case .webSocket = phase {
            recordClose(code)
            if let frame = session.close(code, reason: reason) { sendFrameBytes(frame) }
        }
        beginClosing()
    }

    /// The peer stopped reading and its backlog passed the bound. Queue a
    /// close 1008 behind the backlog (it reaches a client that catches up),
    /// stop reading so the peer cannot add work, and drop the socket at the
    /// close deadline whatever happens: memory stays bounded by the limit
    /// plus one message.
    ///
    /// With `accountTotal`, the socket is closed for its account's sockets together (`OutboundLedger`).
    func closeSlowReader(accountTotal: Int? = nil) {
        guard case .webSocket = phase else { return }  // once: it may be found on a send and again on the read
        server.metrics.backpressureDisconnects.increment()
        if accountTotal != nil { server.metrics.accountBackpressureDisconnects.increment() }
        server.logger.info("closing slow reader", metadata: [
            "connection": "\(id)", "queued": "\(tcp.queuedBytes)", "account_total": "\(accountTotal.map(String.init) ?? "-")"])
        recordClose(.policyViolation)
        let reason = accountTotal == nil ? "too slow: outbound queue full" : "too slow: account's outbound bytes over the bound"
        if let remote {
            remote.outbox.append(.closeSlowReader(id: id, reason: reason))
            phase = .closing
            return
        }
        sendFrameBytes(FrameEncoder.frame(.close, payload: FrameEncoder.closePayload(.policyViolation, reason: reason)))
        session.abandon()
        tcp.stopReading()
        beginClosing()
    }

    func recordClose(_ code: CloseCode) {
        guard closeCode == nil else { return }
        closeCode = code
        server.metrics.recordClose(code.rawValue)
    }

    /// Half-closes once output is flushed and waits (bounded) for the peer's FIN.
    func beginClosing() {
        if case .closing = phase { return }
        phase = .closing
        tcp.shutdownAfterFlush()
        closeDeadline = server.loop.nowMilliseconds + UInt64(server.config.closeTimeoutSeconds) * 1000
    }

    private func peerEnded() {
        if case .webSocket = phase {
            session.abandon()
            recordClose(.abnormal)
        }
        phase = .closing
        tcp.close()
    }
}
