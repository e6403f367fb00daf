/// Seqs given by the store (a cluster on PostgreSQL, `SeqGivingLog`): the seq a thread message was decided with is
/// a guess from this core's memory, and the committed record may hold another (a message of another process took
/// the guess first). Before such a batch is applied (`apply(_:origin: .here)`), the core takes the stored seq.
extension CoachingCore {
    /// `stored` is `guess` as committed, with the seq the store gave it. The chat state applies it (monotone:
    /// the thread's last seq, preview, the writer's read position and the idempotency window, which answers a
    /// key's newest seq, move to the stored seq); a session's body made for the guess is filed under the stored
    /// seq, where `apply` looks for it.
    public mutating func settle(_ guess: ChatRecord, as stored: ChatRecord) {
        guard guess.seq != stored.seq, stored.isThreadMessage else { return }
        if let made = madeSessions.removeValue(forKey: MadeSession(threadNo: guess.threadNo, seq: guess.seq)) {
            madeSessions[MadeSession(threadNo: stored.threadNo, seq: stored.seq)] = made
        }
        chat.apply(stored)
    }
}
