import Dispatch
import Logging
import Synchronization
import SpotterCore
import SpotterPorts

/// Sends what is in the push outbox, on a thread of its own (never the loop's): claims due pushes per platform up
/// to `inFlightPerProvider`, hands them to the platform's provider and writes back what became of each — sent,
/// again later (back-off with jitter, or the provider's `Retry-After`), dropped (refused, expired, out of
/// attempts), or the device gone (removed with everything waiting for it). At start-up pushes a crash left in
/// flight are set due again: they go with the same ids, so a provider or app drops a repeat.
///
/// In a cluster the outbox is shared; the dispatcher sends only while this process holds the timer lease.
final class PushDispatcher: Sendable {
    private let accounts: AccountStore
    private let providers: [PushAddress.Platform: any PushProvider]
    private let settings: PushSettings
    private let clock: any Clock
    private let metrics: ServerMetrics
    private let logger: Logger
    private let thread = DispatcherThread(label: "spotter.push.dispatcher")
    private let inFlight = Mutex<[PushAddress.Platform: Int]>([:])
    static let purgeEveryMilliseconds: Int64 = 30_000
    /// Providers' answers not yet written back: (push, outcome, when answered in ms).
    private let answers = Mutex<[(OutboxPush, PushOutcome, Int64)]>([])

    init(accounts: AccountStore, settings: PushSettings, clock: any Clock, metrics: ServerMetrics, logger: Logger) {
        self.accounts = accounts
        providers = Dictionary(settings.providers.map { ($0.platform, $0) }, uniquingKeysWith: { first, _ in first })
        self.settings = settings
        self.clock = clock
        self.metrics = metrics
        var logger = logger
        logger[metadataKey: "part"] = "push"
        self.logger = logger
    }

    func start() {
        thread.start { self.run() }
    }

    /// Something was queued or answered: look now rather than at the next poll.
    func wake() { thread.wake() }

    func setActive(_ value: Bool) { thread.setActive(value) }

    /// Stops claiming, writes back the answers in hand and ends the providers' connections (what they still hold is
    /// answered `.retry` and stays in the outbox for the next start). Waits at most `timeoutMilliseconds`.
    func stop(timeoutMilliseconds: Int = 5000) -> Bool {
        let stopped = thread.stop(timeoutMilliseconds: timeoutMilliseconds)
        for provider in providers.values { provider.shutdown() }
        return stopped
    }

    private func run() {
        var resumed = false
        var failures = 0
        var lastHousekeeping: Int64 = 0
        var lastPurge: Int64 = 0
        while !thread.isStopping {
            guard thread.isActive else {
                pause(settings.pollMilliseconds)
                continue
            }
            do {
                if !resumed {
                    let again = try accounts.resendInterruptedPushes()
                    if again > 0 { logger.info("pushes left in flight by the last run go again", metadata: ["pushes": "\(again)"]) }
                    resumed = true
                }
                try writeBackAnswers()
                try claimAndSend()
                let now = SystemClock.milliseconds
                if now - lastHousekeeping >= 2000 {
                    let purge = now - lastPurge >= Self.purgeEveryMilliseconds
                    try housekeeping(now, purge: purge)
                    lastHousekeeping = now
                    if purge { lastPurge = now }
                }
                failures = 0
                pause(settings.pollMilliseconds)
            } catch {
                failures += 1
                let wait = min(settings.pollMilliseconds << min(failures, 8), 30_000)
                logger.warning("push outbox unavailable; trying again", metadata: ["error": "\(error)", "retry_ms": "\(wait)"])
                pause(wait)
            }
        }
        try? writeBackAnswers()
    }

    private func claimAndSend() throws {
        for (platform, provider) in providers {
            let free = settings.inFlightPerProvider - inFlight.withLock { $0[platform, default: 0] }
            guard free > 0 else { continue }
            let claimed = try accounts.claimDuePushes(platform: platform, now: SystemClock.milliseconds, limit: free)
            guard !claimed.isEmpty else { continue }
            inFlight.withLock { $0[platform, default: 0] += claimed.count }
            for push in claimed {
                if push.message.expiresAt < clock.now {
                    answered(push, .rejected(reason: "expired"))
                    continue
                }
                provider.send(push.message) { [self] outcome in answered(push, outcome) }
            }
        }
    }

    private func answered(_ push: OutboxPush, _ outcome: PushOutcome) {
        answers.withLock { $0.append((push, outcome, SystemClock.milliseconds)) }
        inFlight.withLock { $0[push.message.address.platform, default: 1] -= 1 }
        wake()
    }

    /// Writes the providers' answers back into the outbox (kept in hand if the store fails, for the next pass).
    private func writeBackAnswers() throws {
        let taken = answers.withLock { list in
            defer { list.removeAll() }
            return list
        }
        guard !taken.isEmpty else { return }
        let now = SystemClock.milliseconds
        var outcomes: [(id: String, deviceID: String, PushDisposition)] = []
        for (push, outcome, at) in taken {
            let platform = push.message.address.platform.rawValue
            let disposition = disposition(push, outcome, now: now)
            switch disposition {
            case .sent:
                metrics.count("spotter_push_sent_total", [("platform", platform)])
                metrics.pushLatency.recordMilliseconds(max(at - push.enqueuedAt, 0))
            case .again:
                metrics.count("spotter_push_retries_total", [("platform", platform)])
            case .dropped, .deviceGone:
                metrics.count("spotter_push_failed_total", [("platform", platform), ("reason", Self.reason(outcome, disposition))])
            }
            outcomes.append((push.message.id, push.deviceID, disposition))
        }
        do {
            try accounts.finishPushes(outcomes, now: now)
        } catch {
            answers.withLock { $0.insert(contentsOf: taken, at: 0) }
            throw error
        }
    }

    private func disposition(_ push: OutboxPush, _ outcome: PushOutcome, now: Int64) -> PushDisposition {
        switch outcome {
        case .delivered: return .sent
        case .gone: return .deviceGone
        case .rejected: return .dropped
        case .retry(let after, _):
            let delay = settings.retryDelay(afterAttempts: push.attempts, retryAfterSeconds: after, unit: Double.random(in: 0..<1))
            let due = now + delay
            if push.attempts + 1 >= settings.maxAttempts || due / 1000 > push.message.expiresAt { return .dropped }
            return .again(notBefore: due)
        }
    }

    /// The `reason` label of a push given up: `gone`, `rejected`, `expired`, `gave_up` (out of attempts or time).
    private static func reason(_ outcome: PushOutcome, _ disposition: PushDisposition) -> String {
        switch outcome {
        case .gone: "gone"
        case .rejected(let why): why == "expired" ? "expired" : "rejected"
        case .retry: "gave_up"
        case .delivered: "none"
        }
    }

    /// Brings the queue gauges up to date, and every `purgeEveryMilliseconds` forgets old sent pushes and drops
    /// expired ones (a write: not on every pass).
    private func housekeeping(_ now: Int64, purge: Bool) throws {
        if purge {
            let keep = max(settings.coalesceMilliseconds, PushIntake.defaultBadgeWindowMilliseconds)
            let expired = try accounts.purgePushes(sentBefore: now - keep, nowSeconds: clock.now)
            metrics.count("spotter_push_failed_total", [("platform", "any"), ("reason", "expired")], by: expired)
        }
        let pending = try accounts.pendingPushes()
        for platform in providers.keys {
            metrics.gauge("spotter_push_queued", [("platform", platform.rawValue)], pending[platform] ?? 0)
        }
    }

    private func pause(_ milliseconds: Int) { thread.pause(milliseconds) }
}
