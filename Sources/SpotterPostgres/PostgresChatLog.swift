import FoundationEssentials
import Logging
import Synchronization
import SpotterCore
import SpotterProtocol
import SpotterPorts

/// The log on PostgreSQL, behind the same port as the SQLite engine (`ChatLogEngine`) and held to the same
/// conformance suite. Appends go through one writer thread (`PostgresWriter`: group commit, one transaction per
/// batch, positions in commit order across every process that writes to the database); a record is durable in
/// PostgreSQL when its completion runs. Reads that must see every earlier append (a retry's original, a thread's
/// recent sends, a client's monthly count) run on the writer, in order; the others (history, resume, load) on a
/// small pool of reader connections, from any thread but the loop's.
public final class PostgresChatLog: ChatStore {
    public let store: PostgresStore
    var writer: PostgresWriter { store.writer }
    private var readers: PGReaderPool { store.readers }
    /// Set by a failed append; later appends fail at once (their seqs were given out after the lost ones).
    let halt = AppendHalt()
    /// The position the checkpoint being written includes (set by its first part, saved by its last).
    private let checkpointMark = Mutex<Int64>(0)

    public init(store: PostgresStore) {
        self.store = store
    }

    // MARK: - Appends (writer thread, in order)

    public func append(_ records: [ChatRecord], completion: @escaping @Sendable (Result<[Int64], any Error>) -> Void) {
        let ticket = halt.ticket()
        writer.submit({ [self] batch -> [Int64] in try halt.run(ticket) { try PostgresChatLog.insert(batch, records) } },
                      completion: halt.guarding(completion))
    }

    public func resume() {
        halt.resume()
    }

    /// One statement for any number of rows: ten arrays, one per column, zipped by `unnest` and prepared once
    /// per connection (a multi-row VALUES list is parsed and planned anew for every batch, which cost PostgreSQL
    /// more than the rows themselves).
    private static let insertSQL = """
        INSERT INTO log (pos, kind, threadNo, side, seq, a, b, ref, body, at)
        SELECT * FROM unnest($1::bigint[], $2::smallint[], $3::bigint[], $4::smallint[], $5::bigint[], $6::bigint[],
                             $7::bigint[], $8::text[], $9::text[], $10::bigint[])
        """

    static func insert(_ batch: PGBatch, _ records: [ChatRecord]) throws -> [Int64] {
        guard let positions = try batch.takePositions(records.count) else { return [] }
        let columns = records.map(\.content.columns)
        try batch.connection.execPrepared(insertSQL, [
            array(Array(positions)), array(columns.map(\.kind)), array(records.map(\.threadNo)),
            array(records.map(\.side.rawValue)), array(records.map(\.seq)), array(columns.map(\.a)), array(columns.map(\.b)),
            textArray(columns.map(\.ref)), textArray(columns.map(\.body)), array(records.map(\.at)),
        ])
        for (index, record) in zip(positions, records) {
            if let session = record.content.session { try holdSlots(batch.connection, session) }
            if record.content.change != nil || record.content.erasure != nil {
                // An edit or a delete rewrites its message in the same transaction.
                var placed = record
                placed.pos = index
                try MessageForgetting.apply(PGSQLDatabase(batch.connection), placed)
            }
        }
        return Array(positions)
    }

    /// What `session_slot` needs of a session record's body: the session as it now stands.
    private struct SlotBody: Decodable {
        struct Session: Decodable {
            let id: String
            let coach_id: String
            let client_id: String
            let start: Int64
            let duration_minutes: Int64
            let status: String
        }
        let session: Session
    }

    /// Sets the session's slots to what the record says it now holds: both participants' time while it holds its
    /// time, nothing otherwise. An overlap with another session of either participant fails the append
    /// (SQLSTATE 23P01, exclusion violation).
    static func holdSlots(_ connection: PGConnection, _ record: SessionRecord) throws {
        // A body that is no session (none is, in the log the server writes) holds nothing, as a start's
        // `LoadedChat.sessions` skips it.
        guard let stored = try? JSONDecoder().decode(SlotBody.self, from: Data(record.json.utf8)) else { return }
        let session = stored.session
        try connection.exec("DELETE FROM sessionSlot WHERE sessionId = $1", [session.id])
        guard SessionStatus(rawValue: session.status)?.holdsTime == true else { return }
        let end = session.start + session.duration_minutes * 60
        try connection.exec("""
            INSERT INTO sessionSlot (sessionId, userId, during)
            VALUES ($1, $2, int8range($4, $5)), ($1, $3, int8range($4, $5))
            """, [session.id, session.coach_id, session.client_id, String(session.start), String(end)])
    }

    public func checkpoint(_ snapshots: [ThreadSnapshot], first: Bool, last: Bool, through: Int64?,
                           completion: @escaping @Sendable (Result<Int64, any Error>) -> Void) {
        writer.submit({ [self] batch -> Int64 in
            let connection = batch.connection
            if first {
                let committed = try PostgresChatLog.lastPosition(connection)
                let mark = min(committed, through ?? committed)
                checkpointMark.withLock { $0 = mark }
            }
            try PostgresChatLog.saveViews(snapshots, connection)
            let mark = checkpointMark.withLock { $0 }
            if last {
                try connection.exec("UPDATE logCheckpoint SET pos = GREATEST(pos, $1) WHERE id = 1", [String(mark)])
            }
            return mark
        }, completion: completion)
    }

    /// The threads' views and receipts of one checkpoint part in two statements, whatever the number of threads.
    /// Views only move forward (a newer last seq, a higher receipt): in a cluster every process saves the threads
    /// it applied records to, each as far as it has followed the log, and a late save must not undo a newer one.
    /// Two statements:
    /// a statement per thread (as SQLite does, in process) cost a round trip each, and with thousands of busy
    /// threads a second the checkpoint took most of PostgreSQL's time (profiled: ≈110 rows per commit, 65 µs of
    /// PostgreSQL CPU per message in the chat scenario).
    static func saveViews(_ snapshots: [ThreadSnapshot], _ connection: PGConnection) throws {
        guard !snapshots.isEmpty else { return }
        try connection.execPrepared("""
            UPDATE thread t SET lastSeq = u.lastSeq, lastMessageAt = u.lastMessageAt, lastPreview = u.lastPreview,
                lastSenderId = CASE u.side WHEN 0 THEN t.coachId WHEN 1 THEN t.clientId END
            FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::text[], $5::int[]) AS u(no, lastSeq, lastMessageAt, lastPreview, side)
            WHERE t.no = u.no AND u.lastSeq >= t.lastSeq
            """, [array(snapshots.map(\.no)), array(snapshots.map(\.lastSeq)), array(snapshots.map(\.lastMessageAt)),
                  textArray(snapshots.map(\.lastPreview)), array(snapshots.map { $0.lastSide?.rawValue })])
        var receipts: [(no: Int64, side: Int64, delivered: Int64, read: Int64)] = []
        for snapshot in snapshots {
            for (side, delivered, read) in [(Side.coach, snapshot.coachDelivered, snapshot.coachRead),
                                            (Side.client, snapshot.clientDelivered, snapshot.clientRead)]
            where delivered > 0 || read > 0 {
                receipts.append((snapshot.no, side.rawValue, delivered, read))
            }
        }
        guard !receipts.isEmpty else { return }
        try connection.execPrepared("""
            INSERT INTO receipt (threadId, userId, deliveredSeq, readSeq)
            SELECT t.id, CASE u.side WHEN 0 THEN t.coachId ELSE t.clientId END, u.delivered, u.read
            FROM unnest($1::bigint[], $2::int[], $3::bigint[], $4::bigint[]) AS u(no, side, delivered, read)
            JOIN thread t ON t.no = u.no
            ON CONFLICT (threadId, userId) DO UPDATE SET deliveredSeq = GREATEST(receipt.deliveredSeq, excluded.deliveredSeq),
                readSeq = GREATEST(receipt.readSeq, excluded.readSeq)
            """, [array(receipts.map(\.no)), array(receipts.map(\.side)), array(receipts.map(\.delivered)),
                  array(receipts.map(\.read))])
    }

    public func message(threadNo: Int64, seq: Int64, completion: @escaping @Sendable (Result<ChatRecord?, any Error>) -> Void) {
        writer.submit({ batch in
            try PostgresChatLog.records(batch.connection.exec(
                "SELECT \(PostgresChatLog.columns) FROM log WHERE threadNo = $1 AND seq = $2 AND \(LogSQL.isMessage)", [String(threadNo), String(seq)])).first
        }, completion: completion)
    }

    public func recentSends(threadNo: Int64, limit: Int, completion: @escaping @Sendable (Result<[SentKey], any Error>) -> Void) {
        writer.submit({ batch in
            try PostgresChatLog.records(batch.connection.exec(
                "SELECT \(PostgresChatLog.columns) FROM log WHERE threadNo = $1 AND \(LogSQL.isMessage) ORDER BY seq DESC LIMIT $2", [String(threadNo), String(limit)]))
                .compactMap { record in
                    record.content.message.map { SentKey(side: record.side, clientMessageID: $0.clientMessageID, seq: record.seq) }
                }
        }, completion: completion)
    }

    public func sendsSince(threadNos: [Int64], side: Side, since: Int64,
                           completion: @escaping @Sendable (Result<Int, any Error>) -> Void) {
        writer.submit({ batch in
            Int(try batch.connection.exec("""
                SELECT COUNT(*) FROM log WHERE threadNo = ANY($1::bigint[]) AND \(LogSQL.isPersonsMessage) AND side = $2 AND at >= $3
                """, [PostgresChatLog.array(threadNos), String(side.rawValue), String(since)]).scalar ?? "0") ?? 0
        }, completion: completion)
    }

    // MARK: - Link changes (accounts and log in one transaction)

    public func createLink(clientID: String, coachID: String, threadID: String, now: Int64,
                           completion: @escaping @Sendable (Result<LinkOutcome<LinkView>, any Error>) -> Void) {
        linkChange(now: now, { db in
            try AccountStore.linkChange(db, clientID: clientID, coachID: coachID, threadID: threadID, now: now)
        }, completion: completion)
    }

    public func decideChange(requestID: String, approve: Bool, adminID: String, threadID: String, now: Int64,
                             completion: @escaping @Sendable (Result<LinkOutcome<ChangeRequestView>, any Error>) -> Void) {
        linkChange(now: now, { db in
            try AccountStore.linkChange(db, deciding: requestID, approve: approve, adminID: adminID, threadID: threadID, now: now)
        }, completion: completion)
    }

    /// Erases an account, logging the ended links (`ChatStore.eraseAccount`).
    public func eraseAccount(userID: String, now: Int64,
                             completion: @escaping @Sendable (Result<LinkOutcome<AccountStore.Erasure>, any Error>) -> Void) {
        linkChange(now: now, { db in try AccountStore.erase(db, userID: userID, now: now) }, completion: completion)
    }

    /// Runs a link change (the accounts' own SQL, which returns the threads whose link state changed) and
    /// appends a `link` record for each of those threads, in one transaction (as SQLite's `ChatLog.linkChange`).
    private func linkChange<Value: Sendable>(
        now: Int64, _ change: @escaping (any SQLDatabase) throws -> (Value, [String]),
        completion: @escaping @Sendable (Result<LinkOutcome<Value>, any Error>) -> Void
    ) {
        writer.submit({ batch -> LinkOutcome<Value> in
            let (value, threadIDs) = try change(PGSQLDatabase(batch.connection))
            let rows = try PostgresChatLog.threads(batch.connection, ids: threadIDs)
            var records: [ChatRecord] = []
            for row in rows {
                let seq = Int64(try batch.connection.execPrepared(
                    "SELECT COALESCE(MAX(seq), 0) FROM log WHERE threadNo = $1", [String(row.no)]).scalar ?? "0") ?? 0
                records.append(CoachingCore.linkRecord(threadNo: row.no, lastSeq: seq, active: row.active, now: now))
            }
            let positions = try PostgresChatLog.insert(batch, records)
            for index in records.indices { records[index].pos = positions[index] }
            return LinkOutcome(value: value, records: records, threads: rows, names: try PostgresChatLog.names(batch.connection, of: rows))
        }, completion: completion)
    }

    public func setLastSeen(userID: String, at: Int64) {
        writer.submit({ batch in
            try batch.connection.execPrepared(#"UPDATE "user" SET lastSeenAt = $1 WHERE id = $2"#, [String(at), userID])
            return ()
        }, completion: { _ in })
    }

    public func lastSeen(userIDs: [String]) throws -> [String: Int64] {
        guard !userIDs.isEmpty else { return [:] }
        return try readers.read { connection in
            var seen: [String: Int64] = [:]
            for row in try connection.exec(#"SELECT id, lastSeenAt FROM "user" WHERE id = ANY($1::text[]) AND lastSeenAt IS NOT NULL"#,
                                           [PostgresChatLog.textArray(userIDs)]).rows {
                if let id = row[0], let at = row[1].flatMap({ Int64($0) }) { seen[id] = at }
            }
            return seen
        }
    }

    public func threads(ids: [String]) throws -> (threads: [ThreadRow], names: [String: String]) {
        try readers.read { connection in
            let rows = try PostgresChatLog.threads(connection, ids: ids)
            return (rows, try PostgresChatLog.names(connection, of: rows))
        }
    }

    static func names(_ connection: PGConnection, of threads: [ThreadRow]) throws -> [String: String] {
        let users = Array(Set(threads.flatMap { [$0.coachID, $0.clientID] }))
        guard !users.isEmpty else { return [:] }
        var names: [String: String] = [:]
        for row in try connection.exec(#"SELECT id, fullName FROM "user" WHERE id = ANY($1::text[]) AND fullName IS NOT NULL"#,
                                       [textArray(users)]).rows {
            if let id = row[0], let name = row[1] { names[id] = name }
        }
        return names
    }

    // MARK: - Reads (reader connections; blocking, never on the loop)

    public func load() throws -> LoadedChat {
        try readers.read { connection in
            // One snapshot for every part, so the tail, the views and the sessions agree.
            try connection.exec("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            defer { _ = try? connection.exec("COMMIT") }
            let threads = try PostgresChatLog.threads(connection, ids: nil)
            let mark = try connection.exec("SELECT pos, resumeFloor FROM logCheckpoint WHERE id = 1")
            let checkpoint = Int64(mark.rows.first?[0] ?? "0") ?? 0
            let floor = Int64(mark.rows.first?[1] ?? "0") ?? 0
            let tail = try PostgresChatLog.records(connection.exec("SELECT \(PostgresChatLog.columns) FROM log WHERE pos > $1 ORDER BY pos", [String(checkpoint)]))
            let position = try PostgresChatLog.lastPosition(connection)
            let sessions = try PostgresChatLog.records(connection.exec("SELECT \(PostgresChatLog.columns) FROM log WHERE \(LogSQL.isSession) ORDER BY pos"))
            let coaching = try PostgresChatLog.records(connection.exec("SELECT \(PostgresChatLog.columns) FROM log WHERE \(LogSQL.isCoachingRecord) ORDER BY pos"))
            let meals = try connection.exec("SELECT threadNo, at FROM log WHERE \(LogSQL.isMealLog) AND \(LogSQL.isStanding) ORDER BY threadNo, pos").rows
                .map { (Int64($0[0] ?? "0") ?? 0, Int64($0[1] ?? "0") ?? 0) }
            var names: [String: String] = [:]
            for row in try connection.exec(#"SELECT id, fullName FROM "user" WHERE fullName IS NOT NULL"#).rows {
                if let id = row[0], let name = row[1] { names[id] = name }
            }
            var loaded = LoadedChat(threads: threads, names: names, tail: tail, resumeFloor: floor,
                                    sessions: LoadedChat.sessions(from: sessions), coaching: LoadedChat.coaching(from: coaching),
                                    mealTimes: LoadedChat.mealTimes(from: meals))
            loaded.position = max(position, checkpoint)
            return loaded
        }
    }

    public func records(threadNos: [Int64], after pos: Int64, limit: Int) throws -> [ChatRecord] {
        guard limit > 0, !threadNos.isEmpty else { return [] }
        return try readers.read { connection in
            try PostgresChatLog.records(connection.exec(
                "SELECT \(PostgresChatLog.columns) FROM log WHERE threadNo = ANY($1::bigint[]) AND pos > $2 ORDER BY pos LIMIT $3",
                [PostgresChatLog.array(threadNos), String(pos), String(limit)]))
        }
    }

    /// Every thread's records after `pos` (through `through`, if given), in log order, at most `limit`: what a
    /// process following the log reads to fill a gap or to catch up after a reconnect (`LogSequencer`).
    public func recordsAfter(_ pos: Int64, through: Int64? = nil, limit: Int) throws -> [ChatRecord] {
        guard limit > 0 else { return [] }
        return try readers.read { connection in
            try PostgresChatLog.records(connection.execPrepared(
                "SELECT \(PostgresChatLog.columns) FROM log WHERE pos > $1 AND pos <= $2 ORDER BY pos LIMIT $3",
                [String(pos), String(through ?? Int64.max), String(limit)]))
        }
    }

    public func history(threadNo: Int64, beforeSeq: Int64?, limit: Int) throws -> [ChatRecord] {
        guard limit > 0 else { return [] }
        return try readers.read { connection in
            try PostgresChatLog.records(connection.exec("""
                SELECT \(PostgresChatLog.columns) FROM log WHERE threadNo = $1 AND seq < $2 AND (\(LogSQL.isThreadMessage))
                ORDER BY seq DESC LIMIT $3
                """, [String(threadNo), String(beforeSeq ?? Int64.max), String(limit)]))
        }
    }

    public func meals(threadNos: [Int64], before: Int64?, limit: Int) throws -> [ChatRecord] {
        guard limit > 0, !threadNos.isEmpty else { return [] }
        return try readers.read { connection in
            try PostgresChatLog.records(connection.exec("""
                SELECT \(PostgresChatLog.columns) FROM log WHERE threadNo = ANY($1::bigint[]) AND \(LogSQL.isMealLog) AND \(LogSQL.isStanding) AND pos < $2
                ORDER BY pos DESC LIMIT $3
                """, [PostgresChatLog.array(threadNos), String(before ?? Int64.max), String(limit)]))
        }
    }

    public func activity(threadNos: [Int64], before: Int64?, limit: Int) throws -> [ChatRecord] {
        guard limit > 0, !threadNos.isEmpty else { return [] }
        return try readers.read { connection in
            try PostgresChatLog.records(connection.exec("""
                SELECT \(PostgresChatLog.columns) FROM log WHERE threadNo = ANY($1::bigint[]) AND \(LogSQL.isClientActivity) AND pos < $2
                ORDER BY pos DESC LIMIT $3
                """, [PostgresChatLog.array(threadNos), String(before ?? Int64.max), String(limit)]))
        }
    }

    // MARK: - Rows

    static func array(_ numbers: [Int64]) -> String {
        "{" + numbers.map(String.init).joined(separator: ",") + "}"
    }

    static func array(_ numbers: [Int64?]) -> String {
        "{" + numbers.map { $0.map(String.init) ?? "NULL" }.joined(separator: ",") + "}"
    }

    /// A text[] literal: every element quoted (backslash and double quote escaped), NULL for nil. PostgreSQL's
    /// text cannot hold NUL; the wire rules refuse it in every field already, this only keeps a stray one from
    /// failing a whole batch.
    static func textArray(_ texts: [String?]) -> String {
        var literal = "{"
        for (index, text) in texts.enumerated() {
            if index > 0 { literal += "," }
            guard let text else {
                literal += "NULL"
                continue
            }
            literal += "\""
            if !text.utf8.contains(where: { $0 == UInt8(ascii: "\\") || $0 == UInt8(ascii: "\"") || $0 == 0 }) {
                literal += text
                literal += "\""
                continue
            }
            for scalar in text.unicodeScalars {
                switch scalar {
                case "\\": literal += "\\\\"
                case "\"": literal += "\\\""
                case "\u{0}": continue
                default: literal.unicodeScalars.append(scalar)
                }
            }
            literal += "\""
        }
        return literal + "}"
    }

    /// The log's columns in the order `records` decodes them.
    static let columns = LogSQL.recordColumns

    static func records(_ answer: PGRows) -> [ChatRecord] {
        answer.rows.map { row in
            func number(_ index: Int) -> Int64 { Int64(row[index] ?? "0") ?? 0 }
            return ChatRecord(pos: number(0), threadNo: number(2), side: number(3), seq: number(4), at: number(9),
                              columns: ChatRecord.Columns(kind: number(1), a: number(5), b: number(6), ref: row[7], body: row[8]))
        }
    }

    /// Threads with their views (as SQLite's `ChatLog.threads`); all of them when `ids` is nil.
    /// Threads by number, with their participants' names: a follower's view of a thread another process linked.
    public func threads(nos: [Int64]) throws -> (threads: [ThreadRow], names: [String: String]) {
        guard !nos.isEmpty else { return ([], [:]) }
        return try readers.read { connection in try PostgresChatLog.threadsWithNames(connection, nos: nos) }
    }

    private static func threadsWithNames(_ connection: PGConnection, nos: [Int64]) throws -> ([ThreadRow], [String: String]) {
        let rows = try threads(connection, where: " WHERE t.no = ANY($1::bigint[])", [array(nos)])
        return (rows, try names(connection, of: rows))
    }

    /// The newest position of the log (0 when it is empty).
    static func lastPosition(_ connection: PGConnection) throws -> Int64 {
        Int64(try connection.exec("SELECT COALESCE(MAX(pos), 0) FROM log").scalar ?? "0") ?? 0
    }

    public func reloadThreads(nos: [Int64]) throws -> ReloadedThreads {
        try readers.read { connection in
            try connection.exec("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            defer { _ = try? connection.exec("COMMIT") }
            let (rows, names) = try PostgresChatLog.threadsWithNames(connection, nos: nos)
            let mark = Int64(try connection.exec("SELECT pos FROM logCheckpoint WHERE id = 1").scalar ?? "0") ?? 0
            let tail = try PostgresChatLog.records(connection.exec(
                "SELECT \(PostgresChatLog.columns) FROM log WHERE threadNo = ANY($1::bigint[]) AND pos > $2 ORDER BY pos",
                [PostgresChatLog.array(nos), String(mark)]))
            return ReloadedThreads(threads: rows, names: names, tail: tail)
        }
    }

    static func threads(_ connection: PGConnection, ids: [String]?) throws -> [ThreadRow] {
        guard let ids else { return try threads(connection, where: " ORDER BY t.createdAt, t.no", []) }
        return try threads(connection, where: " WHERE t.id = ANY($1::text[])", [textArray(ids)])
    }

    private static func threads(_ connection: PGConnection, where condition: String, _ parameters: [String?]) throws -> [ThreadRow] {
        let select = """
            SELECT t.id, t.no, t.coachId, t.clientId, t.createdAt, l.clientId IS NOT NULL AS active, t.lastSeq,
                   t.lastMessageAt, t.lastPreview, t.lastSenderId,
                   COALESCE(rc.deliveredSeq, 0), COALESCE(rc.readSeq, 0), COALESCE(rk.deliveredSeq, 0), COALESCE(rk.readSeq, 0),
                   COALESCE((SELECT pos FROM log WHERE threadNo = t.no ORDER BY seq DESC, pos DESC LIMIT 1), 0)
            FROM thread t
            LEFT JOIN coachClientLink l ON l.clientId = t.clientId AND l.coachId = t.coachId
            LEFT JOIN receipt rc ON rc.threadId = t.id AND rc.userId = t.coachId
            LEFT JOIN receipt rk ON rk.threadId = t.id AND rk.userId = t.clientId
            """
        return try connection.exec(select + condition, parameters).rows.map { row in
            func number(_ index: Int) -> Int64 { Int64(row[index] ?? "0") ?? 0 }
            let coachID = row[2] ?? ""
            return ThreadRow(id: row[0] ?? "", no: number(1), coachID: coachID, clientID: row[3] ?? "", createdAt: number(4),
                             active: row[5] == "t", lastSeq: number(6), lastMessageAt: row[7].flatMap { Int64($0) },
                             lastPreview: row[8], lastSide: row[9].map { $0 == coachID ? .coach : .client },
                             lastPos: number(14), coach: .init(delivered: number(10), read: number(11)),
                             client: .init(delivered: number(12), read: number(13)))
        }
    }
}

extension PostgresChatLog: FollowableLog {}

/// The log as its durable consumers read it (`ConsumableLog`): reads on the reader connections, saved positions
/// in `logConsumer` (migration "v4-log-consumers") through the one writer. `recordsAfter` is the follower's read:
/// positions are given under the append lock in commit order, so every position up to the newest is committed.
extension PostgresChatLog: ConsumableLog {
    public func newestPosition() throws -> Int64 {
        try readers.read { connection in try PostgresChatLog.lastPosition(connection) }
    }

    public func recordsAfter(_ pos: Int64, through: Int64?, limit: Int, kinds: Set<ChatRecord.Kind>) throws -> [ChatRecord] {
        guard limit > 0 else { return [] }
        return try readers.read { connection in
            try PostgresChatLog.records(connection.execPrepared(
                "SELECT \(PostgresChatLog.columns) FROM log WHERE pos > $1 AND pos <= $2 AND \(LogSQL.kindIn(kinds)) ORDER BY pos LIMIT $3",
                [String(pos), String(through ?? Int64.max), String(limit)]))
        }
    }

    public func consumerPosition(_ name: String) throws -> Int64? {
        try readers.read { connection in
            try connection.exec("SELECT pos FROM logConsumer WHERE name = $1", [name]).scalar.flatMap { Int64($0) }
        }
    }

    public func saveConsumerPosition(_ name: String, _ position: Int64) throws {
        try writer.perform({ batch in
            try batch.connection.execPrepared("""
                INSERT INTO logConsumer (name, pos) VALUES ($1, $2)
                ON CONFLICT (name) DO UPDATE SET pos = GREATEST(logConsumer.pos, excluded.pos)
                """, [name, String(position)])
            return ()
        }, afterCommit: { _ in })
    }
}
