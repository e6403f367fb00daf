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

    /// The last committed message seq of each thread (0 for none), read under the append lock. A correlated MAX:
    /// one backward probe of `log_message_seq` per thread whatever the plan's age (checked with EXPLAIN on a
    /// generic plan made while the table was empty).
    private static let lastSeqsSQL = """
        SELECT u.no, COALESCE((SELECT MAX(seq) FROM log WHERE threadNo = u.no AND (\(LogSQL.isThreadMessage))), 0)
        FROM unnest($1::bigint[]) AS u(no)
        """

    /// Which of the batch's sends (a person's) are stored already (same thread, side and client_message_id) among
    /// their thread's newest messages — as far back as a process's idempotency window reaches
    /// (`ChatState.windowSize`). A LATERAL with LIMIT, not EXISTS: the statement is prepared once per connection,
    /// and a generic plan made while the log was small turned EXISTS into a hash join over every message of the
    /// log (23 ms a batch at 40,000 messages, under the lock every batch of every process waits for — the first
    /// `cluster3` run with it acked 305 msgs/s at p50 10 s); LIMIT keeps it one index probe per send.
    private static let sentBeforeSQL = """
        SELECT l.threadNo, l.ref FROM unnest($1::bigint[], $2::smallint[], $3::text[], $4::bigint[]) AS u(no, side, ref, floor)
        CROSS JOIN LATERAL (SELECT threadNo, ref FROM log WHERE threadNo = u.no AND seq > u.floor AND \(LogSQL.isPersonsMessage)
                            AND side = u.side AND ref = u.ref LIMIT 1) l
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
        var last: [Int64: Int64] = [:]
        for row in try connection.execPrepared(lastSeqsSQL, [array(nos)]).rows {
            if let no = row[0].flatMap({ Int64($0) }), let seq = row[1].flatMap({ Int64($0) }) { last[no] = seq }
        }
        try refuseSentBefore(records, last, connection)
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

    private static func refuseSentBefore(_ records: [ChatRecord], _ last: [Int64: Int64], _ connection: PGConnection) throws {
        let sends = records.compactMap { record -> (no: Int64, side: Int64, id: String)? in
            guard let message = record.content.message, message.kind != .system, !message.clientMessageID.isEmpty else { return nil }
            return (record.threadNo, record.side.rawValue, message.clientMessageID)
        }
        guard !sends.isEmpty else { return }
        let floors = sends.map { max(0, (last[$0.no] ?? 0) - Int64(ChatState.windowSize)) }
        let found = try connection.execPrepared(sentBeforeSQL, [
            array(sends.map(\.no)), array(sends.map(\.side)), textArray(sends.map(\.id)), array(floors),
        ]).rows
        if let row = found.first {
            throw SeqGivingError.sentBefore(threadNo: row[0].flatMap { Int64($0) } ?? 0, clientMessageID: row[1] ?? "")
        }
    }
}
