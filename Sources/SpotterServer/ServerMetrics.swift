import CoreMetrics
import Prometheus
import Synchronization

typealias Counter = CoreMetrics.Counter
typealias Meter = CoreMetrics.Meter
typealias Gauge = CoreMetrics.Gauge

/// The server's counters and gauges, exposed at `GET /metrics`.
///
/// Each `Server` has its own Prometheus registry (tests run several servers
/// in one process), reached through swift-metrics' API with an explicit
/// factory instead of the process-wide bootstrap.
final class ServerMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()
    let factory: PrometheusMetricsFactory

    let connectionsOpen: Meter
    let connectionsAccepted: Counter
    let framesIn: Counter
    let framesOut: Counter
    let bytesIn: Counter
    let bytesOut: Counter
    let backpressureDisconnects: Counter
    let idleTimeouts: Counter
    /// App sockets moved to a socket loop (`--loops N`).
    let socketsMoved: Counter
    /// HTTP-phase connections closed to admit a new one (`maxHTTPConnections`).
    let httpConnectionsEvicted: Counter
    /// Requests whose head or body missed `requestTimeoutSeconds`.
    let requestTimeouts: Counter
    /// Sessions revoked (sign-out, refresh-token reuse).
    let sessionsRevoked: Counter
    /// Accounts erased (`DELETE /v1/me`, `DELETE /v1/admin/users/{id}`).
    let accountsErased: Counter
    /// Sign-ups and sign-ins refused because the hashing queue was full.
    let hashQueueRejections: Counter
    /// Uploads refused from their head because `maxUploadBytesInFlight` was reached (503).
    let uploadsRefusedBusy: Counter
    /// Slow readers closed (1008) because their account's sockets together held more than `maxAccountOutboundBytes`.
    let accountBackpressureDisconnects: Counter
    let writesInFlight: Gauge
    /// `message.send` commands answered with the stored message (an idempotent retry is answered, and counted, again).
    let messagesAcked: Counter
    /// From a `message.send` frame's arrival to its acknowledgement (the message durable), as a histogram.
    let sendAck: CoreMetrics.Timer
    /// Bytes queued for sending and not yet taken by the kernel, over all connections (at scrape time).
    let outboundQueued: Gauge
    /// Cluster mode: records of other processes this one applied, and reads of the log that filled a gap the
    /// stream between processes left (a rise means NATS is losing messages or a process died mid-publish).
    let followedRecords: Counter
    let followGapReads: Counter
    /// Cluster mode: others' chat records passed over (no participant of their thread here), and stale threads
    /// read again from the store when one was wanted (`CoreRunner+Interest`).
    let followPassedOver: Counter
    let threadsRefreshed: Counter
    /// Thread views this process's checkpoints saved (in a cluster only the timer lease's holder saves), and the
    /// publications it made on the cluster's log stream (one per loop iteration with commits, `LogFollower`).
    let viewsSaved: Counter
    let logPublications: Counter
    /// PostgreSQL: this process's thread messages the database numbered otherwise than guessed (another process's
    /// message in the same thread took the seq first; `CoreRunner+Seqs`).
    let seqsRenumbered: Counter
    /// Cluster mode: revocations this process learnt from its periodic read of the accounts, not from another
    /// process's `account` record (non-zero: records were lost, a process died between the commit and the append).
    let revocationsFromAccounts: Counter
    /// Cluster mode: how far behind the newest position this process has handed on records (at scrape time).
    let followWaiting: Gauge
    private let batchesCommitted: Counter
    private let jobsCommitted: Counter
    private let checkpointPasses: Counter
    /// The store writer's totals at the previous scrape: its counters advance by the difference.
    private let storeTotals = Mutex<StoreTotals>(StoreTotals())
    /// Each durable log consumer's lag gauge and counters, by name, with the totals at the previous scrape.
    private let consumers = Mutex<[String: ConsumerMetrics]>([:])
    private let closes = Mutex<[UInt16: Counter]>([:])
    /// Counters and gauges made on first use, by label and dimensions (the push dispatcher's, by platform and reason).
    private let labelledCounters = Mutex<[String: Counter]>([:])
    private let labelledGauges = Mutex<[String: Gauge]>([:])
    /// A push's time from entering the outbox to the provider's answer (`spotter_push_latency_seconds`).
    let pushLatency: CoreMetrics.Timer
    private let handshakeFailures = Mutex<[String: Counter]>([:])

    init() {
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.durationHistogramBuckets["spotter_send_ack_seconds"] = [
            .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(20),
            .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(5),
        ]
        factory.durationHistogramBuckets["spotter_push_latency_seconds"] = [
            .milliseconds(10), .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1),
            .seconds(2), .seconds(5), .seconds(30), .seconds(60), .seconds(300),
        ]
        self.factory = factory
        pushLatency = CoreMetrics.Timer(label: "spotter_push_latency_seconds", factory: factory)
        messagesAcked = Counter(label: "spotter_messages_total", factory: factory)
        followedRecords = Counter(label: "spotter_cluster_followed_records_total", factory: factory)
        followGapReads = Counter(label: "spotter_cluster_gap_reads_total", factory: factory)
        followPassedOver = Counter(label: "spotter_cluster_passed_over_records_total", factory: factory)
        threadsRefreshed = Counter(label: "spotter_cluster_threads_refreshed_total", factory: factory)
        viewsSaved = Counter(label: "spotter_checkpoint_views_total", factory: factory)
        logPublications = Counter(label: "spotter_cluster_log_publications_total", factory: factory)
        seqsRenumbered = Counter(label: "spotter_seqs_renumbered_total", factory: factory)
        revocationsFromAccounts = Counter(label: "spotter_cluster_revocations_from_accounts_total", factory: factory)
        followWaiting = Gauge(label: "spotter_cluster_records_waiting", factory: factory)
        sendAck = CoreMetrics.Timer(label: "spotter_send_ack_seconds", factory: factory)
        connectionsOpen = Meter(label: "spotter_connections_open", factory: factory)
        connectionsAccepted = Counter(label: "spotter_connections_accepted_total", factory: factory)
        framesIn = Counter(label: "spotter_websocket_frames_in_total", factory: factory)
        framesOut = Counter(label: "spotter_websocket_frames_out_total", factory: factory)
        bytesIn = Counter(label: "spotter_bytes_in_total", factory: factory)
        bytesOut = Counter(label: "spotter_bytes_out_total", factory: factory)
        backpressureDisconnects = Counter(label: "spotter_backpressure_disconnects_total", factory: factory)
        idleTimeouts = Counter(label: "spotter_idle_timeouts_total", factory: factory)
        socketsMoved = Counter(label: "spotter_sockets_moved_total", factory: factory)
        httpConnectionsEvicted = Counter(label: "spotter_http_connections_evicted_total", factory: factory)
        requestTimeouts = Counter(label: "spotter_request_timeouts_total", factory: factory)
        sessionsRevoked = Counter(label: "spotter_sessions_revoked_total", factory: factory)
        accountsErased = Counter(label: "spotter_accounts_erased_total", factory: factory)
        hashQueueRejections = Counter(label: "spotter_hash_queue_rejections_total", factory: factory)
        uploadsRefusedBusy = Counter(label: "spotter_uploads_refused_busy_total", factory: factory)
        accountBackpressureDisconnects = Counter(label: "spotter_account_backpressure_disconnects_total", factory: factory)
        writesInFlight = Gauge(label: "spotter_store_writes_in_flight", factory: factory)
        outboundQueued = Gauge(label: "spotter_outbound_queued_bytes", factory: factory)
        batchesCommitted = Counter(label: "spotter_store_batches_total", factory: factory)
        jobsCommitted = Counter(label: "spotter_store_jobs_total", factory: factory)
        checkpointPasses = Counter(label: "spotter_store_checkpoint_passes_total", factory: factory)
    }

    struct StoreTotals: Equatable {
        var batches = 0
        var jobs = 0
        var checkpointPasses = 0
    }

    /// Brings the store gauges and counters up to date; called before each exposition.
    func recordStore(writesInFlight inFlight: Int, totals: StoreTotals) {
        writesInFlight.record(inFlight)
        let previous = storeTotals.withLock { last in
            defer { last = totals }
            return last
        }
        batchesCommitted.increment(by: max(totals.batches - previous.batches, 0))
        jobsCommitted.increment(by: max(totals.jobs - previous.jobs, 0))
        checkpointPasses.increment(by: max(totals.checkpointPasses - previous.checkpointPasses, 0))
    }

    private struct ConsumerMetrics {
        let lag: Gauge
        let delivered: Counter
        let failures: Counter
        var last: ConsumerProgress
    }

    /// Brings a log consumer's lag up to date, and its counters by what it did since the previous scrape.
    /// `spotter_reminders_total{outcome}`: session reminders off the app, by what became of each (`ReminderConsumer`).
    func reminderCounter(_ outcome: String) -> Counter {
        Counter(label: "spotter_reminders_total", dimensions: [("outcome", outcome)], factory: factory)
    }

    func recordConsumer(_ progress: ConsumerProgress) {
        consumers.withLock { all in
            let dimensions = [("consumer", progress.name)]
            var entry = all[progress.name] ?? ConsumerMetrics(
                lag: Gauge(label: "spotter_log_consumer_lag", dimensions: dimensions, factory: factory),
                delivered: Counter(label: "spotter_log_consumer_delivered_total", dimensions: dimensions, factory: factory),
                failures: Counter(label: "spotter_log_consumer_failures_total", dimensions: dimensions, factory: factory),
                last: ConsumerProgress(name: progress.name, lag: 0, delivered: 0, failures: 0))
            entry.lag.record(progress.lag)
            entry.delivered.increment(by: max(progress.delivered - entry.last.delivered, 0))
            entry.failures.increment(by: max(progress.failures - entry.last.failures, 0))
            entry.last = progress
            all[progress.name] = entry
        }
    }

    /// Counts a finished WebSocket connection by its close code (1006: dropped without a close frame).
    func recordClose(_ code: UInt16) {
        closes.withLock { counters in
            let counter = counters[code] ?? Counter(
                label: "spotter_websocket_closes_total", dimensions: [("code", String(code))], factory: factory)
            counters[code] = counter
            counter.increment()
        }
    }

    /// Counts a refused HTTP request or upgrade by its status and path kind.
    func recordHandshakeFailure(status: Int, reason: String) {
        let key = "\(status)|\(reason)"
        handshakeFailures.withLock { counters in
            let counter = counters[key] ?? Counter(
                label: "spotter_handshake_failures_total",
                dimensions: [("status", String(status)), ("reason", reason)], factory: factory)
            counters[key] = counter
            counter.increment()
        }
    }

    /// Adds `amount` to the counter `label` with `dimensions`, made on first use.
    func count(_ label: String, _ dimensions: [(String, String)], by amount: Int = 1) {
        guard amount > 0 else { return }
        let key = ([label] + dimensions.map { "\($0.0)=\($0.1)" }).joined(separator: "|")
        labelledCounters.withLock { counters in
            let counter = counters[key] ?? Counter(label: label, dimensions: dimensions, factory: factory)
            counters[key] = counter
            counter.increment(by: amount)
        }
    }

    /// Sets the gauge `label` with `dimensions`, made on first use.
    func gauge(_ label: String, _ dimensions: [(String, String)], _ value: Int) {
        let key = ([label] + dimensions.map { "\($0.0)=\($0.1)" }).joined(separator: "|")
        labelledGauges.withLock { gauges in
            let gauge = gauges[key] ?? Gauge(label: label, dimensions: dimensions, factory: factory)
            gauges[key] = gauge
            gauge.record(value)
        }
    }

    /// The Prometheus text exposition.
    func exposition() -> [UInt8] {
        registry.emitToBuffer()
    }
}
