import SpotterCore

/// A log that gives a thread message its seq inside the append (PostgreSQL, shared by a cluster's processes):
/// under the batch's lock the append numbers each thread message after its thread's last committed seq, in the
/// batch's order, and answers with the records as stored. The seq a process decided was a guess from its own
/// memory; two processes guessing the same seq in one thread 1 ms apart both land, one after the other, instead
/// of the second being refused (`CLUSTER.md`, "Seqs given by the database"). SQLite's single writer decides seqs
/// in memory, alone, and does not take this path.
public protocol SeqGivingLog: AnyObject, Sendable {
    /// Appends `records` as `ChatStore.append` does and answers with them as stored: positions filled in, each
    /// message's seq the one the database gave (the others' as decided, lowered to their thread's last seq where
    /// the guess ran ahead of it). A thread whose session system message is in the batch keeps every guess of
    /// the batch: a session acted on from a stale view must still be refused by the thread's unique seq. A send whose (thread, side, client_message_id) is already among its
    /// thread's recent messages fails the append (`SeqGivingError.sentBefore`): a retry that reached another
    /// process before that process followed the original must not be stored twice.
    func appendGivingSeqs(_ records: [ChatRecord], completion: @escaping @Sendable (Result<[ChatRecord], any Error>) -> Void)
}

public enum SeqGivingError: Error, Equatable {
    /// A send of the batch is already stored in its thread (another process's retry raced its original): nothing
    /// of the batch is stored, and the client's retry finds the original once this process has followed it.
    case sentBefore
    /// A thread keeping its guessed seqs (a session's system message in the batch) guessed past its last
    /// committed message seq: stored, it would leave a gap. Nothing of the batch is stored; the process's memory
    /// ran ahead of the log and is set back from the store.
    case guessAhead
}
