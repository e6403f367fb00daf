import GRDB
import GRDBSQLite
import Synchronization
import FoundationEssentials
import SpotterCore
import SpotterProtocol
import SpotterPorts

/// The log on SQLite: appends go through the store's one writer thread (group commit), so a record is
/// durable when its completion runs, and records get their positions in commit order. Reads that must see
/// every append made before them (a retry's original, a thread's recent sends) run on the writer too, in
/// order; the others (history, resume, load) on GRDB's reader pool, from any thread but the loop's.
public final class ChatLog: Sendable {
    public let store: Store
    public let writer: StoreWriter
    /// Set by a failed append; later appends fail at once (their seqs were given out after the lost ones).
    private let halt = AppendHalt()
    /// The position the checkpoint being written includes (set by its first part, saved by its last).
    private let checkpointMark = Mutex<Int64>(0)

    public init(store: Store, writer: StoreWriter) {
        self.store = store
        self.writer = writer
    }

    // MARK: - Appends (writer thread, in order)

    /// Appends records in order; the completion (on the writer thread) gets their positions once committed.
    public func append(_ records: [ChatRecord], completion: @escaping @Sendable (Result<[Int64], any Error>) -> Void) {
        let ticket = halt.ticket()
        writer.submit({ [self] db -> [Int64] in try halt.run(ticket) { try insert(db, records) } },
                      completion: halt.guarding(completion))
    }

    /// After a failed append, once the owner has rebuilt its state from the store.
    public func resume() {
        halt.resume()
    }

    private func insert(_ db: Database, _ records: [ChatRecord]) throws -> [Int64] {
        guard !records.isEmpty else { return [] }
        let statement = try DirectStatement(db, sql: """
            INSERT INTO log (kind, threadNo, side, seq, a, b, ref, body, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        var positions: [Int64] = []
        positions.reserveCapacity(records.count)
        for record in records {
            let columns = record.content.columns
            statement.bind(1, columns.kind)
            statement.bind(2, record.threadNo)
            statement.bind(3, record.side.rawValue)
            statement.bind(4, record.seq)
            statement.bind(5, columns.a)
            statement.bind(6, columns.b)
            statement.bind(7, columns.ref)
            statement.bind(8, columns.body)
            statement.bind(9, record.at)
            try statement.run()
            positions.append(db.lastInsertedRowID)
        }
        // An edit or a delete rewrites its message in the same transaction.
        for (index, record) in records.enumerated() where record.content.change != nil || record.content.erasure != nil {
            var placed = record
            placed.pos = positions[index]
            try MessageForgetting.apply(GRDBSQLDatabase(db), placed)
        }
        return positions
    }

    /// Saves views of threads that changed, in parts so that no single writer job holds the appends up for
    /// long. The first part (`first`) notes the position the snapshots include (every record appended before
    /// it: the caller hands the parts over after its appends); the last part (`last`) saves that position as
    /// the mark a start replays after. A crash between parts leaves the old mark: the replay then covers
    /// records some saved views include already, which `ChatState.apply` allows (it is monotone).
    public func checkpoint(_ snapshots: [ThreadSnapshot], first: Bool, last: Bool, through: Int64?,
                           completion: @escaping @Sendable (Result<Int64, any Error>) -> Void) {
        writer.submit({ [self] db -> Int64 in
            if first {
                let committed = try Int64.fetchOne(db.cachedStatement(sql: "SELECT COALESCE(MAX(pos), 0) FROM log")) ?? 0
                let mark = min(committed, through ?? committed)
                checkpointMark.withLock { $0 = mark }
            }
            let view = try DirectStatement(db, sql: """
                UPDATE thread SET lastSeq = ?, lastMessageAt = ?, lastPreview = ?,
                    lastSenderId = CASE ? WHEN 0 THEN coachId WHEN 1 THEN clientId END WHERE no = ?
                """)
            let receipt = try DirectStatement(db, sql: """
                INSERT INTO threadReceipt (side, deliveredSeq, readSeq, threadNo) VALUES (?, ?, ?, ?)
                ON CONFLICT(threadNo, side) DO UPDATE SET deliveredSeq = excluded.deliveredSeq, readSeq = excluded.readSeq
                """)
            // In number order: the views' rows and the receipts' (both kept in that order) are written page by page
            // rather than one page per thread (`ReceiptSchema`).
            for snapshot in snapshots.sorted(by: { $0.no < $1.no }) {
                view.bind(1, snapshot.lastSeq)
                view.bind(2, snapshot.lastMessageAt)
                view.bind(3, snapshot.lastPreview)
                view.bind(4, snapshot.lastSide?.rawValue)
                view.bind(5, snapshot.no)
                try view.run()
                for (side, delivered, read) in [(Side.coach, snapshot.coachDelivered, snapshot.coachRead),
                                                (Side.client, snapshot.clientDelivered, snapshot.clientRead)]
                where delivered > 0 || read > 0 {
                    receipt.bind(1, side.rawValue)
                    receipt.bind(2, delivered)
                    receipt.bind(3, read)
                    receipt.bind(4, snapshot.no)
                    try receipt.run()
                }
            }
            let mark = checkpointMark.withLock { $0 }
            if last {
                try db.cachedStatement(sql: "UPDATE logCheckpoint SET pos = MAX(pos, ?) WHERE id = 1").execute(arguments: [mark])
            }
            return mark
        }, completion: completion)
    }

    /// The message with this seq, read after every append made before this call (a retry's original).
    public func message(threadNo: Int64, seq: Int64, completion: @escaping @Sendable (Result<ChatRecord?, any Error>) -> Void) {
        writer.submit({ db in
            try RecordQuery.fetchAll(db, sql: "SELECT \(LogSQL.recordColumns) FROM log WHERE threadNo = ? AND seq = ? AND \(LogSQL.isMessage)",
                                     arguments: [threadNo, seq], limit: 1).first
        }, completion: completion)
    }

    /// The thread's newest `limit` messages as (side, client_message_id, seq), read after every append made
    /// before this call (a cold thread's idempotency window).
    public func recentSends(threadNo: Int64, limit: Int,
                            completion: @escaping @Sendable (Result<[SentKey], any Error>) -> Void) {
        writer.submit({ db in
            try Row.fetchAll(db.cachedStatement(sql: """
                SELECT side, ref, seq FROM log WHERE threadNo = ? AND \(LogSQL.isMessage) ORDER BY seq DESC LIMIT ?
                """), arguments: [threadNo, limit]).map { row in
                SentKey(side: Side(rawValue: row["side"]) ?? .client, clientMessageID: row["ref"] ?? "", seq: row["seq"])
            }
        }, completion: completion)
    }

    /// How many messages `side` wrote (system messages of services aside) at or after `since` (Unix seconds) in these threads, read after every
    /// append made before this call (a client's monthly message count, `--tiers`).
    public func sendsSince(threadNos: [Int64], side: Side, since: Int64,
                           completion: @escaping @Sendable (Result<Int, any Error>) -> Void) {
        writer.submit({ db in
            var count = 0
            let statement = try db.cachedStatement(sql: """
                SELECT COUNT(*) FROM log WHERE threadNo = ? AND \(LogSQL.isPersonsMessage) AND side = ? AND at >= ?
                """)
            for no in threadNos {
                count += try Int.fetchOne(statement, arguments: [no, side.rawValue, since]) ?? 0
            }
            return count
        }, completion: completion)
    }

    /// A client picks their first coach: the link, the thread if the pair has none, and a `link` record, in
    /// one transaction. Throws `AccountStoreError` as `AccountStore.createLink` does.
    public func createLink(clientID: String, coachID: String, threadID: String, now: Int64,
                           completion: @escaping @Sendable (Result<LinkOutcome<LinkView>, any Error>) -> Void) {
        linkChange(now: now, { db in
            try AccountStore.linkChange(GRDBSQLDatabase(db), clientID: clientID, coachID: coachID, threadID: threadID, now: now)
        }, completion: completion)
    }

    /// An admin decides a coach change. Approved, every thread between the client and the old or the new
    /// coach gets a `link` record (the old one inactive, the new one active).
    public func decideChange(requestID: String, approve: Bool, adminID: String, threadID: String, now: Int64,
                             completion: @escaping @Sendable (Result<LinkOutcome<ChangeRequestView>, any Error>) -> Void) {
        linkChange(now: now, { db in
            try AccountStore.linkChange(GRDBSQLDatabase(db), deciding: requestID, approve: approve, adminID: adminID,
                                        threadID: threadID, now: now)
        }, completion: completion)
    }

    /// Erases an account, logging the ended links (`ChatStore.eraseAccount`).
    public func eraseAccount(userID: String, now: Int64,
                             completion: @escaping @Sendable (Result<LinkOutcome<AccountStore.Erasure>, any Error>) -> Void) {
        linkChange(now: now, { db in try AccountStore.erase(GRDBSQLDatabase(db), userID: userID, now: now) }, completion: completion)
    }

    /// Runs a link change (`change` makes links and threads and returns the threads whose link state changed)
    /// and appends a `link` record for each of those threads, in one transaction.
    func linkChange<Value: Sendable>(
        now: Int64, _ change: @escaping @Sendable (Database) throws -> (Value, [String]),
        completion: @escaping @Sendable (Result<LinkOutcome<Value>, any Error>) -> Void
    ) {
        writer.submit({ [self] db -> LinkOutcome<Value> in
            let (value, threadIDs) = try change(db)
            let rows = try ChatLog.threads(db, ids: threadIDs)
            var records: [ChatRecord] = []
            for row in rows {
                let seq = try Int64.fetchOne(db.cachedStatement(sql: "SELECT COALESCE(MAX(seq), 0) FROM log WHERE threadNo = ?"),
                                             arguments: [row.no]) ?? 0
                records.append(CoachingCore.linkRecord(threadNo: row.no, lastSeq: seq, active: row.active, now: now))
            }
            let positions = try insert(db, records)
            for index in records.indices { records[index].pos = positions[index] }
            return LinkOutcome(value: value, records: records, threads: rows, names: try ChatLog.names(db, of: rows))
        }, completion: completion)
    }

    /// Records when the user was last seen (unix seconds).
    public func setLastSeen(userID: String, at: Int64) {
        writer.submit({ db in
            try db.cachedStatement(sql: #"UPDATE "user" SET lastSeenAt = ? WHERE id = ?"#).execute(arguments: [at, userID])
        }, completion: { _ in })
    }

    // MARK: - Reads (reader pool; blocking, never on the loop)

    /// Everything a start needs (see `LoadedChat`).
    public func load() throws -> LoadedChat {
        try store.writer.read { db in
            let threads = try ChatLog.threads(db, ids: nil)
            let mark = try Row.fetchOne(db, sql: "SELECT pos, resumeFloor FROM logCheckpoint WHERE id = 1")
            let checkpoint: Int64 = mark?["pos"] ?? 0
            let tail = try RecordQuery.fetchAll(db, sql: "SELECT \(LogSQL.recordColumns) FROM log WHERE pos > ? AND \(LogSQL.isRecord) ORDER BY pos",
                                                arguments: [checkpoint])
            // Every session record, through the partial index `log_session` (no scan of the messages).
            let sessionRecords = try RecordQuery.fetchAll(db, sql: "SELECT \(LogSQL.recordColumns) FROM log WHERE \(LogSQL.isSession) ORDER BY pos",
                                                          arguments: [])
            // The coaching record and the meal logs' times, each through its own partial index.
            let records = try RecordQuery.fetchAll(db, sql: "SELECT \(LogSQL.recordColumns) FROM log WHERE \(LogSQL.isCoachingRecord) ORDER BY pos",
                                                   arguments: [])
            let meals = try Row.fetchAll(db, sql: "SELECT threadNo, at FROM log WHERE \(LogSQL.isMealLog) AND \(LogSQL.isStanding) ORDER BY threadNo, pos")
                .map { (row: Row) -> (Int64, Int64) in (row[0], row[1]) }
            var loaded = LoadedChat(threads: threads, names: try ChatLog.names(db, of: threads), tail: tail,
                                    resumeFloor: mark?["resumeFloor"] ?? 0, sessions: LoadedChat.sessions(from: sessionRecords),
                                    coaching: LoadedChat.coaching(from: records), mealTimes: LoadedChat.mealTimes(from: meals))
            // Every record up to here is in the views or the tail: the first checkpoint after a start may mark it.
            loaded.position = max(checkpoint, try Int64.fetchOne(db, sql: "SELECT COALESCE(MAX(pos), 0) FROM log") ?? 0)
            return loaded
        }
    }

    /// These threads as they stand (for threads made outside the log, such as provisioned ones).
    public func threads(ids: [String]) throws -> (threads: [ThreadRow], names: [String: String]) {
        try store.writer.read { db in
            let rows = try ChatLog.threads(db, ids: ids)
            return (rows, try ChatLog.names(db, of: rows))
        }
    }

    /// Records of these threads after `pos`, in log order, at most `limit`.
    public func records(threadNos: [Int64], after pos: Int64, limit: Int) throws -> [ChatRecord] {
        guard limit > 0, !threadNos.isEmpty else { return [] }
        return try store.writer.read { db in
            // Seq never decreases along a thread, so the index holds each thread's records in log order (the
            // position test reads only the index). One lazy cursor per thread, merged by position: a page reads
            // `limit` records plus one per thread, however long the threads are.
            var cursors: [RowCursor] = []
            var heads: [ChatRecord?] = []
            for no in threadNos {
                // Its own statement (not the cached one): all the cursors are open at once.
                let statement = try db.makeStatement(sql: "SELECT \(LogSQL.recordColumns) FROM log WHERE threadNo = ? AND pos > ? ORDER BY seq, pos")
                let cursor = try Row.fetchCursor(statement, arguments: [no, pos])
                heads.append(try cursor.next().map(ChatLog.record))
                cursors.append(cursor)
            }
            var found: [ChatRecord] = []
            while found.count < limit {
                var lowest: Int?
                for index in heads.indices {
                    guard let head = heads[index] else { continue }
                    if lowest == nil || head.pos < heads[lowest!]!.pos { lowest = index }
                }
                guard let next = lowest else { break }
                found.append(heads[next]!)
                heads[next] = try cursors[next].next().map(ChatLog.record)
            }
            return found
        }
    }

    /// Meal logs of these threads before position `before` (nil: from the newest), newest first, at most `limit`:
    /// each thread's newest through the partial index `log_meal`, merged (a page reads at most `limit` per thread).
    public func meals(threadNos: [Int64], before: Int64?, limit: Int) throws -> [ChatRecord] {
        guard limit > 0, !threadNos.isEmpty else { return [] }
        return try store.writer.read { db in
            var found: [ChatRecord] = []
            for no in threadNos {
                found += try RecordQuery.fetchAll(db, sql: """
                    SELECT \(LogSQL.recordColumns) FROM log WHERE threadNo = ? AND \(LogSQL.isMealLog) AND \(LogSQL.isStanding) AND pos < ? ORDER BY pos DESC LIMIT ?
                    """, arguments: [no, before ?? Int64.max, Int64(limit)])
            }
            return Array(found.sorted { $0.pos > $1.pos }.prefix(limit))
        }
    }

    public func activity(threadNos: [Int64], before: Int64?, limit: Int) throws -> [ChatRecord] {
        guard limit > 0, !threadNos.isEmpty else { return [] }
        return try store.writer.read { db in
            var found: [ChatRecord] = []
            for no in threadNos {
                found += try RecordQuery.fetchAll(db, sql: """
                    SELECT \(LogSQL.recordColumns) FROM log WHERE threadNo = ? AND \(LogSQL.isClientActivity) AND pos < ? ORDER BY pos DESC LIMIT ?
                    """, arguments: [no, before ?? Int64.max, Int64(limit)])
            }
            return Array(found.sorted { $0.pos > $1.pos }.prefix(limit))
        }
    }

    /// Messages of the thread with seq < `beforeSeq` (nil: from the newest), newest first, at most `limit`:
    /// people's messages and the server's system messages about sessions (`ChatRecord.isThreadMessage`).
    public func history(threadNo: Int64, beforeSeq: Int64?, limit: Int) throws -> [ChatRecord] {
        guard limit > 0 else { return [] }
        return try store.writer.read { db in
            try RecordQuery.fetchAll(db, sql: """
                SELECT \(LogSQL.recordColumns) FROM log WHERE threadNo = ? AND seq < ? AND (\(LogSQL.isThreadMessage))
                ORDER BY seq DESC LIMIT ?
                """, arguments: [threadNo, beforeSeq ?? Int64.max, Int64(limit)])
        }
    }

    /// The user's last-seen time, if recorded.
    public func lastSeen(userIDs: [String]) throws -> [String: Int64] {
        guard !userIDs.isEmpty else { return [:] }
        return try store.writer.read { db in
            var seen: [String: Int64] = [:]
            let statement = try db.cachedStatement(sql: #"SELECT lastSeenAt FROM "user" WHERE id = ?"#)
            for id in userIDs {
                if let at = try Int64.fetchOne(statement, arguments: [id]) { seen[id] = at }
            }
            return seen
        }
    }

    // MARK: - Rows

    /// A row of `LogSQL.recordColumns`, by index (a row of `SELECT *` would decode wrongly).
    static func record(_ row: Row) -> ChatRecord {
        ChatRecord(pos: row[0], threadNo: row[2], side: row[3], seq: row[4], at: row[9],
                   columns: ChatRecord.Columns(kind: row[1], a: row[5], b: row[6], ref: row[7], body: row[8]))
    }

    /// Threads with their views; all of them when `ids` is nil.
    static func threads(_ db: Database, ids: [String]?) throws -> [ThreadRow] {
        let select = """
            SELECT t.*, l.clientId IS NOT NULL AS active,
                   COALESCE((SELECT pos FROM log WHERE threadNo = t.no ORDER BY seq DESC, pos DESC LIMIT 1), 0) AS lastPos,
                   COALESCE(rc.deliveredSeq, 0) AS cd, COALESCE(rc.readSeq, 0) AS cr,
                   COALESCE(rk.deliveredSeq, 0) AS kd, COALESCE(rk.readSeq, 0) AS kr
            FROM thread t
            LEFT JOIN coachClientLink l ON l.clientId = t.clientId AND l.coachId = t.coachId
            LEFT JOIN threadReceipt rc ON rc.threadNo = t.no AND rc.side = 0
            LEFT JOIN threadReceipt rk ON rk.threadNo = t.no AND rk.side = 1
            """
        let rows: [Row]
        if let ids {
            let statement = try db.cachedStatement(sql: select + " WHERE t.id = ?")
            rows = try ids.compactMap { try Row.fetchOne(statement, arguments: [$0]) }
        } else {
            rows = try Row.fetchAll(db, sql: select + " ORDER BY t.createdAt, t.no")
        }
        return rows.map { row in
            let coachID: String = row["coachId"]
            let lastSender: String? = row["lastSenderId"]
            return ThreadRow(
                id: row["id"], no: row["no"], coachID: coachID, clientID: row["clientId"], createdAt: row["createdAt"],
                active: row["active"], lastSeq: row["lastSeq"], lastMessageAt: row["lastMessageAt"],
                lastPreview: row["lastPreview"], lastSide: lastSender.map { $0 == coachID ? .coach : .client },
                lastPos: row["lastPos"], coach: .init(delivered: row["cd"], read: row["cr"]),
                client: .init(delivered: row["kd"], read: row["kr"]))
        }
    }

    static func names(_ db: Database, of threads: [ThreadRow]) throws -> [String: String] {
        var names: [String: String] = [:]
        if threads.count > 1000 {
            // At start: one pass over the users beats a lookup per participant.
            for row in try Row.fetchAll(db, sql: #"SELECT id, fullName FROM "user" WHERE fullName IS NOT NULL"#) {
                names[row["id"]] = row["fullName"]
            }
            return names
        }
        let statement = try db.cachedStatement(sql: #"SELECT fullName FROM "user" WHERE id = ?"#)
        for user in Set(threads.flatMap { [$0.coachID, $0.clientID] }) {
            if let name = try String.fetchOne(statement, arguments: [user]) { names[user] = name }
        }
        return names
    }
}

/// The SQLite engine of the log ports (`ChatLogEngine`, with the link changes of `ChatStore`).
extension ChatLog: ChatStore {}
