import SpotterCore
import SpotterPorts
import SpotterProtocol
import SpotterStore

/// One process of the server, as the simulator runs it: the real `CoachingCore` and the real `CommitPipeline`,
/// with the shell's part written again here step for step from `CoreRunner` (run a decision, read and decide
/// again, commit and reply, publish), `CoreRunner+Recovery` (recover after a failed append, checkpoint in parts)
/// and `CoreRunner+Links` (a coach change), over the simulated log instead of SQLite and the loop. A crash
/// throws the process away; the next one starts from `SimLog.load()`.
final class SimShell {
    /// What a command's sender gets: the reply, and the records it committed (with their positions).
    struct Ack {
        var json: String
        var records: [ChatRecord]
    }

    typealias Reply = (Result<Ack, APIError>) -> Void

    private(set) var core: CoachingCore
    let pipeline: CommitPipeline
    let log: SimLog
    unowned let world: Simulation
    let options: SimOptions
    /// Reads the core asked for, with the steps waiting for each (`CoreRunner.reading`).
    private var reading: [CoreRead: [(Result<CoreReadResult, APIError>) -> Void]] = [:]
    /// `RecoveryState`.
    private var recoveringThreads: Set<Int64> = []
    private var recoveringEverything = false
    private var recoveryStarted = false
    private(set) var checkpointing = false
    /// The parts of the checkpoint under way not yet handed to the log (each is handed over when the one before
    /// it is written, its snapshots made then), as thread numbers.
    private var unsubmittedParts: [[Int64]] = []
    /// Every record up to this position was in what the process loaded (at start, or rebuilding after a failed
    /// append).
    private(set) var loadedPosition: Int64
    /// Positions this process applied after its load: its own commits, and link records.
    private(set) var applied: Set<Int64> = []
    /// The sockets open on this process.
    var sockets: [SimSocket] = []
    /// Every record handed to the pipeline whose submission has not completed, in submission order, and whether
    /// its append is durable already (the checks count what is decided but not yet in the log).
    private(set) var ledger: [(record: ChatRecord, written: Bool)] = []

    init(log: SimLog, world: Simulation, options: SimOptions) {
        self.log = log
        self.world = world
        self.options = options
        let loaded = log.load()
        core = CoachingCore(chat: ChatState())
        loadedPosition = loaded.position
        let box = ShellBox()
        var hooks = CommitPipeline.Hooks()
        hooks.failed = { records, error in box.shell?.failed(records, error) }
        hooks.quiet = { box.shell?.recoverWhenQuiet() }
        pipeline = CommitPipeline(maxInFlight: options.maxInFlight, hooks: hooks) { records, done in
            log.append(records, written: { box.shell?.written(records.count) }) { result in done(result.mapError { $0 }) }
        }
        pipeline.caughtUp(to: loaded.position)
        appliedThrough = loaded.position
        box.shell = self
        core = makeCore(loaded)
    }

    /// `CoreRunner.core(_:_:)`: the real `LoadedChat.makeState()`.
    func makeCore(_ loaded: LoadedChat) -> CoachingCore {
        let core = CoachingCore(chat: loaded.makeState(), sessions: loaded.sessions, coaching: loaded.coaching,
                                mealTimes: loaded.mealTimes, resumeFloor: loaded.resumeFloor, features: world.features)
        if !options.fixes.contains(.resaveTail) {
            _ = core.chat.takeDirty()  // as before the fix: the tail's threads left clean
        }
        return core
    }

    var isRecovering: Bool { pipeline.recovering }

    // MARK: - Running decisions (`CoreRunner.run`)

    func run(_ command: CoreCommand, reply: Reply? = nil) {
        if command.isRequest, let refusal = pipeline.refusal { reply?(.failure(refusal)); return }
        if options.fixes.contains(.holdDuringRecovery), pipeline.recovering, !command.isRequest {
            world.note("  held: the state is being rebuilt")
            reply?(.success(Ack(json: "{}", records: [])))
            return
        }
        let loaded = loadedCounts()
        let decision = core.decide(command, world.context())
        noteForgotten(since: loaded)
        switch decision {
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
        ledger += commit.records.map { ($0, false) }
        pipeline.submit(commit.records) { [self] result in
            settle(commit.records)
            switch result {
            case .success(let done):
                noteApplied(done, here: true)
                let loaded = loadedCounts()
                let applied = core.apply(done, origin: .here, world.context())
                noteForgotten(since: loaded)
                switch commit.reply {
                case .json(let json): reply?(.success(Ack(json: json, records: done)))
                case .committedMessage: reply?(.success(Ack(json: applied.messageJSON ?? "{}", records: done)))
                case .none: reply?(.success(Ack(json: "{}", records: done)))
                }
                publish(applied)
                for clientID in commit.quotaChanged { pushQuota(clientID) }
                for no in applied.endedLinks { run(.linkEnded(threadNo: no)) }
            case .failure(let error):
                reply?(.failure(error))
            }
        }
    }

    /// A batch of `count` records is durable: the oldest records of the ledger not yet written (the pipeline
    /// appends submissions in order).
    private func written(_ count: Int) {
        var left = count
        for index in ledger.indices where left > 0 && !ledger[index].written {
            ledger[index].written = true
            left -= 1
        }
    }

    /// A submission completed: its records leave the ledger, from its front (submissions complete in order).
    private func settle(_ records: [ChatRecord]) {
        let front = ledger.prefix(records.count).map { SimLog.describe($0.record) }
        let expected = records.map { var record = $0; record.pos = 0; return SimLog.describe(record) }
        if front != expected {
            world.violation("completes in order", "completed \(expected) while the oldest pending were \(front)")
        }
        ledger.removeFirst(min(records.count, ledger.count))
    }

    func dropIdleWindows(nowMilliseconds: UInt64) {
        core.dropIdleWindows(nowMilliseconds: nowMilliseconds, idleMilliseconds: 10 * 60 * 1000)
    }

    /// How many times each client's count was forgotten (went from loaded to not loaded).
    private var forgets: [String: Int] = [:]

    private func loadedCounts() -> Set<String> {
        Set(world.clients.filter { core.quotas.isLoaded($0) })
    }

    private func noteForgotten(since loaded: Set<String>) {
        for client in loaded.sorted() where !core.quotas.isLoaded(client) { forgets[client, default: 0] += 1 }
    }

    /// Every record up to here is applied on this process (in its load, or since).
    private(set) var appliedThrough: Int64 = 0

    /// Each record is applied once by the process that holds it: never one its load included, never one twice.
    private func noteApplied(_ records: [ChatRecord], here: Bool) {
        for record in records {
            if here, record.pos <= loadedPosition || applied.contains(record.pos) {
                world.violation("applied once", "\(SimLog.describe(record)) applied again (loaded through \(loadedPosition))")
            }
            applied.insert(record.pos)
            appliedThrough = max(appliedThrough, record.pos)
        }
    }

    /// `CoreRunner.perform`: one read per key at a time, ordered after every append handed over before it.
    private func perform(_ read: CoreRead, then: @escaping (Result<CoreReadResult, APIError>) -> Void) {
        if reading[read] != nil {
            reading[read]!.append(then)
            world.note("  waits for the read under way: \(read)")
            return
        }
        world.note("  reads: \(read)")
        reading[read] = [then]
        pipeline.flush()
        let finish = { [self] (value: CoreReadResult) in
            let waiting = reading.removeValue(forKey: read) ?? []
            if case .counts(let userID, _, _, _, _) = read, case .counts(let used, let ever) = value {
                let before = core.quotas.isLoaded(userID)
                world.note("  count of \(userID) read: \(used.map(String.init) ?? "-") this month, \(ever.map(String.init) ?? "-") ever"
                           + (before ? " (a count is loaded already)" : ""))
            }
            var learned = read
            if !options.fixes.contains(.freshCounts), case .counts(let userID, let nos, let since, let ever, _) = read {
                // As before the fix: a count read is loaded whenever it lands, however old.
                learned = .counts(userID: userID, threadNos: nos, since: since, ever: ever,
                                  generation: core.countGenerations[userID, default: 0])
            }
            core.learn(learned, value, world.context())
            for step in waiting { step(.success(value)) }
        }
        switch read {
        case .window(_, let no, let limit):
            log.orderedRead("window t\(no)", { log in
                Array(log.records.reversed().filter { $0.threadNo == no && $0.kind == .message }
                    .sorted { $0.seq > $1.seq }.prefix(limit))
            }, done: { records in finish(.window(records.map { ($0.side, $0.content.message?.clientMessageID ?? "", $0.seq) })) })
        case .original(let no, let seq):
            log.orderedRead("message t\(no)#\(seq)", { log in
                log.records.first { $0.threadNo == no && $0.seq == seq && $0.kind == .message }
            }, done: { record in finish(.original(record)) })
        case .counts(let userID, let nos, let since, let ever, _):
            let sends = { (log: SimLog, since: Int64) in
                log.records.filter {
                    nos.contains($0.threadNo) && $0.content.message.map { $0.kind != .system } == true
                        && $0.side == .client && $0.at >= since
                }.count
            }
            let countEver = { [log] (used: Int?) in
                guard ever else { return finish(.counts(usedSince: used, ever: nil)) }
                log.orderedRead("count ever \(userID)", { sends($0, 0) }, done: { finish(.counts(usedSince: used, ever: $0)) })
            }
            guard let since else { return countEver(nil) }
            log.orderedRead("count \(userID) since \(since)", { sends($0, since) }, done: { countEver($0) })
        }
    }

    // MARK: - Publishing (`CoreRunner.publish`)

    func publish(_ applied: Applied) {
        for event in applied.logged {
            for socket in sockets where socket.device.userID == event.userID {
                socket.deliver(cursor: event.cursor)
            }
        }
    }

    // MARK: - Quotas

    func quotaView(_ userID: String, then done: @escaping (QuotaView?) -> Void) {
        switch core.quotaView(userID, world.context()) {
        case .ready(let view):
            done(view)
        case .read(let read):
            perform(read) { [self] result in
                guard case .success = result, case .ready(let view) = core.quotaView(userID, world.context()) else { return done(nil) }
                done(view)
            }
        }
    }

    /// The quota pushed to a client after a send: what it shows must be exact when it is sent.
    func pushQuota(_ userID: String) {
        quotaView(userID) { [self] view in
            guard let view else { return }
            world.quotaPushed(userID, used: view.messages.used)
        }
    }

    // MARK: - Timers, checkpoints

    func tick() {
        guard !pipeline.isOverloaded else { return }
        run(.tick)
    }

    /// Where a checkpoint's snapshots reach (`CoreRunner.checkpointMark`), or — `markAtLogHead`, the bug of issue
    /// 26 put back — nil: the log's newest position when the first part runs.
    private var checkpointMark: Int64? { options.markAtLogHead ? nil : pipeline.committedThrough }

    func checkpoint() {
        let through = checkpointMark
        guard !checkpointing, !pipeline.recovering, let parts = takeCheckpointParts() else { return }
        checkpointing = true
        writeCheckpoint(parts, from: 0, through: through)
    }

    /// At a graceful stop, after the loop stopped: every part at once.
    func checkpointBeforeStop() {
        if options.fixes.contains(.finishCheckpointAtStop) {
            for part in unsubmittedParts { for no in part { core.chat.markDirty(no: no) } }
        }
        let through = checkpointMark
        guard !pipeline.recovering, let parts = takeCheckpointParts() else { return }
        pipeline.flush()
        for index in parts.indices {
            log.checkpoint(snapshots(parts[index]), first: index == 0, last: index == parts.count - 1, through: through) { _ in }
        }
    }

    private func takeCheckpointParts() -> [[Int64]]? {
        let numbers = core.chat.takeDirtyNumbers()
        guard !numbers.isEmpty else { return nil }
        let size = options.checkpointPart
        return stride(from: 0, to: numbers.count, by: size).map { Array(numbers[$0..<min($0 + size, numbers.count)]) }
    }

    /// A part's snapshots, made when it is handed to the log (`CoreRunner.writeCheckpoint`).
    private func snapshots(_ numbers: [Int64]) -> [ThreadSnapshot] {
        var snapshots = core.chat.snapshots(of: numbers)
        if !options.fixes.contains(.receiptsWithinSeqs) {
            // As before the fix: the positions as decided, past the committed seq the snapshot saves.
            snapshots = snapshots.map { saved in
                guard let thread = core.chat.thread(no: saved.no) else { return saved }
                return ThreadSnapshot(no: saved.no, lastSeq: saved.lastSeq, lastMessageAt: saved.lastMessageAt,
                                      lastPreview: saved.lastPreview, lastSide: saved.lastSide,
                                      coachDelivered: thread.deliveredSeq(.coach), coachRead: thread.readSeq(.coach),
                                      clientDelivered: thread.deliveredSeq(.client), clientRead: thread.readSeq(.client))
            }
        }
        return snapshots
    }

    private func writeCheckpoint(_ parts: [[Int64]], from index: Int, through: Int64?) {
        let last = index == parts.count - 1
        unsubmittedParts = Array(parts[(index + 1)...])
        pipeline.flush()
        log.checkpoint(snapshots(parts[index]), first: index == 0, last: last, through: through) { [self] result in
            if case .failure = result {
                for part in parts[index...] { for no in part { core.chat.markDirty(no: no) } }
                checkpointing = false
            } else if last {
                checkpointing = false
            } else {
                writeCheckpoint(parts, from: index + 1, through: through)
            }
        }
    }

    // MARK: - Recovery after a failed append (alone: everything is rebuilt)

    private func failed(_ records: [ChatRecord], _ error: any Error) {
        pipeline.recovering = true
        switch CoachingCore.recovery(after: records, clustered: false) {
        case .everything: recoveringEverything = true
        case .threads(let nos): recoveringThreads.formUnion(nos)
        }
        recoverWhenQuiet()
    }

    func recoverWhenQuiet() {
        guard pipeline.recovering, !recoveryStarted, pipeline.inFlight == 0 else { return }
        recoveryStarted = true
        recoveringThreads = []
        log.poolRead("load (recovery)", { $0.load() }, done: { [self] loaded in
            for client in loadedCounts() { forgets[client, default: 0] += 1 }
            core = makeCore(loaded)
            appliedThrough = max(appliedThrough, loaded.position)
            pipeline.caughtUp(to: loaded.position)
            loadedPosition = loaded.position
            recoveringEverything = false
            recoveryStarted = false
            guard recoveringThreads.isEmpty, !recoveringEverything else { return recoverWhenQuiet() }
            log.resume()
            pipeline.recovering = false
            world.stats.recoveries += 1
            world.note("recovered: state reloaded through \(loaded.position)")
        })
    }

    // MARK: - Links (`CoreRunner.linkChange`)

    func changeCoach(clientID: String, to coachID: String) {
        pipeline.flush()
        log.changeCoach(clientID: clientID, to: coachID, now: world.now) { [self] outcome in
            core.learn(threads: outcome.threads.map(ChatThread.init), names: [:])
            noteApplied(outcome.records, here: false)
            let loaded = loadedCounts()
            let applied = core.apply(outcome.records, origin: .elsewhere, world.context())
            noteForgotten(since: loaded)
            publish(applied)
            for record in outcome.records {
                guard let thread = core.chat.thread(no: record.threadNo), !thread.active else { continue }
                run(.linkEnded(threadNo: thread.no))
            }
        }
    }
}

extension CoreCommand {
    /// `CoreCommand.isRequest` of the shell: a person's command, refused while the store is out of reach.
    var isRequest: Bool {
        switch self {
        case .tick, .linkEnded, .tierSet: return false
        default: return true
        }
    }
}

/// The pipeline's hooks reach the shell through this (the shell owns the pipeline).
private final class ShellBox {
    weak var shell: SimShell?
}
