import Dispatch
import EventLoop
import Logging
import Synchronization
import SpotterCore
import SpotterPorts

/// How the log's durable consumers poll, batch and back off (`ServerConfig.logConsumerTiming`).
public struct LogConsumerTiming: Sendable {
    /// How often a consumer that has caught up looks for new records: the longest a committed record waits before
    /// it is handed on. A consumer that is behind reads its next batch at once.
    public var pollMilliseconds = 200
    /// Records read and handed over at once: all a consumer holds in memory, however far behind it is (a record is
    /// at most a few KiB). Each batch costs a store read, a look at the loop and one or two writer jobs whatever its
    /// size: at 10,000 msgs/s 256 made ≈ 40 batches a second per consumer, 1,024 makes ≈ 10 (issue 33).
    public var batchLimit = 1024
    /// After a failed attempt the consumer waits `pollMilliseconds`, doubled after each further failure, at most this.
    public var maxBackoffMilliseconds = 30_000

    public init() {}

    /// The wait before attempt `failures + 1`.
    func backoff(afterFailures failures: Int) -> Int {
        let doublings = min(max(failures - 1, 0), 20)
        return min(max(pollMilliseconds, 1) << doublings, maxBackoffMilliseconds)
    }
}

/// Runs the log's durable consumers (`LogConsumer`), each on a thread of its own, apart from the loop and from
/// the log's writer. A pass reads the newest committed position, then at most `batchLimit` committed records
/// after the consumer's saved position, hands them over, and only once the consumer says they are handled saves
/// the position past them (at least once: a crash between the two hands them over again, with the same ids).
///
/// The writer never waits for a consumer: consumers read what is committed, from the store, and a slow or failing
/// one only falls behind (`spotter_log_consumer_lag`); what it holds in memory is one batch. A failure (the
/// consumer's or the store's) leaves the position where it is and is retried after a back-off.
///
/// In a cluster a consumer's position is shared by every process; consumers then run only in the process that
/// holds the timer lease (`setActive`), one reader at a time.
final class LogConsumerRunner: Sendable {
    private let lanes: [ConsumerLane]

    init(log: any ConsumableLog, consumers: [any LogConsumer], timing: LogConsumerTiming, failPoints: FailPoints,
         logger: Logger) {
        precondition(Set(consumers.map(\.name)).count == consumers.count, "two log consumers share a name")
        lanes = consumers.map { ConsumerLane(consumer: $0, log: log, timing: timing, failPoints: failPoints, logger: logger) }
    }

    /// Starts every consumer's thread. A consumer that never ran gets its start position here, before the server
    /// takes connections, so that `.newest` means what was committed before this start (not whatever its thread
    /// found first).
    func start() {
        for lane in lanes {
            let known = try? lane.startPosition()
            DispatchQueue(label: "spotter.consumer.\(lane.consumer.name)").async { lane.run(from: known) }
        }
    }

    /// Whether consumers read and deliver (in a cluster: while this process holds the timer lease).
    func setActive(_ active: Bool) {
        for lane in lanes { lane.setActive(active) }
    }

    /// Stops every consumer after the batch it is handling, waiting at most `timeoutMilliseconds` in all for a
    /// consumer stuck in `deliver` (its records then come again at the next start).
    func stop(timeoutMilliseconds: Int = 5000) -> Bool {
        for lane in lanes { lane.requestStop() }
        let deadline = DispatchTime.now() + .milliseconds(timeoutMilliseconds)
        return lanes.allSatisfy { $0.finished.wait(timeout: deadline) == .success }
    }

    /// Each consumer's progress, for `/metrics`; `newest`: the newest position the caller knows is committed.
    func progress(newest: Int64) -> [ConsumerProgress] {
        lanes.compactMap { $0.progress(newest: newest) }
    }
}

extension Server {
    /// The log's durable consumers: the tap (opened here: start-up only, it blocks), the configured ones, and the
    /// session reminders off the app when a gateway is configured (`ServerConfig.reminderSenders`).
    func makeConsumers() throws -> [any LogConsumer] {
        var list = config.logConsumers
        if let path = config.logTapPath { list.insert(try LogTap(path: path), at: 0) }
        // Deleted words leave the disk by `--purge-within`.
        let purge = PurgeConsumer(purger: purger, clock: config.clock, purgeWithinSeconds: config.purgeWithinSeconds)
        purgeConsumer = purge
        list.append(purge)
        // Session reminders by email or SMS, when the server has a gateway for either.
        if !config.reminderSenders.isEmpty {
            list.append(ReminderConsumer(accounts: api.services.accounts, senders: config.reminderSenders, clock: config.clock,
                                         metrics: metrics, logger: logger))
        }
        if !config.push.providers.isEmpty {
            let dispatcher = PushDispatcher(accounts: api.services.accounts, settings: config.push, clock: config.clock,
                                            metrics: metrics, logger: logger)
            pushDispatcher = dispatcher
            list.append(PushConsumer(accounts: api.services.accounts, directory: api.services.accounts.directory,
                                     settings: config.push, clock: config.clock, metrics: metrics,
                                     facts: PushConsumer.askLoop(loop, LoopBound(runner, loop: loop)),
                                     enqueued: { [weak dispatcher] in dispatcher?.wake() }))
        }
        if let transport = config.webhooks.transport {
            let dispatcher = WebhookDispatcher(accounts: api.services.accounts, transport: transport, settings: config.webhooks,
                                               metrics: metrics, logger: logger)
            webhookDispatcher = dispatcher
            list.append(WebhookConsumer(accounts: api.services.accounts, settings: config.webhooks, metrics: metrics,
                                        threads: WebhookConsumer.askLoop(loop, LoopBound(runner, loop: loop)),
                                        enqueued: { [weak dispatcher] in dispatcher?.wake() }))
        }
        return list
    }

    /// Starts the consumers' threads. In a cluster they wait for the timer lease.
    func startConsumers(_ list: [any LogConsumer]) {
        if let pushDispatcher {
            pushDispatcher.setActive(self.runner.holdsTimers)
            pushDispatcher.start()
        }
        if let webhookDispatcher {
            webhookDispatcher.setActive(self.runner.holdsTimers)
            webhookDispatcher.start()
        }
        guard !list.isEmpty else { return }
        let runner = LogConsumerRunner(log: storage.chat, consumers: list, timing: config.logConsumerTiming,
                                       failPoints: config.failPoints, logger: logger)
        runner.setActive(self.runner.holdsTimers)
        runner.start()
        consumers = runner
        logger.info("log consumers started", metadata: ["consumers": "\(list.map(\.name))"])
    }
}

/// One consumer's progress, for `/metrics`.
struct ConsumerProgress: Equatable {
    let name: String
    /// Log positions between the newest committed record and the consumer's saved position.
    let lag: Int64
    /// Records handed to the consumer so far by this process (a record handed over again counts again).
    let delivered: Int
    /// Failed attempts so far (the consumer's or the store's).
    let failures: Int
}

/// One consumer and its thread.
final class ConsumerLane: Sendable {
    let consumer: any LogConsumer
    private let log: any ConsumableLog
    private let timing: LogConsumerTiming
    private let logger: Logger
    /// Counted on this lane's thread only (each consumer counts its own deliveries).
    private let failPoints: Mutex<FailPoints>
    private let wake = DispatchSemaphore(value: 0)
    let finished = DispatchSemaphore(value: 0)
    private let stopping = Atomic<Bool>(false)
    private let active = Atomic<Bool>(true)
    /// The saved position (-1 until it is known), and the newest committed position seen by the last pass.
    private let saved = Atomic<Int64>(-1)
    private let newestSeen = Atomic<Int64>(0)
    private let delivered = Atomic<Int>(0)
    private let failures = Atomic<Int>(0)

    init(consumer: any LogConsumer, log: any ConsumableLog, timing: LogConsumerTiming, failPoints: FailPoints, logger: Logger) {
        self.consumer = consumer
        self.log = log
        self.timing = timing
        self.failPoints = Mutex(failPoints)
        var logger = logger
        logger[metadataKey: "consumer"] = "\(consumer.name)"
        self.logger = logger
    }

    func setActive(_ value: Bool) {
        active.store(value, ordering: .releasing)
        if value { wake.signal() }
    }

    func requestStop() {
        stopping.store(true, ordering: .releasing)
        wake.signal()
    }

    func progress(newest: Int64) -> ConsumerProgress? {
        let position = saved.load(ordering: .acquiring)
        guard position >= 0 else { return nil }
        let head = max(newest, newestSeen.load(ordering: .acquiring))
        return ConsumerProgress(name: consumer.name, lag: max(head - position, 0), delivered: delivered.load(ordering: .relaxed),
                                failures: failures.load(ordering: .relaxed))
    }

    /// The lane's thread: passes until stopped, from `known` (the start position, when it could be read already).
    func run(from known: Int64?) {
        defer { finished.signal() }
        var position = known
        var failed = 0
        while !stopping.load(ordering: .acquiring) {
            guard active.load(ordering: .acquiring) else {
                pause(timing.pollMilliseconds)
                continue
            }
            do {
                let from = try position ?? startPosition()
                position = from
                let (next, more) = try pass(after: from)
                position = next
                failed = 0
                if !more { pause(timing.pollMilliseconds) }
            } catch {
                // A consumer that gave its batch back because the server stops (the purge waiting for its time) did
                // not fail: the batch comes again at the next start.
                if stopping.load(ordering: .acquiring) || error is PurgeConsumer.Stopped { break }
                failed += 1
                failures.add(1, ordering: .relaxed)
                let wait = timing.backoff(afterFailures: failed)
                logger.warning("log consumer failed; trying again", metadata: [
                    "error": "\(error)", "position": "\(position.map(String.init) ?? "?")", "retry_ms": "\(wait)"])
                pause(wait)
            }
        }
    }

    /// The saved position, or (first run) the consumer's start, saved at once so a crash before its first batch
    /// does not move it.
    func startPosition() throws -> Int64 {
        if let known = try log.consumerPosition(consumer.name) {
            saved.store(known, ordering: .releasing)
            return known
        }
        let first = consumer.start == .oldest ? 0 : try log.newestPosition()
        try log.saveConsumerPosition(consumer.name, first)
        saved.store(first, ordering: .releasing)
        logger.info("log consumer starts", metadata: ["after": "\(first)"])
        return first
    }

    /// One batch after `position`: handed over, then the position saved past it. Returns the position saved and
    /// whether more records are waiting.
    private func pass(after position: Int64) throws -> (Int64, Bool) {
        let newest = try log.newestPosition()
        newestSeen.store(newest, ordering: .releasing)
        guard newest > position else { return (position, false) }
        let records = try consumer.kinds.map { try log.recordsAfter(position, through: newest, limit: timing.batchLimit, kinds: $0) }
            ?? log.recordsAfter(position, through: newest, limit: timing.batchLimit)
        if !records.isEmpty {
            try consumer.deliver(records.map(LogDelivery.init))
            delivered.add(records.count, ordering: .relaxed)
            // The crash tests' kill is the delivering consumers' (the tap's, the webhooks'), not the purge's.
            if !(consumer is PurgeConsumer) {
                failPoints.withLock { if $0.counts(consumer.name) { $0.reached(.consumerDelivered) } }
            }
        }
        // A full batch ends at its last record; a short one took everything through `newest` (positions there that
        // are no record, such as an old database's placeholder, are passed over).
        let full = records.count == timing.batchLimit
        let next = full ? records[records.count - 1].pos : newest
        try log.saveConsumerPosition(consumer.name, next)
        saved.store(next, ordering: .releasing)
        return (next, full)
    }

    /// Waits `milliseconds`, or less if woken (a stop, the lease taken).
    private func pause(_ milliseconds: Int) {
        _ = wake.wait(timeout: .now() + .milliseconds(milliseconds))
    }
}
