import Dispatch
import Synchronization
import EventLoop
import SpotterCore
import SpotterPorts

/// The durable log consumer that queues webhook deliveries (`webhooks`): for each batch of committed records it
/// asks the loop which threads they belong to, maps each record to its events (`WebhookEvents`, pure) and writes
/// one delivery per endpoint subscribed, with the newest record handled, in one transaction. The dispatcher sends
/// them. After a kill -9 the runner hands over again the records after its saved position; those already in the
/// outbox (its own cursor) are passed over, so a record makes its deliveries once.
final class WebhookConsumer: LogConsumer {
    let name = "webhooks"
    let start = LogConsumerStart.newest
    private let accounts: AccountStore
    private let settings: WebhookSettings
    private let metrics: ServerMetrics
    private let threads: @Sendable (Set<Int64>) throws -> [Int64: WebhookThread]
    private let enqueued: @Sendable () -> Void
    /// The outbox's cursor, read once (this consumer's thread only).
    private let handled = Mutex<Int64?>(nil)
    /// The first record of an unknown thread the last batch stopped at, and how many times in a row.
    private let unknown = Mutex<(pos: Int64, attempts: Int)?>(nil)

    init(accounts: AccountStore, settings: WebhookSettings, metrics: ServerMetrics,
         threads: @escaping @Sendable (Set<Int64>) throws -> [Int64: WebhookThread], enqueued: @escaping @Sendable () -> Void) {
        self.accounts = accounts
        self.settings = settings
        self.metrics = metrics
        self.threads = threads
        self.enqueued = enqueued
    }

    /// Whether a record can make an event (the rest are passed over without asking the loop).
    static func mayMakeEvents(_ record: ChatRecord) -> Bool {
        switch record.content {
        case .message, .session, .tier, .coaching, .change, .erasure: true
        default: false
        }
    }

    func deliver(_ deliveries: [LogDelivery]) throws {
        let saved = try handled.withLock { value in
            if value == nil { value = try accounts.webhooksHandledThrough(name) }
            return value ?? 0
        }
        guard let newest = deliveries.last?.record.pos, newest > saved else { return }
        // An endpoint registered between the look at the subscriptions and the enqueue's transaction makes the
        // enqueue refuse (nothing written): the batch is built again for the types subscribed then.
        for attempt in 1... {
            do {
                return try deliver(deliveries.map(\.record), after: saved, newest: newest,
                                   subscribed: try accounts.webhookSubscriptions())
            } catch WebhookIntakeError.subscriptionsChanged where attempt < 3 {
                continue
            }
        }
    }

    /// Builds the events of the records after `saved` of the types some endpoint is `subscribed` to (none at all
    /// when no endpoint is: no thread asked of the loop, no JSON), and queues them. Edits, deletes and erasures are
    /// handled whatever the subscriptions: they blank the text of deliveries queued before.
    private func deliver(_ batch: [ChatRecord], after saved: Int64, newest: Int64, subscribed: Set<WebhookEventType>) throws {
        let records = batch.filter { record in
            record.pos > saved && Self.mayMakeEvents(record)
                && (WebhookEvents.mayForget(record) || !WebhookEvents.possibleTypes(record).isDisjoint(with: subscribed))
        }
        var events: [WebhookEvent] = []
        var forgetting: [WebhookEvents.Forgetting] = []
        if !records.isEmpty {
            let onThreads = records.filter(WebhookEvents.needsThread)
            let known = onThreads.isEmpty ? [:] : try threads(Set(onThreads.map(\.threadNo)))
            try waitForUnknownThreads(onThreads, known)
            for record in records {
                let thread = known[record.threadNo]
                if thread == nil && WebhookEvents.needsThread(record) { continue }
                if !WebhookEvents.possibleTypes(record).isDisjoint(with: subscribed) {
                    events += WebhookEvents.events(for: record, thread: thread).filter { subscribed.contains($0.type) }
                }
                if let forget = WebhookEvents.forgetting(record, thread: thread) { forgetting.append(forget) }
            }
        }
        // Text taken back (an edit, a delete, an erasure) leaves the deliveries queued before; again after a crash
        // is harmless (blanking twice is blanking).
        for forget in forgetting { try accounts.forgetWebhookDeliveries(forget) }
        let result = try accounts.enqueueWebhooks(events, cursor: name, handledThrough: newest, now: SystemClock.milliseconds,
                                                  outboxLimit: settings.outboxLimit, considered: subscribed)
        handled.withLock { $0 = newest }
        metrics.count("spotter_webhook_queued_total", [], by: result.queued)
        metrics.count("spotter_webhook_dead_lettered_total", [("reason", "outbox_full")], by: result.overflowed)
        if result.queued > 0 { enqueued() }
    }

    /// A record of a thread the loop does not know yet (a link committed a moment before the loop learned its thread)
    /// fails the batch, which comes again after a back-off; after `PushConsumer.unknownThreadAttempts` tries in a
    /// row (a thread this process never learns) the batch goes on without it, counted.
    private func waitForUnknownThreads(_ records: [ChatRecord], _ known: [Int64: WebhookThread]) throws {
        guard let first = records.first(where: { known[$0.threadNo] == nil })?.pos else {
            unknown.withLock { $0 = nil }
            return
        }
        let attempts = unknown.withLock { state -> Int in
            state = (first, state?.pos == first ? state!.attempts + 1 : 1)
            return state!.attempts
        }
        if attempts < PushConsumer.unknownThreadAttempts { throw WebhookConsumerError.threadNotKnownYet(pos: first) }
        metrics.count("spotter_webhook_unknown_thread_total", [])
    }

    /// Asks the loop for the threads of a batch, waiting at most `timeoutSeconds`.
    static func askLoop(_ loop: Loop, _ runner: LoopBound<CoreRunner>, timeoutSeconds: Int = 10)
        -> @Sendable (Set<Int64>) throws -> [Int64: WebhookThread] {
        { numbers in
            let answer = Mutex<[Int64: WebhookThread]?>(nil)
            let done = DispatchSemaphore(value: 0)
            loop.execute {
                var found: [Int64: WebhookThread] = [:]
                for number in numbers {
                    guard let thread = runner.value.chat.thread(no: number) else { continue }
                    found[number] = WebhookThread(id: thread.id, coachID: thread.coachID, clientID: thread.clientID)
                }
                answer.withLock { $0 = found }
                done.signal()
            }
            guard done.wait(timeout: .now() + .seconds(timeoutSeconds)) == .success, let found = answer.withLock({ $0 }) else {
                throw WebhookConsumerError.loopDidNotAnswer
            }
            return found
        }
    }
}

enum WebhookConsumerError: Error {
    case loopDidNotAnswer
    case threadNotKnownYet(pos: Int64)
}
