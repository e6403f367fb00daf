import EventLoop
import Logging
import SpotterBroker
import SpotterCore
import SpotterPorts

/// Cluster mode: this process follows the shared log, so its memory (threads, seqs, receipts, unread, sessions,
/// the coaching record) moves with every process's commits, and its sockets get every logged event in position
/// order whichever process wrote the record. Loop thread only.
///
/// Records come from three places: this process's own commits (`own`, with the events its commands made), the
/// other processes' publications on the broker's log stream, and the store, read when a position is missing
/// for longer than `patience` (a publication lost, a writer that died after its commit) or, every second and
/// after the broker reconnects, after the last one handed on (the newest records lost). `LogSequencer` puts them
/// in position order, each once. A record of another process is applied by the core (`CoreRunner.applyFollowed`) and
/// its events are made here for this process's subscribers only: the broker carries no logged events between
/// processes (`ClusterBroker.sharesLoggedEvents` is off), only presence and typing.
final class LogFollower {
    private weak var runner: CoreRunner?
    private let loop: Loop
    private let logger: Logger
    private let metrics: ServerMetrics
    let broker: any ClusterBroker
    let log: any FollowableLog
    private var sequencer: LogSequencer
    /// Which threads this process applies others' chat records of (`CoreRunner+Interest`).
    let interest = ThreadInterest()
    /// The events this process's commands made for their records, until the record's turn comes.
    private var held: [Int64: [(userID: String, payload: String)]] = [:]
    /// Per user, the newest cursor whose held events include one for them: an unlogged event a command here makes
    /// for that user waits behind it (`publishUnlogged`), so their socket sees one process's order.
    private var newestHeld: [String: Int64] = [:]
    /// Unlogged events waiting behind a held cursor (by that cursor), in the order they were made.
    private var trailing: [Int64: [(userID: String, frame: EventFrame)]] = [:]
    /// This process's records handed to the sequencer and not yet handed on.
    private var ownWaiting: Set<Int64> = []
    /// Records handed on by the sequencer and not yet applied (applying waits while a thread is read).
    private var ready: [ChatRecord] = []
    private var readyIndex = 0
    private var pausedForThreads = false
    private var reading = false
    private var timer: Timer?
    /// This process's committed records not yet on the stream: sent as one publication at the end of the loop
    /// iteration (`publishOwn`), however many commits completed in it.
    private var unpublished: [ChatRecord] = []
    private var ticks = 0
    /// Steps waiting until the state holds every record through a position (`whenApplied`), with their deadlines.
    private var waiters: [(through: Int64, deadline: UInt64, then: () -> Void)] = []
    /// How long (ms) a missing position may be awaited from the stream before the store is read for it.
    let patience: UInt64
    static let tickMilliseconds: UInt64 = 20
    static let readLimit = 2000
    static let publicationRecords = 256


    init(runner: CoreRunner, broker: any ClusterBroker, log: any FollowableLog, position: Int64, patience: UInt64 = 40) {
        self.runner = runner
        loop = runner.loop
        logger = runner.logger
        metrics = runner.metrics
        self.broker = broker
        self.log = log
        self.patience = patience
        sequencer = LogSequencer(after: position)
    }

    /// The position up to which every record has been applied here.
    var applied: Int64 { sequencer.applied }
    /// The position up to which the state holds every record: `applied`, less what still waits in `ready` (a
    /// thread being read first). What the tests' cluster mode waits for (`Server.followedPosition`).
    var appliedToState: Int64 { readyIndex < ready.count ? ready[readyIndex].pos - 1 : sequencer.applied }

    func start(loop: Loop) throws {
        broker.sharesLoggedEvents = false
        try broker.followLog { [weak self] text in self?.received(text) }
        let previous = broker.connectionChanged
        broker.connectionChanged = { [weak self] up in
            previous?(up)
            guard let self else { return }
            if up { readStore(after: sequencer.applied, through: nil) }  // what was published while we were away
        }
        let timer = Timer(loop: loop)
        timer.start(after: LogFollower.tickMilliseconds, repeat: LogFollower.tickMilliseconds) { [weak self] in self?.tick() }
        timer.unref()  // following alone does not keep a stopping server's loop running
        self.timer = timer
        loop.everyIteration { [weak self] in self?.publishOwn() }
        readStore(after: sequencer.applied, through: nil)  // committed between the load and the subscription
    }

    func stop() {
        publishOwn()
        timer?.close()
        timer = nil
    }

    // MARK: - In

    /// This process's committed records (after their commands registered their events through `publish`): sent
    /// to the other processes, and handed on here in their turn.
    func own(_ records: [ChatRecord]) {
        guard !records.isEmpty else { return }
        unpublished.append(contentsOf: records)
        for record in records where record.pos > sequencer.applied { ownWaiting.insert(record.pos) }
        receive(records)
    }

    /// One publication for the iteration's commits: each publication wakes every other process (NATS's threads,
    /// then its loop), so commits completing together travel together. Records keep their positions; followers
    /// order them whatever the grouping. At most `publicationRecords` a publication, so a burst stays far below
    /// NATS's maximum payload (a publication over it would reach the others only through their gap reads).
    func publishOwn() {
        guard !unpublished.isEmpty else { return }
        for start in stride(from: 0, to: unpublished.count, by: LogFollower.publicationRecords) {
            let part = unpublished[start..<min(start + LogFollower.publicationRecords, unpublished.count)]
            broker.publishLog(LogStreamCodec.encode(Array(part)))
            metrics.logPublications.increment()
        }
        unpublished.removeAll(keepingCapacity: unpublished.capacity <= 4096)
    }

    /// The events a command made for its committed record: delivered when the record's turn comes, or at once if
    /// it came already (read back from the store before the commit's completion reached the loop).
    func publish(cursor: Int64, events: [(userID: String, payload: String)]) {
        if cursor <= sequencer.applied && !ownWaiting.contains(cursor) {
            deliver(cursor, events)
        } else {
            held[cursor, default: []].append(contentsOf: events)
            for (userID, _) in events where newestHeld[userID].map({ $0 < cursor }) ?? true { newestHeld[userID] = cursor }
        }
    }

    /// An unlogged event a command of this process made (a quota, a group challenge's counts, a client card): alone
    /// it goes out at once, as one process sends it after the command's logged events; here those may still be
    /// held for their record's turn, so it waits behind the newest held one for its user and leaves right after
    /// it. The same user's socket then sees the order one process gives. Presence and typing do not come here.
    func publishUnlogged(userID: String, frame: EventFrame) {
        if let cursor = newestHeld[userID] {
            trailing[cursor, default: []].append((userID, frame))
        } else {
            broker.publishEphemeral(userID: userID, frame: frame)
        }
    }

    private func received(_ text: String) {
        guard let records = LogStreamCodec.decode(text) else {
            logger.warning("unreadable batch on the log stream; reading the store instead")
            return
        }
        receive(records)
    }

    private func receive(_ records: [ChatRecord]) {
        ready.append(contentsOf: sequencer.receive(records, now: loop.nowMilliseconds))
        drain()
    }

    // MARK: - Applying, in order

    private func drain() {
        guard let runner else { return }
        // While the runner sets its state back from the store, records wait: applied now they would go to a state
        // about to be replaced. So everything applied before is in the store's snapshot, and what waited is
        // applied on top of it (`recovered`).
        while !pausedForThreads, !runner.isRecovering, interest.refreshing == 0, readyIndex < ready.count {
            let record = ready[readyIndex]
            if ownWaiting.remove(record.pos) != nil {
                deliver(record.pos, held.removeValue(forKey: record.pos) ?? [])
            } else {
                // Another process's record (or one of ours read back before its completion: applying twice
                // changes nothing, and sockets drop a cursor they sent).
                // An erasure or an account change is on no thread (0): applied as it is.
                if record.threadNo != 0, runner.chat.thread(no: record.threadNo) == nil {
                    return loadThread(record.threadNo)
                }
                if runner.passesOver(record) {  // no interest here: the thread is brought up to date when wanted
                    deliver(record.pos, held.removeValue(forKey: record.pos) ?? [])
                    readyIndex += 1
                    continue
                }
                metrics.followedRecords.increment()
                let events = runner.applyFollowed(record)
                deliver(record.pos, events + (held.removeValue(forKey: record.pos) ?? []))
            }
            readyIndex += 1
        }
        if readyIndex == ready.count {
            ready.removeAll(keepingCapacity: true)
            readyIndex = 0
        }
    }

    /// Runs `then` once the state holds every record through `position` (a position read from the store's head:
    /// what was committed anywhere before), or after `patience` ms whatever it holds, which covers the once-a-second
    /// read of the store's tail. At once when it holds them already; else from the follower's next tick (20 ms), so
    /// what `then` starts (a socket's hello, which may read threads while the follower waits) never runs in the
    /// middle of applying records.
    func whenApplied(through position: Int64, patience: UInt64 = 1500, then: @escaping () -> Void) {
        guard appliedToState < position else { return then() }
        waiters.append((position, loop.nowMilliseconds + patience, then))
    }

    private func releaseWaiters() {
        let now = loop.nowMilliseconds, applied = appliedToState
        let due = waiters.filter { $0.through <= applied || $0.deadline <= now }
        guard !due.isEmpty else { return }
        waiters.removeAll { $0.through <= applied || $0.deadline <= now }
        for waiter in due { waiter.then() }
    }

    /// The runner's state agrees with the store again: what waited is applied on top of it.
    func recovered() {
        drain()
    }

    /// A record of a thread this process has not seen (another process linked it): read the thread, then go on.
    private func loadThread(_ no: Int64) {
        pausedForThreads = true
        let log = log
        loop.runBlocking({ Result { try log.threads(nos: [no]) } }, then: { [weak self] result in
            guard let self else { return }
            switch result {
            case .success(let (rows, names)):
                runner?.learn(rows, names)
                if rows.isEmpty {
                    // Not in the store either (a thread made outside the log): its records concern no one here.
                    logger.warning("followed a record of an unknown thread; skipped", metadata: ["thread": "\(no)"])
                    readyIndex += 1
                }
                pausedForThreads = false
                drain()
            case .failure(let error):
                logger.error("could not read a followed thread; trying again", metadata: ["error": "\(error)"])
                let retry = Timer(loop: loop)
                retry.start(after: 200, repeat: 0) { [weak self] in
                    retry.close()
                    self?.loadThread(no)
                }
            }
        })
    }

    private func deliver(_ cursor: Int64, _ events: [(userID: String, payload: String)]) {
        for (userID, payload) in events {
            broker.publish(userID: userID, cursor: cursor, frame: EventFrame(cursor: cursor, object: payload))
        }
        guard !newestHeld.isEmpty else { return }
        for (userID, _) in events where newestHeld[userID] == cursor { newestHeld[userID] = nil }
        // What waited behind this cursor, now that it went out.
        if let after = trailing.removeValue(forKey: cursor) {
            for (userID, frame) in after { broker.publishEphemeral(userID: userID, frame: frame) }
        }
    }

    // MARK: - The store

    private func tick() {
        ticks += 1
        if !waiters.isEmpty { releaseWaiters() }
        metrics.followWaiting.record(sequencer.waitingCount)
        if let gap = sequencer.gap(now: loop.nowMilliseconds, patience: patience) {
            metrics.followGapReads.increment()
            readStore(after: gap.after, through: gap.through)
        } else if ticks % Int(1000 / LogFollower.tickMilliseconds) == 0 {
            readStore(after: sequencer.applied, through: nil)
        }
    }

    private func readStore(after: Int64, through: Int64?) {
        guard !reading else { return }
        reading = true
        let log = log
        let limit = LogFollower.readLimit
        loop.runBlocking({ Result { try log.recordsAfter(after, through: through, limit: limit) } }, then: { [self] result in
            reading = false
            switch result {
            case .success(let records):
                receive(records)
                if records.count == limit { readStore(after: sequencer.applied, through: through) }  // more behind
            case .failure(let error):
                logger.warning("could not read the log to follow it; trying again", metadata: ["error": "\(error)"])
            }
        })
    }
}
