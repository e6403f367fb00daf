import EventLoop
import SpotterCore
import SpotterPorts

/// Seqs given by the store (PostgreSQL, `SeqGivingLog`): a thread message's seq decided here is a guess from this
/// process's memory; the append numbers it after the thread's committed last seq under the batch's lock, and the
/// reply, the events and this state take the stored one. SQLite (one process, the only writer) keeps its seqs as
/// decided: the guess is always right there.
extension CoreRunner {
    static func makePipeline(log: any ChatStore, loop: Loop, maxInFlight: Int, hooks: CommitPipeline.Hooks) -> CommitPipeline {
        if let giving = log as? any SeqGivingLog {
            return CommitPipeline.storing(maxInFlight: maxInFlight, hooks: hooks) { records, done in
                giving.appendGivingSeqs(records, completion: loop.completion { (result: Result<[ChatRecord], any Error>) in done(result) })
            }
        }
        return CommitPipeline(maxInFlight: maxInFlight, hooks: hooks) { records, done in
            log.append(records, completion: loop.completion { (result: Result<[Int64], any Error>) in done(result) })
        }
    }

    /// A committed batch whose thread messages the store numbered otherwise than decided (another process's
    /// message took the guessed seq first): the stored record is applied to the state, so the thread's last seq,
    /// preview, the writer's read position and the idempotency window (which answers the newest seq of a key)
    /// hold the stored seq. Applying is monotone: the guess applied at decision time is overtaken, never undone.
    ///
    /// A seq given *below* its guess means this process's memory of the thread ran ahead of the log (a guess the
    /// log never stored stayed applied): monotone applying cannot take it back, and the thread's next session
    /// change, which keeps its guess, would leave a gap. Such threads are set back from the store, as after a
    /// failed append (writes wait for it, `unavailable`, a moment).
    func settleSeqs(decided: [ChatRecord], stored: [ChatRecord]) {
        guard decided.count == stored.count else { return }
        var ahead: Set<Int64> = []
        for (guess, record) in zip(decided, stored) where guess.seq != record.seq && record.isThreadMessage {
            metrics.seqsRenumbered.increment()
            if record.seq < guess.seq { ahead.insert(record.threadNo) }
            core.settle(guess, as: record)
        }
        guard !ahead.isEmpty else { return }
        logger.warning("thread seqs ran ahead of the log; setting them back from the store", metadata: ["threads": "\(ahead.count)"])
        pipeline.recovering = true
        recovery.threads.formUnion(ahead)
        recoverWhenQuiet()
    }
}
