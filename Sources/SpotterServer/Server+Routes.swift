import EventLoop
import SpotterProtocol
import WebSocket

/// Where an HTTP request goes: the API, the health and metrics endpoints, the echo endpoint, the web files.
extension Server {
    enum Route {
        /// Answered; a request that asked for an upgrade and did not get it is then closed (`Connection.answer`).
        case respond(HTTPResponse)
        case upgrade(WebSocketEndpoint)
        /// Answered later (after work off the loop) through the callback, on the loop.
        case deferred((@escaping (HTTPResponse) -> Void) -> Void)
        /// Decided later (after work off the loop) through the callback, on the loop: an upgrade or an answer.
        case later((@escaping (Route) -> Void) -> Void)
        /// Answered with a body made a piece at a time off the loop, sent in chunks as the client takes them.
        case stream(any ResponseStream)
        /// An upload admitted from its head: its body is streamed to disk, then handed to the endpoint.
        case receiveBody(UploadAdmission)
        /// An upload's head decided after work off the loop (its thread read first, `API+UploadAdmission`): nothing
        /// of the body is read until the callback, on the loop, says `receiveBody` or `respond`.
        case decideUpload((@escaping (Route) -> Void) -> Void)
    }

    /// `metricsListener`: the request came on `--metrics-listen`, where only `/metrics`, `/healthz` and `/readyz`
    /// are served (and `/metrics` is not served on the main port).
    func route(_ request: HTTPRequest, peer: String, metricsListener: Bool = false) -> Route {
        let metricsHere = metricsListener || config.operators.metricsListen == nil
        if !metricsListener, let route = api.route(request, peer: peer) { return route }
        let language = Language(acceptLanguage: request.headers["Accept-Language"])
        switch request.path {
        case "/healthz":
            guard request.method == "GET" else { return .respond(methodNotAllowed) }
            return .respond(health())
        case "/readyz":
            guard request.method == "GET" else { return .respond(methodNotAllowed) }
            return .respond(readiness(language))
        case "/metrics" where metricsHere:
            guard request.method == "GET" else { return .respond(methodNotAllowed) }
            if let refusal = metricsRefusal(request, language) { return .respond(refusal) }
            let totals = storage.writerTotals
            metrics.outboundQueued.record(connections.values.reduce(0) { $0 + $1.tcp.queuedBytes })
            metrics.recordStore(writesInFlight: runner.pipeline.inFlight, totals: ServerMetrics.StoreTotals(
                batches: totals.batches, jobs: totals.jobs, checkpointPasses: totals.checkpointPasses))
            for progress in consumers?.progress(newest: runner.pipeline.committedThrough) ?? [] { metrics.recordConsumer(progress) }
            if let meter = iterationMeter { loopMetrics.record(meter.take()) }
            return .respond(HTTPResponse(
                status: 200, headers: [("Content-Type", "text/plain; version=0.0.4; charset=utf-8")],
                body: metrics.exposition()))
        case "/echo" where config.echoEnabled && !metricsListener:
            return .upgrade(echo)
        default:
            if !metricsListener, let file = web.response(method: request.method, path: String(request.path)) { return .respond(file) }
            metrics.recordHandshakeFailure(status: 404, reason: HTTPError.metricReason(404))
            return .respond(.refusal(HTTPError(404, "no such path"), language))
        }
    }

    private var methodNotAllowed: HTTPResponse {
        .refusal(HTTPError(405, "use GET", headers: [("Allow", "GET")]), .english)
    }

    /// `GET /healthz`; its schema is Protocol/schemas/Health.json.
    private struct Health: Encodable {
        var status: String
        var version: String
        var uptimeSeconds: Double
        var connections: Int
        var run: Int64?
        enum CodingKeys: String, CodingKey {
            case status, version, connections, run
            case uptimeSeconds = "uptime_seconds"
        }
    }

    private func health() -> HTTPResponse {
        let health = Health(
            status: isDraining ? "draining" : "ok", version: Self.version,
            uptimeSeconds: Double(loop.nowMilliseconds &- startedAt) / 1000, connections: connections.count,
            run: storage.runNumber)
        return .json(isDraining ? 503 : 200, health)
    }
}
