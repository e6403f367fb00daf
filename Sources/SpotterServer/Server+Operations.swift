import EventLoop
import SpotterCore
import SpotterProtocol
import WebSocket

/// What operators and load balancers get: `/metrics` behind a token or on its own listener, `/readyz`, and the
/// announced drain before a shutdown (`OperatorSettings`). Loop thread only.
extension Server {
    /// Starts the second listener of `--metrics-listen` (called by `start()` after the main one).
    func startOperatorParts() throws {
        if let clusterBroker {
            let previous = clusterBroker.connectionChanged
            clusterBroker.connectionChanged = { [weak self] up in
                previous?(up)
                self?.brokerConnected = up
            }
        }
        guard let address = config.operators.metricsListen else { return }
        let listener = TCPListener(loop: loop)
        do {
            try listener.listen(host: address.host, port: address.port, backlog: 64) { [weak self] tcp in
                self?.accept(tcp, metricsListener: true)
            }
        } catch {
            listener.close()
            throw error
        }
        metricsListener = listener
        logger.info("metrics on their own listener", metadata: ["host": "\(address.host)", "port": "\(listener.port)"])
    }

    /// The port of `--metrics-listen` (after `start()`), nil without it.
    public var metricsPort: Int? { metricsListener?.port }

    /// A shutdown was asked for (SIGTERM, SIGINT, `requestShutdown`): with a drain delay, `/readyz` answers 503
    /// for that long first; a second request, or none, drains at once.
    func shutdownRequested() {
        let delay = config.operators.drainDelaySeconds
        guard delay > 0, !drainAnnounced, !isDraining else { return beginShutdown() }
        drainAnnounced = true
        logger.info("not ready; draining soon", metadata: ["in_seconds": "\(delay)"])
        let timer = Timer(loop: loop)
        timer.start(after: UInt64(delay) * 1000) { [weak self] in self?.beginShutdown() }
        drainDelayTimer = timer
    }

    /// How long after a failed read or write of the store `/readyz` still answers 503 `store`.
    static let storeFailureMemoryMilliseconds: UInt64 = 5000

    /// Why new sockets should go elsewhere right now, or nil when the server is ready.
    var unreadiness: String? {
        if isDraining || drainAnnounced { return "draining" }
        if runner.isRecovering { return "store" }
        if let failed = runner.storeFailedAt, loop.nowMilliseconds &- failed < Self.storeFailureMemoryMilliseconds { return "store" }
        if !brokerConnected { return "broker" }
        return nil
    }

    /// `GET /readyz`: 200 `{"status":"ready"}`, or 503 `unavailable` naming what is away (`draining`, `store`,
    /// `broker`) in `field`, with `Retry-After`.
    func readiness(_ language: Language) -> HTTPResponse {
        guard let reason = unreadiness else {
            return HTTPResponse(status: 200, headers: [("Content-Type", "application/json"), ("Cache-Control", "no-store")],
                                body: Array(#"{"status":"ready"}"#.utf8))
        }
        return .apiError(APIError(.unavailable, field: reason, retryAfterSeconds: 1), language, headers: [("Cache-Control", "no-store")])
    }

    /// Whether this request may read `/metrics`: always without `--metrics-token`; with it, that token as a
    /// bearer (compared in constant time, as SHA-256 digests) or an admin's access token. Otherwise the refusal to send: 401 with
    /// `WWW-Authenticate: Bearer`, or 403 for a signed-in user who is not an admin.
    func metricsRefusal(_ request: HTTPRequest, _ language: Language) -> HTTPResponse? {
        guard let expected = config.operators.metricsToken else { return nil }
        let challenge: [(name: String, value: String)] = [("WWW-Authenticate", #"Bearer realm="metrics""#)]
        guard let header = request.headers["Authorization"] else {
            return .apiError(APIError(.unauthorized), language, headers: challenge)
        }
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else {
            return .apiError(APIError(.unauthorized), language, headers: challenge)
        }
        let presented = String(parts[1])
        // Digests of both: equal lengths, so the comparison's time tells nothing of the token's length either.
        if Digest.constantTimeEquals(Digest.sha256(Array(presented.utf8)), Digest.sha256(Array(expected.utf8))) { return nil }
        do throws(APIError) {
            let (actor, _) = try api.verify(presented)
            return AccessPolicy.canAdminister(actor) ? nil : .apiError(APIError(.forbidden), language)
        } catch {
            return .apiError(error, language, headers: challenge)
        }
    }
}
