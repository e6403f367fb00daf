import Dispatch
import Logging
import Synchronization
import SpotterCore
import SpotterPorts

/// Sends what is in the webhook outbox, on a thread of its own (never the loop's). Per endpoint, in log order and
/// one at a time: an endpoint's oldest pending delivery goes when it is due, and its next one only once the answer
/// is written back — delivered (a 2xx: the row is forgotten), again later (any other status, or no answer within
/// `timeoutSeconds`: exponential back-off with jitter), or dead-lettered once it has failed for `retryFor` since
/// its first attempt. So at most one request per endpoint is in flight (50 endpoints at most), and a failing
/// endpoint holds back only its own deliveries.
///
/// Each attempt is signed afresh (`WebhookSignature`, the endpoint's current secret, the time of sending). A
/// delivery in flight at a crash is still pending in the outbox: it goes again at the next start, with the same
/// event id. In a cluster the outbox is shared; the dispatcher sends only while this process holds the timer lease.
final class WebhookDispatcher: Sendable {
    private let accounts: AccountStore
    private let transport: any WebhookTransport
    private let settings: WebhookSettings
    private let metrics: ServerMetrics
    private let logger: Logger
    private let thread = DispatcherThread(label: "spotter.webhooks.dispatcher")
    /// Endpoints with a delivery sent and its answer not yet written back.
    private let busy = Mutex<Set<String>>([])
    /// Answers not yet written back: (delivery, answer, when sent in ms).
    private let answers = Mutex<[(WebhookDeliveryRow, WebhookAnswer, Int64)]>([])

    init(accounts: AccountStore, transport: any WebhookTransport, settings: WebhookSettings, metrics: ServerMetrics,
         logger: Logger) {
        self.accounts = accounts
        self.transport = transport
        self.settings = settings
        self.metrics = metrics
        var logger = logger
        logger[metadataKey: "part"] = "webhooks"
        self.logger = logger
    }

    func start() {
        thread.start { self.run() }
    }

    /// Something was queued, answered or replayed: look now rather than at the next poll.
    func wake() { thread.wake() }

    func setActive(_ value: Bool) { thread.setActive(value) }

    /// Stops sending, writes back the answers in hand and ends the transport (what it still holds stays pending in
    /// the outbox for the next start). Waits at most `timeoutMilliseconds`.
    func stop(timeoutMilliseconds: Int = 5000) -> Bool {
        let stopped = thread.stop(timeoutMilliseconds: timeoutMilliseconds)
        transport.shutdown()
        return stopped
    }

    private func run() {
        var failures = 0
        var lastGauge: Int64 = 0
        while !thread.isStopping {
            guard thread.isActive else {
                pause(settings.pollMilliseconds)
                continue
            }
            do {
                try writeBackAnswers()
                try sendDue()
                let now = SystemClock.milliseconds
                if now - lastGauge >= 2000 {
                    let pending = try accounts.pendingWebhookDeliveries()
                    metrics.gauge("spotter_webhook_queued", [], pending.values.reduce(0, +))
                    lastGauge = now
                }
                failures = 0
                pause(settings.pollMilliseconds)
            } catch {
                failures += 1
                let wait = min(settings.pollMilliseconds << min(failures, 8), 30_000)
                logger.warning("webhook outbox unavailable; trying again", metadata: ["error": "\(error)", "retry_ms": "\(wait)"])
                pause(wait)
            }
        }
        try? writeBackAnswers()
    }

    private func sendDue() throws {
        let now = SystemClock.milliseconds
        let due = try accounts.dueWebhookDeliveries(now: now, busy: busy.withLock { $0 })
        for delivery in due {
            busy.withLock { _ = $0.insert(delivery.endpointID) }
            let body = Array(delivery.payload.utf8)
            let request = WebhookRequest(url: delivery.url, headers: [
                ("Content-Type", "application/json"),
                ("User-Agent", "Spotter-Webhooks/1"),
                (WebhookSignature.header, WebhookSignature.value(secret: delivery.secret, timestamp: now / 1000, body: body)),
                ("Spotter-Event-Id", delivery.eventID),
                ("Spotter-Event-Type", delivery.eventType),
            ], body: body, timeoutSeconds: settings.timeoutSeconds)
            transport.send(request) { [self] answer in
                answers.withLock { $0.append((delivery, answer, now)) }
                wake()
            }
        }
    }

    /// Writes the answers back into the outbox (kept in hand if the store fails, for the next pass); only then is
    /// the endpoint free for its next delivery.
    private func writeBackAnswers() throws {
        let taken = answers.withLock { list in
            defer { list.removeAll() }
            return list
        }
        guard !taken.isEmpty else { return }
        let now = SystemClock.milliseconds
        var attempts: [AccountStore.WebhookAttempt] = []
        for (delivery, answer, sentAt) in taken {
            let error: String? = switch answer {
            case .status(let status): (200..<300).contains(status) ? nil : "HTTP \(status)"
            case .failed(let why): String(why.prefix(200))
            }
            attempts.append(AccountStore.WebhookAttempt(endpointID: delivery.endpointID, eventID: delivery.eventID,
                                                        outcome: outcome(delivery, answer, sentAt: sentAt, now: now), error: error,
                                                        firstAttemptAt: delivery.firstAttemptAt ?? sentAt))
        }
        do {
            try accounts.finishWebhookDeliveries(attempts, now: now)
        } catch {
            answers.withLock { $0.insert(contentsOf: taken, at: 0) }  // the endpoints stay busy until it is written
            throw error
        }
        for attempt in attempts {
            switch attempt.outcome {
            case .delivered:
                metrics.count("spotter_webhook_delivered_total", [])
            case .again:
                metrics.count("spotter_webhook_failed_total", [])
                metrics.count("spotter_webhook_retries_total", [])
            case .dead:
                metrics.count("spotter_webhook_failed_total", [])
                metrics.count("spotter_webhook_dead_lettered_total", [("reason", "retry_window")])
                logger.warning("webhook delivery dead-lettered", metadata: [
                    "endpoint": "\(attempt.endpointID)", "event": "\(attempt.eventID)", "error": "\(attempt.error ?? "")"])
            }
        }
        busy.withLock { endpoints in for attempt in attempts { endpoints.remove(attempt.endpointID) } }
    }

    private func outcome(_ delivery: WebhookDeliveryRow, _ answer: WebhookAnswer, sentAt: Int64, now: Int64) -> WebhookDeliveryOutcome {
        if case .status(let status) = answer, (200..<300).contains(status) { return .delivered }
        let first = delivery.firstAttemptAt ?? sentAt
        let next = now + settings.retryDelay(afterAttempts: delivery.attempts, unit: Double.random(in: 0..<1))
        return next - first >= settings.retryForMilliseconds ? .dead : .again(notBefore: next)
    }

    private func pause(_ milliseconds: Int) { thread.pause(milliseconds) }
}
