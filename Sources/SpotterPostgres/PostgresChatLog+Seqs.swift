import SpotterCore
import SpotterPorts

/// Seqs given by the database (`SeqGivingLog`, CLUSTER.md "Seqs given by the database"): every batch of every
/// process already runs under one advisory lock (`PostgresWriter.appendLock`) that orders positions, so under the
/// same lock the batch's INSERT itself reads its threads' last committed message seqs (on `log_message_seq`) and
/// numbers its thread messages after them, in batch order — no round trip more under the lock. Two processes that guessed the same seq for one
/// thread both commit, one after the other; nothing is refused for a collision and the seqs stay 1…n.
extension PostgresChatLog: SeqGivingLog {
    public func appendGivingSeqs(_ records: [ChatRecord],
                                 completion: @escaping @Sendable (Result<[ChatRecord], any Error>) -> Void) {
        let ticket = halt.ticket()
        writer.submit({ [self] batch -> [ChatRecord] in
            try halt.run(ticket) {
                try PostgresChatLog.insertNumbered(batch, records)
            }
        }, completion: halt.guarding(completion))
    }

    /// The threads whose thread messages the database numbers in this batch: every thread with a message in it,
    /// but a thread whose session system message is in the batch keeps every guess of the batch — a session
    /// changes state on what its process knew, and the thread's unique seq is what refuses a change decided on a
    /// stale session (two processes acting on one session at once: the loser is set back from the store and its
    /// client retries on the new state). Messages have no such state: any order is right.
    static func numberedThreads(_ records: [ChatRecord]) -> Set<Int64> {
        var keep: Set<Int64> = []
        var numbered: Set<Int64> = []
        for record in records where record.isThreadMessage {
            if case .session = record.content { keep.insert(record.threadNo) } else { numbered.insert(record.threadNo) }
        }
        return numbered.subtracting(keep)
    }

    /// The batch's records in one statement (every statement here runs under the lock every batch of every process
    /// waits for, so a round trip more is a wait more for all of them: LoadTests/README.md, "Issue 33 item 4"):
    /// - `base`: each numbered thread's last committed message seq (0 for none);
    /// - `sent`: a person's send of the batch already stored with the same side and client_message_id among its
    ///   thread's newest messages, as far back as a process's idempotency window reaches (`ChatState.windowSize`):
    ///   then nothing is inserted;
    /// - each thread message of a numbered thread takes its thread's last seq plus its rank in the batch; the
    ///   thread's other records (receipts, prompts: made with the thread's last seq) are lowered to the seq at
    ///   their place; every other record keeps its seq.
    /// Each probe of `log` is one index probe per thread or send whatever the plan's age: the statement is
    /// prepared once per connection, and a generic plan made while the log was small turned an EXISTS over the
    /// batch into a hash join over every message of the log (23 ms a batch at 40,000 messages; `cluster3` acked
    /// 305 msgs/s at p50 10 s). A correlated MAX and a LATERAL with LIMIT cannot be planned that way (checked with
    /// EXPLAIN on a generic plan made while the table was empty, then filled).
    private static let numberedInsertSQL = """
        WITH r AS (
            SELECT * FROM unnest($1::bigint[], $2::smallint[], $3::bigint[], $4::smallint[], $5::bigint[], $6::bigint[],
                                 $7::bigint[], $8::text[], $9::text[], $10::bigint[], $11::boolean[])
                WITH ORDINALITY AS r(pos, kind, threadNo, side, seq, a, b, ref, body, at, renumber, ord)
        ), base AS (
            SELECT t.no, COALESCE((SELECT MAX(seq) FROM log WHERE threadNo = t.no AND (\(LogSQL.isThreadMessage))), 0) AS last
            FROM (SELECT DISTINCT threadNo AS no FROM r WHERE renumber) t
        ), sent AS (
            SELECT 1 FROM r JOIN base ON base.no = r.threadNo
            CROSS JOIN LATERAL (SELECT 1 FROM log WHERE threadNo = r.threadNo AND seq > base.last - \(ChatState.windowSize)
                                AND \(LogSQL.isPersonsMessage) AND side = r.side AND ref = r.ref LIMIT 1) l
            WHERE r.kind = \(ChatRecord.Kind.message.rawValue) AND r.a != \(MessageKind.system.rawValue) AND r.ref <> ''
            LIMIT 1
        ), numbered AS (
            SELECT r.*, base.last AS last,
                   base.last + SUM(CASE WHEN (\(LogSQL.isThreadMessage)) THEN 1 ELSE 0 END)
                       OVER (PARTITION BY r.threadNo ORDER BY r.ord) AS running
            FROM r LEFT JOIN base ON base.no = r.threadNo
        )
        INSERT INTO log (pos, kind, threadNo, side, seq, a, b, ref, body, at)
        SELECT pos, kind, threadNo, side,
               CASE WHEN last IS NULL THEN seq WHEN (\(LogSQL.isThreadMessage)) THEN running ELSE LEAST(seq, running) END,
               a, b, ref, body, at
        FROM numbered WHERE NOT EXISTS (SELECT 1 FROM sent) ORDER BY ord
        RETURNING pos, seq
        """

    /// The thread messages of a thread that keeps its guesses (a session's system message in the batch) must
    /// follow the thread's last committed message seq exactly: a unique seq refuses a guess that is taken, and
    /// this refuses one that runs ahead, which stored as guessed would leave a gap (history `[4, 3, 1]`, found by
    /// the sessions suite on three processes). A process's memory runs ahead of the log when a message it guessed
    /// was numbered lower by the database (`CoreRunner.settleSeqs` sets such a thread back). Only batches holding
    /// a session change pay this round trip; the append fails (`SeqGivingError.guessAhead`), the process sets the
    /// state back from the store, and the client's retry is decided on it.
    static func checkKeptGuesses(_ connection: PGConnection, _ records: [ChatRecord], renumbered: Set<Int64>) throws {
        var guesses: [Int64: [Int64]] = [:]
        for record in records where record.isThreadMessage && !renumbered.contains(record.threadNo) {
            guesses[record.threadNo, default: []].append(record.seq)
        }
        guard !guesses.isEmpty else { return }
        for (thread, seqs) in guesses.sorted(by: { $0.key < $1.key }) {
            let row = try connection.exec(
                "SELECT COALESCE(MAX(seq), 0) FROM log WHERE threadNo = $1 AND (\(LogSQL.isThreadMessage))", [String(thread)]).rows.first
            let last = row?[0].flatMap { Int64($0) } ?? 0
            // A guess at or below the last is refused by the thread's unique seq, as before.
            if let first = seqs.first, first > last + 1 { throw SeqGivingError.guessAhead }
            for (earlier, later) in zip(seqs, seqs.dropFirst()) where later > earlier + 1 { throw SeqGivingError.guessAhead }
        }
    }

    /// Inserts the batch with the seqs the database gives (`numberedInsertSQL`) and answers with the records as
    /// stored. Then, as `insert`: the sessions' slots and the rewritten messages of edits and deletes.
    static func insertNumbered(_ batch: PGBatch, _ records: [ChatRecord]) throws -> [ChatRecord] {
        guard let positions = try batch.takePositions(records.count) else { return [] }
        let renumbered = numberedThreads(records)
        try checkKeptGuesses(batch.connection, records, renumbered: renumbered)
        let columns = records.map(\.content.columns)
        let rows = try batch.connection.execPrepared(numberedInsertSQL, [
            array(Array(positions)), array(columns.map(\.kind)), array(records.map(\.threadNo)),
            array(records.map(\.side.rawValue)), array(records.map(\.seq)), array(columns.map(\.a)), array(columns.map(\.b)),
            textArray(columns.map(\.ref)), textArray(columns.map(\.body)), array(records.map(\.at)),
            "{" + records.map { renumbered.contains($0.threadNo) ? "t" : "f" }.joined(separator: ",") + "}",
        ]).rows
        guard rows.count == records.count else { throw SeqGivingError.sentBefore }
        var seqs: [Int64: Int64] = [:]
        for row in rows {
            if let pos = row[0].flatMap({ Int64($0) }), let seq = row[1].flatMap({ Int64($0) }) { seqs[pos] = seq }
        }
        var stored = records
        for (index, pos) in zip(stored.indices, positions) {
            stored[index].pos = pos
            stored[index].seq = seqs[pos] ?? stored[index].seq
        }
        for record in stored {
            if let session = record.content.session { try holdSlots(batch.connection, session) }
            if record.content.change != nil || record.content.erasure != nil {
                // An edit or a delete rewrites its message in the same transaction.
                try MessageForgetting.apply(PGSQLDatabase(batch.connection), record)
            }
        }
        return stored
    }
}
