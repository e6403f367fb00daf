import EventLoop
import SpotterCore
import SpotterPorts
import SpotterProtocol

/// Cluster mode, interest by thread (issue 33, item 4): a process applies another process's chat records only for
/// the threads it has an interest in — one of whose participants has a socket here, or every thread while it holds
/// the timer lease (its timers and durable consumers read any thread: reminders, push badges with a user's total
/// unread). A record of a thread with no interest here (a message, a receipt, an edit, a rating prompt) is passed
/// over, and the thread is marked stale from that position: it stays in memory as it was. Before anyone here reads
/// it again (a participant connects, the lease comes here, an export, a service's message) it is brought up to
/// date from the store: its saved views and its records after the checkpoint, in one snapshot, read off the loop
/// while the follower waits (so nothing it applies meanwhile is overwritten), then applied here.
///
/// Records that reach books read across threads (sessions, links, tiers, the coaching record, erasures, account
/// changes) are applied everywhere, as before.
///
/// The checkpoint claims no position at or above a stale thread's first passed-over record: the view this process
/// saves of that thread is exact only below it (`interestCheckpointMark`).
final class ThreadInterest {
    /// Threads let go, by number: the position of the first record passed over.
    var stale: [Int64: Int64] = [:]
    /// Refreshes under way: the follower applies nothing while one reads (`LogFollower.drain`).
    var refreshing = 0
    /// Whether every record is applied (this process holds the timer lease, or is becoming its holder).
    var holdsAll = false
    /// Every record applied whatever the lease (`ClusterSetup.followEveryThread`): interest off.
    var everyThread = false
}

extension ThreadInterest {
    /// Marks `thread` stale from `pos` (the first record passed over stays the mark).
    func passOver(_ thread: Int64, at pos: Int64) {
        if stale[thread] == nil { stale[thread] = pos }
    }

    /// The newest position a checkpoint may claim when every other record up to `applied` is applied here.
    func checkpointMark(applied: Int64) -> Int64 {
        guard let first = stale.values.min() else { return applied }
        return min(applied, first - 1)
    }
}

extension CoreRunner {
    /// Whether the follower passes over `record` (another process's): a chat record of a thread known here with
    /// no participant connected here, while this process does not hold every thread. Marks the thread stale.
    func passesOver(_ record: ChatRecord) -> Bool {
        guard let interest = follower?.interest, !interest.holdsAll, !interest.everyThread, record.content.concernsOnlyItsThread,
              let thread = chat.thread(no: record.threadNo) else { return false }
        if !broker.localSubscribers(thread.coachID).isEmpty || !broker.localSubscribers(thread.clientID).isEmpty {
            return false
        }
        interest.passOver(thread.no, at: record.pos)
        core.passedOver(record)
        metrics.followPassedOver.increment()
        return true
    }

    /// Brings the user's stale threads up to date before `then` (a socket's hello: its threads, unread counts and
    /// cursor come from memory). A failed read of the store is tried again every half second while `stillWanted`.
    func holdThreads(of userID: String, stillWanted: @escaping () -> Bool = { true }, then: @escaping () -> Void) {
        refresh(chat.threads(of: userID).map(\.no)) { [weak self] error in
            guard error != nil else { return then() }
            guard let self, stillWanted() else { return }
            let retry = Timer(loop: loop)
            retry.start(after: 500, repeat: 0) { [weak self] in
                retry.close()
                self?.holdThreads(of: userID, stillWanted: stillWanted, then: then)
            }
        }
    }

    /// Brings the threads among `nos` that are stale here up to date from the store, then calls `then` (at once
    /// when none is; `unavailable` when the store could not be read — they stay stale).
    func refresh(_ nos: [Int64], then: @escaping (APIError?) -> Void) {
        guard let follower else { return then(nil) }
        let interest = follower.interest
        let stale = nos.filter { interest.stale[$0] != nil }
        guard !stale.isEmpty else { return then(nil) }
        interest.refreshing += 1
        let log = follower.log
        loop.runBlocking({ Result { try log.reloadThreads(nos: stale) } }, then: { [weak self] result in
            guard let self else { return }
            interest.refreshing -= 1
            switch result {
            case .success(let reloaded):
                // The follower waited: the snapshot holds everything it applied, and what it applies next goes on top
                // (applying a record the snapshot holds changes nothing).
                learn(reloaded.threads, reloaded.names)
                core.refresh(reloaded.threads.map(ChatThread.init), tail: reloaded.tail)
                for no in stale { interest.stale[no] = nil }
                metrics.threadsRefreshed.increment(by: stale.count)
                follower.recovered()
                then(nil)
            case .failure(let error):
                logger.error("reading stale threads from the store failed", metadata: ["error": "\(error)"])
                storeFailedAt = loop.nowMilliseconds
                follower.recovered()
                then(APIError(.unavailable, retryAfterSeconds: 1))
            }
        })
    }

    /// The timer lease came here or went away. Its holder applies every record (its timers and consumers read any
    /// thread), so taking it first brings every stale thread up to date; `then` runs once `holdsTimers` is set
    /// (it stays false, and the next ask of the lease tries again, if the store could not be read).
    func leaseChanged(_ held: Bool, then: @escaping () -> Void) {
        guard let interest = follower?.interest else {
            holdsTimers = held
            return then()
        }
        guard held else {
            interest.holdsAll = false
            holdsTimers = false
            return then()
        }
        guard !holdsTimers else { return then() }
        interest.holdsAll = true  // nothing is passed over from now on
        refresh(Array(interest.stale.keys)) { [weak self] error in
            guard let self, error == nil else { return }
            holdsTimers = true
            then()
        }
    }

    /// The checkpoint every second (`Server`): in a cluster only the timer lease's holder saves views. It applies
    /// every record, so its views and mark cover what every process committed; the others' saves were the same
    /// views again (they only move forward), up to three times the snapshots and the view writes of one process
    /// (issue 33 item 4). A process without the lease keeps its changed threads marked, and saves them all once
    /// the lease comes here (a thread brought up to date then is marked too). An explicit `checkpoint()` (a
    /// purge, a stop) still saves on any process.
    func periodicCheckpoint() {
        if follower != nil, !holdsTimers { return }
        checkpoint()
    }

    /// Where a checkpoint's claim may reach: every record up to it applied here, stale threads' included.
    var interestCheckpointMark: Int64 {
        guard let follower else { return pipeline.committedThrough }
        return follower.interest.checkpointMark(applied: follower.applied)
    }
}
