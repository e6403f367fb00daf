import Dispatch
import Foundation
import Logging
import Synchronization
import EventLoop
import SpotterCore
import SpotterPorts
import SpotterProtocol

/// The durable log consumer that decides pushes (`push`): for each batch of committed records it asks the loop who
/// is awake and how many messages they have unread, plans the pushes (`PushPlanner`, the receivers' preferences
/// and languages), fans them out to the receivers' devices of the platforms a provider is configured for, and
/// writes them into the outbox with the newest record handled, in one transaction. The dispatcher sends them.
///
/// After a kill -9 the runner hands over again the records after its saved position; those already in the outbox
/// (the outbox's own cursor) are passed over, so a record makes its pushes once.
final class PushConsumer: LogConsumer {
    let name = "push"
    let start = LogConsumerStart.newest
    private let accounts: AccountStore
    private let directory: UserDirectory?
    private let facts: @Sendable (Set<Int64>) throws -> PushLoopFacts
    private let planner: PushPlanner
    private let intake: PushIntake
    private let platforms: Set<PushAddress.Platform>
    private let clock: any Clock
    private let metrics: ServerMetrics
    private let enqueued: @Sendable () -> Void
    /// The outbox's cursor, read once (this consumer's thread only).
    private let handled = Mutex<Int64?>(nil)
    /// The first record of an unknown thread the last batch stopped at, and how many times in a row.
    private let unknown = Mutex<(pos: Int64, attempts: Int)?>(nil)

    init(accounts: AccountStore, directory: UserDirectory?, settings: PushSettings, clock: any Clock, metrics: ServerMetrics,
         facts: @escaping @Sendable (Set<Int64>) throws -> PushLoopFacts, enqueued: @escaping @Sendable () -> Void) {
        self.accounts = accounts
        self.directory = directory
        self.facts = facts
        planner = PushPlanner(preview: settings.preview)
        intake = PushIntake(coalesceMilliseconds: settings.coalesceMilliseconds, queueLimit: settings.queueLimit)
        platforms = Set(settings.providers.map(\.platform))
        self.clock = clock
        self.metrics = metrics
        self.enqueued = enqueued
    }

    /// Whether a record can make a push (the rest are passed over without asking the loop).
    static func mayPush(_ record: ChatRecord) -> Bool {
        switch record.content {
        case .message, .session, .link: true
        case .receipt(let receipt): receipt.readMoved
        default: false
        }
    }

    func deliver(_ deliveries: [LogDelivery]) throws {
        let saved = try handled.withLock { value in
            if value == nil { value = try accounts.pushHandledThrough(name) }
            return value ?? 0
        }
        guard let newest = deliveries.last?.record.pos, newest > saved else { return }
        let records = deliveries.map(\.record).filter { $0.pos > saved && Self.mayPush($0) }
        var entries: [PushEntry] = []
        if !records.isEmpty {
            let facts = try facts(Set(records.map(\.threadNo)))
            try waitForUnknownThreads(records, facts)
            entries = try plan(records, facts)
        }
        let result = try accounts.enqueuePushes(entries, cursor: name, handledThrough: newest, now: SystemClock.milliseconds, intake)
        handled.withLock { $0 = newest }
        metrics.count("spotter_push_queued_total", [], by: result.queued)
        metrics.count("spotter_push_coalesced_total", [], by: result.coalesced)
        metrics.count("spotter_push_withdrawn_total", [], by: result.withdrawn)
        for (platform, dropped) in result.droppedFull {
            metrics.count("spotter_push_failed_total", [("platform", platform.rawValue), ("reason", "queue_full")], by: dropped)
        }
        if result.queued > 0 || result.coalesced > 0 { enqueued() }
    }

    /// A record of a thread the loop does not know yet (a link just committed, whose thread the loop learns right
    /// after) fails the batch, which comes again after a back-off; after `unknownThreadAttempts` tries in a row
    /// (a thread this process never learns: in a cluster, one it has not read) the batch goes on without it.
    private func waitForUnknownThreads(_ records: [ChatRecord], _ facts: PushLoopFacts) throws {
        guard let first = records.first(where: { facts.threads[$0.threadNo] == nil })?.pos else {
            unknown.withLock { $0 = nil }
            return
        }
        let attempts = unknown.withLock { state -> Int in
            state = (first, state?.pos == first ? state!.attempts + 1 : 1)
            return state!.attempts
        }
        if attempts < Self.unknownThreadAttempts { throw PushConsumerError.threadNotKnownYet(pos: first) }
        metrics.count("spotter_push_unknown_thread_total", [])
    }

    static let unknownThreadAttempts = 8

    /// The pushes of `records`, one entry per receiver's device.
    private func plan(_ records: [ChatRecord], _ facts: PushLoopFacts) throws -> [PushEntry] {
        var people: [String: PushPerson] = [:]
        var devices: [String: [DeviceRecord]] = [:]
        let now = clock.now
        var entries: [PushEntry] = []
        for record in records {
            guard let thread = facts.threads[record.threadNo] else { continue }
            // A push reaches only devices of a configured platform: when neither participant has one, the record
            // makes no entry whatever the plan, so neither their preferences nor the plan are worked out.
            for userID in [thread.coachID, thread.clientID] where devices[userID] == nil {
                devices[userID] = try accounts.devices(userID: userID).filter { platforms.contains($0.address.platform) }
            }
            if devices[thread.coachID]?.isEmpty != false && devices[thread.clientID]?.isEmpty != false { continue }
            for userID in [thread.coachID, thread.clientID] where people[userID] == nil {
                people[userID] = try person(userID, facts)
            }
            let planned = planner.plan(record, thread: thread, people: people, now: now)
            for push in planned {
                if devices[push.userID] == nil {
                    devices[push.userID] = try accounts.devices(userID: push.userID).filter { platforms.contains($0.address.platform) }
                }
                for device in devices[push.userID] ?? [] {
                    entries.append(PushEntry(push: push, deviceID: device.id, platform: device.address.platform))
                }
            }
        }
        return entries
    }

    private func person(_ userID: String, _ facts: PushLoopFacts) throws -> PushPerson {
        let user = directory?.user(id: userID)
        return PushPerson(id: userID, name: user?.fullName, language: user.flatMap { Language(rawValue: $0.language) } ?? .english,
                          timeZone: user.flatMap { TimeZone(identifier: $0.timeZone) } ?? TimeZone(identifier: "UTC")!,
                          awake: facts.awake[userID] ?? false, unread: facts.unread[userID] ?? 0,
                          preferences: try accounts.notificationPreferences(userID: userID))
    }
}

extension PushConsumer {
    /// Asks the loop for a batch's facts, waiting at most `timeoutSeconds` (a loop that does not answer fails the
    /// batch, which comes again after a back-off).
    static func askLoop(_ loop: Loop, _ runner: LoopBound<CoreRunner>, timeoutSeconds: Int = 10)
        -> @Sendable (Set<Int64>) throws -> PushLoopFacts {
        { numbers in
            let answer = Mutex<PushLoopFacts?>(nil)
            let done = DispatchSemaphore(value: 0)
            loop.execute {
                answer.withLock { $0 = runner.value.pushFacts(threadNumbers: numbers) }
                done.signal()
            }
            guard done.wait(timeout: .now() + .seconds(timeoutSeconds)) == .success, let facts = answer.withLock({ $0 }) else {
                throw PushConsumerError.loopDidNotAnswer
            }
            return facts
        }
    }
}

enum PushConsumerError: Error {
    case loopDidNotAnswer
    case threadNotKnownYet(pos: Int64)
}
