import SpotterCore
import SpotterPorts

/// Seqs given by the database (`SeqGivingLog`, CLUSTER.md "Seqs given by the database"): every batch of every
/// process already runs under one advisory lock (`PostgresWriter.appendLock`) that orders positions, so under the
/// same lock the batch reads its threads' last committed message seqs (one statement, on `log_message_seq`) and
/// numbers its thread messages after them, in batch order. Two processes that guessed the same seq for one
/// thread both commit, one after the other; nothing is refused for a collision and the seqs stay 1…n.
extension PostgresChatLog: SeqGivingLog {
    public func appendGivingSeqs(_ records: [ChatRecord],
                                 completion: @escaping @Sendable (Result<[ChatRecord], any Error>) -> Void) {
        let ticket = halt.ticket()
        writer.submit({ [self] batch -> [ChatRecord] in
            try halt.run(ticket) {
                let numbered = try PostgresChatLog.numbered(records, batch.connection)
                let positions = try PostgresChatLog.insert(batch, numbered)
                var stored = numbered
                for index in stored.indices where index < positions.count { stored[index].pos = positions[index] }
                return stored
            }
        }, completion: halt.guarding(completion))
    }

    /// In one round trip (every statement here runs under the lock every batch of every process waits for, so a
    /// round trip more is a wait more for all of them, LoadTests/README.md "Issue 33 item 4"): rows (0, thread, last seq) — the last committed message seq of each
    /// thread, 0 for none — and rows (1, thread, client_message_id) — the batch's person's sends already stored
    /// with the same side among their thread's newest messages, as far back as a process's idempotency window
    /// reaches (`ChatState.windowSize`).
    ///
    /// Each part is a probe of `(threadNo, seq)` per thread or send whatever the plan's age: the statement is
    /// prepared once per connection, and a generic plan made while the log was small turned an EXISTS into a hash
    /// join over every message of the log (23 ms a batch at 40,000 messages; the first `cluster3` run with it acked
    /// 305 msgs/s at p50 10 s). The correlated MAX and the LATERAL with LIMIT cannot be planned that way (checked
    /// with EXPLAIN on a generic plan made while the table was empty, then filled).
    private static let checkSQL = """
        SELECT 0, u.no, COALESCE((SELECT MAX(seq) FROM log WHERE threadNo = u.no AND (\(LogSQL.isThreadMessage))), 0)::text
        FROM unnest($1::bigint[]) AS u(no)
        UNION ALL
        SELECT 1, s.no, l.ref FROM unnest($2::bigint[], $3::smallint[], $4::text[]) AS s(no, side, ref)
        CROSS JOIN LATERAL (
            SELECT ref FROM log WHERE threadNo = s.no
                AND seq > COALESCE((SELECT MAX(seq) FROM log WHERE threadNo = s.no AND (\(LogSQL.isThreadMessage))), 0) - \(ChatState.windowSize)
                AND \(LogSQL.isPersonsMessage) AND side = s.side AND ref = s.ref
            LIMIT 1) l
        """

    /// `records` with each person's message numbered after its thread's committed last seq (in order), and the
    /// other records of those threads (receipts, prompts: their seq is the thread's last seq when made) lowered
    /// to the thread's seq at their place in the batch. A send stored before throws `SeqGivingError.sentBefore`.
    static func numbered(_ records: [ChatRecord], _ connection: PGConnection) throws -> [ChatRecord] {
        // A session's system message keeps its guess, and so does every record of its thread in the batch: a
        // session changes state on what its process knew, and the thread's unique seq is what refuses a change
        // decided on a stale session (two processes acting on one session at once; the loser is set back from
        // the store and its client retries on the new state). Messages have no such state: any order is right.
        var keep: Set<Int64> = []
        for record in records where record.isThreadMessage {
            if case .session = record.content { keep.insert(record.threadNo) }
        }
        var nos: [Int64] = []
        for record in records where record.isThreadMessage && !keep.contains(record.threadNo) && !nos.contains(record.threadNo) {
            nos.append(record.threadNo)
        }
        guard !nos.isEmpty else { return records }
        let numberedThreads = Set(nos)
        let sends = records.compactMap { record -> (no: Int64, side: Int64, id: String)? in
            guard numberedThreads.contains(record.threadNo), let message = record.content.message, message.kind != .system,
                  !message.clientMessageID.isEmpty else { return nil }
            return (record.threadNo, record.side.rawValue, message.clientMessageID)
        }
        var last: [Int64: Int64] = [:]
        for row in try connection.execPrepared(checkSQL, [
            array(nos), array(sends.map(\.no)), array(sends.map(\.side)), textArray(sends.map(\.id)),
        ]).rows {
            guard let no = row[1].flatMap({ Int64($0) }) else { continue }
            if row[0] == "1" { throw SeqGivingError.sentBefore(threadNo: no, clientMessageID: row[2] ?? "") }
            last[no] = row[2].flatMap { Int64($0) } ?? 0
        }
        var numbered = records
        for index in numbered.indices {
            let no = numbered[index].threadNo
            guard let seq = last[no] else { continue }
            if numbered[index].isThreadMessage {
                numbered[index].seq = seq + 1
                last[no] = seq + 1
            } else if numbered[index].seq > seq {
                numbered[index].seq = seq
            }
        }
        return numbered
    }
}
