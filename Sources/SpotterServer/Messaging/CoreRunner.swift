import EventLoop
import FoundationEssentials
import Logging
import SpotterBroker
import SpotterCore
import SpotterProtocol
import SpotterPorts

/// The shell around the core (`CoachingCore`), on the loop: it builds each step's context (the clock, the people,
/// the features), runs what the core decides — reads the log when a decision asks, commits records through the
/// pipeline, replies once they are durable — and hands the events of committed records to the broker. It holds
/// no rule: every decision is the core's. Loop thread only.
final class CoreRunner {
    var core: CoachingCore
    /// Coaches' availability as last read for a session command (`AppSocket.withAvailability`): what the core's
    /// context gives it. Loop thread only.
    var availabilities: [String: CoachAvailability] = [:]
    let pipeline: CommitPipeline
    let log: any ChatStore
    private(set) var broker: any Broker = InProcessBroker()
    let loop: Loop
    let logger: Logger
    let metrics: ServerMetrics
    let config: ServerConfig
    let directory: UserDirectory?
    /// The features in force (`--tiers`, `--ratings`, the session limits and timing).
    let features: CoreFeatures
    /// Crash tests: where the process kills itself (off unless armed).
    var failPoints: FailPoints
    /// Cluster mode: follows every process's records in position order and makes this process's logged events.
    var follower: LogFollower?
    /// Whether this process fires the session timers: always alone; in a cluster, while it holds the lease.
    var holdsTimers = true
    /// Reads the core asked for, with the steps waiting for each (one read per key at a time).
    private var reading: [CoreRead: [(Result<CoreReadResult, APIError>) -> Void]] = [:]
    /// Recovery after a failed append (`CoreRunner+Recovery`).
    var recovery = RecoveryState()
    /// Whether a checkpoint's parts are still being written.
    var checkpointing = false
    /// When (loop ms) a read or write of the store last failed: `/readyz` answers 503 `store` for a while after.
    var storeFailedAt: UInt64?
    /// The parts of the checkpoint under way not yet handed to the log (thread numbers: each part's snapshots are
    /// made when it is handed over).
    var checkpointRemaining: [[Int64]] = []
    /// Commands waiting for a thread to be read from the store (cluster mode), by thread id.
    var waitingForThread: [String: [(APIError?) -> Void]] = [:]
    /// Reads a user's AI generations of the current window (off the loop); set by the server (`CoreRunner+AIQuota`).
    var aiGenerations: (@Sendable (String, Int64) -> AIGenerationAllowance?)?
    /// The AI generations last read or consumed here, by user (`CoreRunner+AIQuota`).
    var aiAllowances: [String: AIGenerationAllowance] = [:]
    /// Sessions another process revoked (its `account` record followed): the API refuses their tokens and closes
    /// their sockets (`CoreRunner+Accounts`). Set by the server.
    var revokedElsewhere: (([RevokedSession]) -> Void)?

    init(config: ServerConfig, loop: Loop, log: any ChatStore, directory: UserDirectory?, logger: Logger, metrics: ServerMetrics) {
        self.config = config
        self.loop = loop
        self.log = log
        self.directory = directory
        self.logger = logger
        self.metrics = metrics
        failPoints = config.failPoints
        features = config.features
        core = CoachingCore(chat: ChatState(), features: features)
        var hooks = CommitPipeline.Hooks()
        var points = config.failPoints
        hooks.durable = { points.reached(.commit) }
        let box = WeakRunner()
        hooks.completed = { records in box.runner?.completed(records) }
        hooks.failed = { records, error in box.runner?.failed(records, error) }
        hooks.quiet = { box.runner?.recoverWhenQuiet() }
        pipeline = Self.makePipeline(log: log, loop: loop, maxInFlight: config.maxAppendsInFlight, hooks: hooks)
        box.runner = self
        loop.everyIteration { [weak self] in self?.pipeline.flush() }
    }

    /// Starts from what the store holds (at start), with the broker that fans out.
    func install(_ loaded: LoadedChat, broker: any Broker) {
        core = Self.core(loaded, features)
        pipeline.caughtUp(to: loaded.position)
        self.broker = broker
        broker.presenceChanged = { [weak self] userID, online in self?.presenceChanged(userID, online: online) }
    }

    static func core(_ loaded: LoadedChat, _ features: CoreFeatures) -> CoachingCore {
        CoachingCore(chat: loaded.makeState(), sessions: loaded.sessions, coaching: loaded.coaching,
                     mealTimes: loaded.mealTimes, resumeFloor: loaded.resumeFloor, features: features)
    }

    /// After a recovery rebuilt everything from the store.
    func replaceCore(with loaded: LoadedChat) {
        core = Self.core(loaded, features)
    }

    var chat: ChatState { core.chat }

    /// This step's context: the clock's time, the accounts' people, the features in force.
    func context() -> CoreContext {
        var context = CoreContext(now: config.clock.now, nowMilliseconds: loop.nowMilliseconds, features: features,
                                  people: lookups.people)
        context.availability = lookups.availability
        return context
    }

    /// The context's lookups, made once rather than two closures (two allocations) per step: they read the
    /// directory and `availabilities` when called. A context lives for one step on the loop (nothing keeps one),
    /// so it sees what a copy made for the step would have held.
    private lazy var lookups: (people: (String) -> Person?, availability: (String) -> CoachAvailability?) = {
        let directory = directory
        return ({ id in directory?.user(id: id).map(Person.init(user:)) }, { [unowned self] in availabilities[$0] })
    }()

    var writeRefusal: APIError? { pipeline.refusal }

    // MARK: - Running decisions

    typealias Reply = (Result<String, APIError>) -> Void

    /// Runs a command: the core decides; a read it asks for is made and the command decided again; records are
    /// committed and the reply sent once they are durable, then their events published. A write refused while
    /// the store is out of reach or too far behind gets `unavailable` / `rate_limited` before the core is asked.
    func run(_ command: CoreCommand, reply: Reply? = nil, followed: Bool = false) {
        if command.isRequest, let refusal = pipeline.refusal { reply?(.failure(refusal)); return }
        // In a cluster, a seq not followed yet is waited for (`CoreRunner+FollowedSeqs`).
        if !followed, waitsForFollowedSeq(command, reply: reply) { return }
        // Nothing is decided while the state is being rebuilt: decided on the old state, its records would be
        // appended onto the rebuilt one (a gap, or a seq given twice). An ended link's cancellations are looked for
        // again by the first tick after the recovery; a tier change is in the accounts already.
        if pipeline.recovering { reply?(.failure(APIError(.unavailable, retryAfterSeconds: 1))); return }
        switch core.decide(command, context()) {
        case .refuse(let error):
            reply?(.failure(error))
        case .read(let read):
            perform(read) { [self] result in
                switch result {
                case .failure(let error):
                    reply?(.failure(error))
                case .success(.original(let record)):
                    switch command {
                    case .send(var request):
                        request.original = .read(record)
                        run(.send(request), reply: reply)
                    case .changeMessage(var request):
                        request.target = .read(record)
                        run(.changeMessage(request), reply: reply)
                    default:
                        return
                    }
                case .success:
                    run(command, reply: reply)
                }
            }
        case .commit(let commit):
            self.commit(commit, reply: reply)
        }
    }

    private func commit(_ commit: CoreCommit, reply: Reply?) {
        pipeline.submit(commit.records) { [self] result in
            switch result {
            case .success(let done):
                settleSeqs(decided: commit.records, stored: done)
                let applied = core.apply(done, origin: .here, context())
                switch commit.reply {
                case .json(let json): reply?(.success(json))
                case .committedMessage: reply?(.success(applied.messageJSON ?? "{}"))
                case .none: reply?(.success("{}"))
                }
                publish(applied)
                for clientID in commit.quotaChanged { pushQuota(clientID) }
                for no in applied.endedLinks { run(.linkEnded(threadNo: no)) }
                if commit.byTimers { failPoints.reached(.timer) }
            case .failure(let error):
                reply?(.failure(error))  // the recovery sets the state back from the store
            }
        }
    }

    /// A durable batch's records, all completed: the cluster's follower hands them on in position order.
    private func completed(_ records: [ChatRecord]) {
        follower?.own(records)
        failPoints.reached(.applied)
    }

    /// Reads what the core asked for (after every append before it), once per key: steps asking for the same
    /// read while it runs wait for it. Counts and windows go into the core before the waiting steps go on.
    private func perform(_ read: CoreRead, then: @escaping (Result<CoreReadResult, APIError>) -> Void) {
        if reading[read] != nil {
            reading[read]!.append(then)
            return
        }
        reading[read] = [then]
        pipeline.flush()
        let finish = { [weak self] (result: Result<CoreReadResult, any Error>) in
            guard let self else { return }
            let waiting = reading.removeValue(forKey: read) ?? []
            switch result {
            case .success(let value):
                core.learn(read, value, context())
                for step in waiting { step(.success(value)) }
            case .failure(let error):
                // Refused, not retried at once: with the store out of reach that would spin without answering.
                logger.error("a read the core asked for failed", metadata: ["read": "\(read)", "error": "\(error)"])
                storeFailedAt = loop.nowMilliseconds
                for step in waiting { step(.failure(APIError(.unavailable, retryAfterSeconds: 1))) }
            }
        }
        switch read {
        case .window(_, let no, let limit):
            log.recentSends(threadNo: no, limit: limit, completion: loop.completion { (result: Result<[SentKey], any Error>) in
                finish(result.map { .window($0.map { ($0.side, $0.clientMessageID, $0.seq) }) })
            })
        case .original(let no, let seq):
            log.message(threadNo: no, seq: seq, completion: loop.completion { (result: Result<ChatRecord?, any Error>) in
                finish(result.map { .original($0) })
            })
        case .counts(_, let nos, let since, let ever, _):
            // One count after the other, each ordered with the appends before it (the log's writer runs them).
            let log = log, loop = loop
            let countEver = { (used: Int?) in
                guard ever else { return finish(.success(.counts(usedSince: used, ever: nil))) }
                log.sendsSince(threadNos: nos, side: .client, since: 0, completion: loop.completion { (result: Result<Int, any Error>) in
                    finish(result.map { .counts(usedSince: used, ever: $0) })
                })
            }
            guard let since else { return countEver(nil) }
            log.sendsSince(threadNos: nos, side: .client, since: since, completion: loop.completion { (result: Result<Int, any Error>) in
                switch result {
                case .success(let used): countEver(used)
                case .failure(let error): finish(.failure(error))
                }
            })
        }
    }

    // MARK: - Publishing

    /// Hands committed records' events to the broker (through the follower in a cluster, which delivers them in
    /// position order, with the unlogged ones behind them), and alone the unlogged ones straight to their sockets.
    func publish(_ applied: Applied) {
        if let follower {
            // In position order through the follower (as text: what it holds may come from another process).
            var index = applied.logged.startIndex
            while index < applied.logged.endIndex {
                let cursor = applied.logged[index].cursor
                var events: [(userID: String, payload: String)] = []
                while index < applied.logged.endIndex, applied.logged[index].cursor == cursor {
                    events.append((applied.logged[index].userID, applied.logged[index].payload))
                    index += 1
                }
                follower.publish(cursor: cursor, events: events)
            }
            // Behind the logged events they follow, for the same sockets (`LogFollower.publishUnlogged`).
            for (userID, json) in applied.ephemeral { follower.publishUnlogged(userID: userID, frame: EventFrame(json)) }
            return
        }
        // The core's bytes, framed once per event: no `String` between the core and the sockets.
        for event in applied.logged {
            broker.publish(userID: event.userID, cursor: event.cursor, frame: EventFrame(cursor: event.cursor, object: event.json))
        }
        for (userID, json) in applied.ephemeral { broker.publishEphemeral(userID: userID, frame: EventFrame(json)) }
    }

    /// An unlogged event a command made: in a cluster behind the logged events still held for the same user.
    func publishUnlogged(userID: String, frame: EventFrame) {
        if let follower {
            follower.publishUnlogged(userID: userID, frame: frame)
        } else {
            broker.publishEphemeral(userID: userID, frame: frame)
        }
    }

    // MARK: - Quotas (`--tiers`)

    /// The client's quota as their apps show it (reading their count first if needed); nil when not metered.
    func quotaView(_ userID: String, knownAI: AIGenerationAllowance? = nil, then finish: @escaping (QuotaView?) -> Void) {
        let done = { [weak self] (view: QuotaView?) in
            guard let self, let view else { return finish(view) }
            withAIGenerations(view, of: userID, known: knownAI, then: finish)
        }
        switch core.quotaView(userID, context()) {
        case .ready(let view):
            done(view)
        case .read(let read):
            perform(read) { [self] result in
                guard case .success = result, case .ready(let view) = core.quotaView(userID, context()) else { return done(nil) }
                done(view)
            }
        }
    }

    /// Pushes the client's quota to every socket of theirs (after a send, a tier change).
    func pushQuota(_ userID: String) {
        quotaView(userID) { [weak self] view in
            guard let self, let view else { return }
            publishUnlogged(userID: userID, frame: EventFrame(QuotaEvent(quota: view).jsonText))
        }
    }

    /// `plan_upgrade_required` for a client whose tier has no attachments (`--tiers`); nil otherwise.
    func attachmentRefusal(_ userID: String, field: String?) -> APIError? {
        core.attachmentRefusal(userID, field: field, context())
    }

    // MARK: - The session timers

    /// Checks what is due once a second; in a cluster only the process holding the timer lease, so each fires once.
    func startTimers() {
        let timer = Timer(loop: loop)
        timer.start(after: 1000, repeat: 1000) { [weak self] in self?.tick() }
        timers = timer
    }

    private var timers: Timer?

    func tick() {
        guard !pipeline.isOverloaded, holdsTimers else { return }
        run(.tick)
    }
}

extension CoreCommand {
    /// A person's command (refused while the store is out of reach or too far behind); the server's own changes
    /// (the timers, an ended link's cancellations, a tier change already saved) are not refused here.
    var isRequest: Bool {
        switch self {
        case .tick, .linkEnded, .tierSet, .eraseUser, .accountChanged: return false
        default: return true
        }
    }
}

/// The pipeline's hooks reach the runner through this (the runner owns the pipeline).
private final class WeakRunner {
    weak var runner: CoreRunner?
}

extension Person {
    init(user: UserRecord) {
        self.init(role: user.role, tier: user.tier, language: Language(rawValue: user.language) ?? .english, timeZone: user.timeZone)
    }
}

extension ServerConfig {
    /// The features the core applies, from the options.
    var features: CoreFeatures {
        var features = CoreFeatures()
        features.tiers = tiers
        features.ratings = ratings
        features.meetBaseURL = meetBaseURL
        features.sessionCreatesPerMinute = sessionCreatesPerMinute
        features.sessionActsPerMinute = sessionActsPerMinute
        features.sessions.joinEarlySeconds = sessionJoinEarlySeconds
        features.sessions.reminderSeconds = sessionReminderSeconds
        features.sessions.autoCompleteAfterSeconds = sessionAutoCompleteSeconds
        features.editWindowSeconds = editWindowSeconds
        return features
    }
}
