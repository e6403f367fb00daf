import EventLoop
import SpotterCore
import SpotterProtocol
import SpotterPorts

/// After a failed append the state is set back to what the store holds (the core says how much: `recovery`), and
/// every second the views that changed are checkpointed.
struct RecoveryState {
    /// The threads whose records failed since the recovery began (the failed batch's, and those of the batches
    /// queued behind it, which fail too: their seqs followed the lost ones).
    var threads: Set<Int64> = []
    /// Whether the recovery must rebuild everything rather than set some threads back.
    var everything = false
    var started = false
}

extension CoreRunner {
    // MARK: - Recovery after a failed append

    /// An append failed: writes are refused until the state agrees with the store again.
    func failed(_ records: [ChatRecord], _ error: any Error) {
        if !pipeline.recovering {
            logger.error("log append failed; setting the state back from the store", metadata: ["error": "\(error)"])
        }
        pipeline.recovering = true
        storeFailedAt = loop.nowMilliseconds
        switch CoachingCore.recovery(after: records, clustered: follower != nil) {
        case .everything: recovery.everything = true
        case .threads(let nos): recovery.threads.formUnion(nos)
        }
        recoverWhenQuiet()
    }

    var isRecovering: Bool { pipeline.recovering }

    /// Starts the recovery once every append handed to the log has come back (called by `failed`, and by the
    /// pipeline's `quiet` hook when the last one back was a success).
    func recoverWhenQuiet() {
        guard pipeline.recovering, !recovery.started, pipeline.inFlight == 0 else { return }
        recovery.started = true
        if recovery.everything { reload() } else { resetThreads() }
    }

    /// Sets the failed records' threads back to what the store holds (cluster mode).
    private func resetThreads() {
        let numbers = Array(recovery.threads)
        recovery.threads = []
        guard let source = follower?.log else { return reload() }
        loop.runBlocking({ Result { try source.reloadThreads(nos: numbers) } }, then: { [weak self] result in
            guard let self else { return }
            switch result {
            case .success(let reloaded):
                learn(reloaded.threads, reloaded.names)
                core.reset(reloaded.threads.map(ChatThread.init), tail: reloaded.tail)
                logger.notice("threads set back from the store", metadata: ["threads": "\(reloaded.threads.count)"])
                finishRecovery()
            case .failure(let error):
                recovery.threads.formUnion(numbers)
                retryRecovery(error)
            }
        })
    }

    /// Rebuilds the whole state from the store.
    private func reload() {
        recovery.threads = []
        let log = log
        loop.runBlocking({ Result { try log.load() } }, then: { [weak self] result in
            guard let self else { return }
            switch result {
            case .success(let loaded):
                replaceCore(with: loaded)
                pipeline.caughtUp(to: loaded.position)
                recovery.everything = false
                logger.notice("state reloaded", metadata: ["threads": "\(chat.threadCount)"])
                finishRecovery()
            case .failure(let error):
                retryRecovery(error)
            }
        })
    }

    private func retryRecovery(_ error: any Error) {
        storeFailedAt = loop.nowMilliseconds
        logger.critical("reading the state back failed; retrying in 1 s", metadata: ["error": "\(error)"])
        let timer = Timer(loop: loop)
        timer.start(after: 1000, repeat: 0) { [weak self] in
            timer.close()
            self?.recovery.started = false
            self?.recoverWhenQuiet()
        }
    }

    /// The state agrees with the store: appends go on, unless more failed meanwhile.
    private func finishRecovery() {
        recovery.started = false
        guard recovery.threads.isEmpty, !recovery.everything else { return recoverWhenQuiet() }
        log.resume()
        pipeline.recovering = false
        // Ended links whose cancellations were not decided while recovering: the next tick looks for them.
        core.sweepEndedLinksAgain()
        follower?.recovered()
    }

    // MARK: - Checkpoints

    /// Threads per checkpoint part: a part holds the appends behind it for a few milliseconds at most, and making
    /// its snapshots (the previews above all) holds the loop for a fraction of a millisecond.
    static let checkpointPart = 256

    /// Where a checkpoint's snapshots reach: in a cluster, every record up to what was followed; alone, every
    /// record this loop saw committed. A record still in flight when the snapshots were taken (a timer's, flushed
    /// with them) is replayed after a restart instead of being covered by a mark its thread's view does not hold.
    /// Threads passed over (`CoreRunner+Interest`) hold it below their first record not applied.
    private var checkpointMark: Int64 { interestCheckpointMark }

    /// The newest position up to which every record is applied here: in a cluster, what the follower applied in
    /// position order; alone, what the pipeline completed (and the link changes the loop applied after it).
    var appliedThrough: Int64 { follower?.applied ?? pipeline.committedThrough }

    /// Saves the views that changed since the last checkpoint (every second), in parts, each handed to the log
    /// when the one before it is written; a part's snapshots are made then, so no loop iteration makes more than
    /// `checkpointPart` of them (all 5,000 threads of a busy second at once held the loop ~10 ms). A snapshot made
    /// later than `through` may include records after it: a start replays them onto views that hold them, which
    /// `ChatState.apply` allows (it is monotone), as after a crash between two parts.
    func checkpoint() {
        let through = checkpointMark
        guard !checkpointing, !pipeline.recovering, let parts = takeCheckpointParts() else { return }
        checkpointing = true
        writeCheckpoint(parts, from: 0, through: through, withRecordsInFlight: pipeline.inFlight > 0)
    }

    /// At shutdown, after the loop stopped: every part at once (the writer finishes its queue before it stops).
    func checkpointBeforeStop() {
        // The parts of a checkpoint under way that were not handed to the log yet (each goes from the previous
        // part's completion, which the stopped loop never runs): their threads are saved now, with the rest.
        for part in checkpointRemaining { for no in part { chat.markDirty(no: no) } }
        checkpointRemaining = []
        let through = checkpointMark
        guard !pipeline.recovering, let parts = takeCheckpointParts() else { return }
        pipeline.flush()  // the snapshots include every record gathered: appended first
        for index in parts.indices {
            metrics.viewsSaved.increment(by: parts[index].count)
            log.checkpoint(chat.snapshots(of: parts[index]), first: index == 0, last: index == parts.count - 1, through: through) { _ in }
        }
    }

    /// The changed threads in parts (their numbers, ascending: each part's rows of the thread views and receipts,
    /// kept in number order, are then neighbours on a few pages instead of one page each); nil when nothing changed.
    private func takeCheckpointParts() -> [[Int64]]? {
        let numbers = chat.takeDirtyNumbers().sorted()
        guard !numbers.isEmpty else { return nil }
        let size = Self.checkpointPart
        return stride(from: 0, to: numbers.count, by: size).map { Array(numbers[$0..<min($0 + size, numbers.count)]) }
    }

    /// Hands part `index` to the log: its snapshots are made now, after handing the log every record gathered so
    /// far (the snapshots include them, so they must be appended first).
    private func writeCheckpoint(_ parts: [[Int64]], from index: Int, through: Int64?, withRecordsInFlight: Bool) {
        let last = index == parts.count - 1
        checkpointRemaining = Array(parts[(index + 1)...])
        pipeline.flush()
        metrics.viewsSaved.increment(by: parts[index].count)
        log.checkpoint(chat.snapshots(of: parts[index]), first: index == 0, last: last, through: through, completion: loop.completion { [weak self] (result: Result<Int64, any Error>) in
            guard let self else { return }
            if case .failure(let error) = result {
                logger.error("checkpoint failed; the next one saves these threads", metadata: ["error": "\(error)"])
                for part in parts[index...] { for no in part { chat.markDirty(no: no) } }
                checkpointRemaining = []
                checkpointing = false
            } else if last {
                checkpointing = false
                failPoints.reached(.checkpoint)
                if withRecordsInFlight { failPoints.reached(.checkpointInFlight) }
            } else {
                writeCheckpoint(parts, from: index + 1, through: through, withRecordsInFlight: withRecordsInFlight)
            }
        })
    }
}
