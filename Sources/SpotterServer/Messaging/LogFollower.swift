import EventLoop
import SpotterBroker
import SpotterCore
import SpotterStore

/// Cluster mode: this process follows the shared log, so its memory (threads, seqs, receipts, unread, sessions,
/// the coaching record) moves with every process's commits, and its sockets get every logged event in position
/// order whichever process wrote the record. Loop thread only.
///
/// Records come from three places: this process's own commits (`own`, with the events its commands made), the
/// other processes' publications on the broker's log stream, and the store, read when a position is missing
/// for longer than `patience` (a publication lost, a writer that died after its commit) or, every second and
/// after the broker reconnects, after the last one handed on (the newest records lost). `LogSequencer` puts them
/// in position order, each once. A record of another process is applied through the hub (`applyFollowed`) and
/// its events are made here for this process's subscribers only: the broker carries no logged events between
/// processes (`ClusterBroker.sharesLoggedEvents` is off), only presence and typing.
final class LogFollower {
    unowned let hub: MessagingHub
    let broker: any ClusterBroker
    let log: any FollowableLog
    private var sequencer: LogSequencer
    /// The events this process's commands made for their records, until the record's turn comes.
    private var held: [Int64: [(userID: String, payload: String)]] = [:]
    /// This process's records handed to the sequencer and not yet handed on.
    private var ownWaiting: Set<Int64> = []
    /// Records handed on by the sequencer and not yet applied (applying waits while a thread is read).
    private var ready: [ChatRecord] = []
    private var readyIndex = 0
    private var pausedForThreads = false
    /// Re-applying, after the hub rebuilt its state, what had been applied to the state it replaced.
    private var reapplying = false
    private var reading = false
    private var timer: Timer?
    private var ticks = 0
    /// How long (ms) a missing position may be awaited from the stream before the store is read for it.
    let patience: UInt64
    static let tickMilliseconds: UInt64 = 20
    static let readLimit = 2000


    init(hub: MessagingHub, broker: any ClusterBroker, log: any FollowableLog, position: Int64, patience: UInt64 = 40) {
        self.hub = hub
        self.broker = broker
        self.log = log
        self.patience = patience
        sequencer = LogSequencer(after: position)
    }

    /// The position up to which every record has been applied here.
    var applied: Int64 { sequencer.applied }

    func start(loop: Loop) throws {
        broker.sharesLoggedEvents = false
        try broker.followLog { [unowned self] text in received(text) }
        let previous = broker.connectionChanged
        broker.connectionChanged = { [unowned self] up in
            previous?(up)
            if up { readStore(after: sequencer.applied, through: nil) }  // what was published while we were away
        }
        let timer = Timer(loop: loop)
        timer.start(after: LogFollower.tickMilliseconds, repeat: LogFollower.tickMilliseconds) { [unowned self] in tick() }
        timer.unref()  // following alone does not keep a stopping server's loop running
        self.timer = timer
        readStore(after: sequencer.applied, through: nil)  // committed between the load and the subscription
    }

    func stop() {
        timer?.close()
        timer = nil
    }

    // MARK: - In

    /// This process's committed records (after their commands registered their events through `publish`): sent
    /// to the other processes, and handed on here in their turn.
    func own(_ records: [ChatRecord]) {
        guard !records.isEmpty else { return }
        broker.publishLog(LogStreamCodec.encode(records))
        for record in records where record.pos > sequencer.applied { ownWaiting.insert(record.pos) }
        receive(records)
    }

    /// The events a command made for its committed record: delivered when the record's turn comes, or at once if
    /// it came already (read back from the store before the commit's completion reached the loop).
    func publish(_ record: ChatRecord, events: [(userID: String, payload: String)]) {
        if record.pos <= sequencer.applied && !ownWaiting.contains(record.pos) {
            deliver(record.pos, events)
        } else {
            held[record.pos, default: []].append(contentsOf: events)
        }
    }

    private func received(_ text: String) {
        guard let records = LogStreamCodec.decode(text) else {
            hub.server.logger.warning("unreadable batch on the log stream; reading the store instead")
            return
        }
        receive(records)
    }

    private func receive(_ records: [ChatRecord]) {
        ready.append(contentsOf: sequencer.receive(records, now: hub.server.loop.nowMilliseconds))
        drain()
    }

    // MARK: - Applying, in order

    private func drain() {
        // While the hub rebuilds its state from the store, records wait: applied now they would go to the state
        // about to be replaced.
        while !pausedForThreads, !reapplying, !hub.reloading, readyIndex < ready.count {
            let record = ready[readyIndex]
            if ownWaiting.remove(record.pos) != nil {
                deliver(record.pos, held.removeValue(forKey: record.pos) ?? [])
            } else {
                // Another process's record (or one of ours read back before its completion: applying twice
                // changes nothing, and sockets drop a cursor they sent).
                if hub.state.thread(no: record.threadNo) == nil {
                    return loadThread(record.threadNo)
                }
                hub.server.metrics.followedRecords.increment()
                let events = hub.applyFollowed(record)
                deliver(record.pos, events + (held.removeValue(forKey: record.pos) ?? []))
            }
            readyIndex += 1
        }
        if readyIndex == ready.count {
            ready.removeAll(keepingCapacity: true)
            readyIndex = 0
        }
    }

    /// The hub rebuilt its state from the store, as it stood at `position`. Records handed on above it were
    /// applied to the state that was replaced (they arrived while the store was being read): they are read
    /// again and applied to the new one (their events were delivered already), then following goes on.
    func rebuilt(at position: Int64) {
        guard position < sequencer.applied else { return drain() }
        reapplying = true
        let log = log
        let through = sequencer.applied
        hub.server.loop.runBlocking({ Result { () -> ([ChatRecord], [ThreadRow], [String: String]) in
            let records = try log.recordsAfter(position, through: through, limit: Int.max)
            // Threads linked in that stretch are not in the rebuilt state either.
            let linked = Array(Set(records.filter { $0.kind == .link }.map(\.threadNo)))
            let (threads, names) = try log.threads(nos: linked)
            return (records, threads, names)
        } }, then: { [self] result in
            switch result {
            case .success(let (records, threads, names)):
                learn(threads, names)
                for record in records where hub.state.thread(no: record.threadNo) != nil { _ = hub.applyFollowed(record) }
                reapplying = false
                drain()
            case .failure(let error):
                retryLater("could not read the log after a rebuild", error) { [unowned self] in rebuilt(at: position) }
            }
        })
    }

    /// A record of a thread this process has not seen (another process linked it): read the thread, then go on.
    private func loadThread(_ no: Int64) {
        pausedForThreads = true
        let log = log
        hub.server.loop.runBlocking({ Result { try log.threads(nos: [no]) } }, then: { [self] result in
            switch result {
            case .success(let (rows, names)):
                learn(rows, names)
                if rows.isEmpty {
                    // Not in the store either (a thread made outside the log): its records concern no one here.
                    hub.server.logger.warning("followed a record of an unknown thread; skipped", metadata: ["thread": "\(no)"])
                    readyIndex += 1
                }
                pausedForThreads = false
                drain()
            case .failure(let error):
                retryLater("could not read a followed thread", error) { [unowned self] in loadThread(no) }
            }
        })
    }

    /// Threads read from the store (linked by another process) into the chat state, with their people's names.
    private func learn(_ threads: [ThreadRow], _ names: [String: String]) {
        for (user, name) in names { hub.state.setName(name, for: user) }
        for row in threads where hub.state.thread(no: row.no) == nil { hub.state.add(row.makeThread()) }
    }

    /// Logs a failed read of the store and runs `work` again in 200 ms (the store's connections reconnect).
    private func retryLater(_ what: String, _ error: any Error, _ work: @escaping () -> Void) {
        hub.server.logger.error("\(what); trying again", metadata: ["error": "\(error)"])
        let retry = Timer(loop: hub.server.loop)
        retry.start(after: 200, repeat: 0) {
            retry.close()
            work()
        }
    }

    private func deliver(_ cursor: Int64, _ events: [(userID: String, payload: String)]) {
        for (userID, payload) in events {
            broker.publish(userID: userID, cursor: cursor, frame: MessagingHub.frame(cursor: cursor, payload: payload))
        }
    }

    // MARK: - The store

    private func tick() {
        ticks += 1
        hub.server.metrics.followWaiting.record(sequencer.waitingCount)
        if let gap = sequencer.gap(now: hub.server.loop.nowMilliseconds, patience: patience) {
            hub.server.metrics.followGapReads.increment()
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
        hub.server.loop.runBlocking({ Result { try log.recordsAfter(after, through: through, limit: limit) } }, then: { [self] result in
            reading = false
            switch result {
            case .success(let records):
                receive(records)
                if records.count == limit { readStore(after: sequencer.applied, through: through) }  // more behind
            case .failure(let error):
                hub.server.logger.warning("could not read the log to follow it; trying again", metadata: ["error": "\(error)"])
            }
        })
    }
}
