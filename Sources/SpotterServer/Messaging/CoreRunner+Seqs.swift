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
    /// hold the stored seq. Applying is monotone: the guess applied at decision time is overtaken, never undone
    /// below what another record set. Seqs given are never below the guess (the store's last seq is at least
    /// everything this process had applied when it guessed).
    func settleSeqs(decided: [ChatRecord], stored: [ChatRecord]) {
        guard decided.count == stored.count else { return }
        for (guess, record) in zip(decided, stored) where guess.seq != record.seq && record.isThreadMessage {
            metrics.seqsRenumbered.increment()
            core.settle(guess, as: record)
        }
    }
}
