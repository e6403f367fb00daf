import GRDB

/// Threads, messages, receipts and the per-user event log.
///
/// Every function takes a GRDB `Database`, so the caller (the store writer) can run many of them in one
/// transaction. Functions that write must run inside a write transaction; they rely on it for atomicity
/// (a thread's seq and a user's cursor are read and bumped in the same transaction as the row they number).
public enum Messaging {
    // MARK: Threads

    /// The thread, or nil.
    public static func thread(_ db: Database, id: String) throws -> ThreadRecord? {
        try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM thread WHERE id = ?"), arguments: [id]).map(ThreadRecord.init(row:))
    }

    /// Threads the user takes part in (as coach or client), oldest first.
    public static func threads(_ db: Database, userID: String) throws -> [ThreadRecord] {
        try Row.fetchAll(db.cachedStatement(sql: """
            SELECT * FROM thread WHERE coachId = ?1 OR clientId = ?1 ORDER BY createdAt, id
            """), arguments: [userID]).map(ThreadRecord.init(row:))
    }

    /// Whether (coachID, clientID) of the thread is the client's current link. A client's old thread with a
    /// former coach stays readable but not writable.
    public static func isActive(_ db: Database, thread: ThreadRecord) throws -> Bool {
        try Row.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM coachClientLink WHERE clientId = ? AND coachId = ?"),
                         arguments: [thread.clientID, thread.coachID]) != nil
    }

    // MARK: Messages

    /// Appends a message with the next gapless seq of its thread; see `MessagingWriter.insertMessage`, which
    /// this runs without a cache.
    public static func insertMessage(_ db: Database, _ message: NewMessage) throws -> InsertOutcome {
        try MessagingWriter().insertMessage(db, message)
    }

    /// The message a sender sent with this idempotency id, or nil.
    public static func message(_ db: Database, threadID: String, senderID: String?,
                               clientMessageID: String) throws -> StoredMessage? {
        try Row.fetchOne(db.cachedStatement(sql: """
            SELECT * FROM message
            WHERE threadId = ? AND COALESCE(senderId, '') = COALESCE(?, '') AND clientMessageId = ?
            """), arguments: [threadID, senderID, clientMessageID]).map(StoredMessage.init(row:))
    }

    /// Messages with seq < beforeSeq (nil = from the newest), newest first, at most `limit`
    /// (the caller caps it at 100).
    public static func history(_ db: Database, threadID: String, beforeSeq: Int64?, limit: Int) throws -> [StoredMessage] {
        guard limit > 0 else { return [] }
        let rows: [Row]
        if let beforeSeq {
            rows = try Row.fetchAll(db.cachedStatement(sql: """
                SELECT * FROM message WHERE threadId = ? AND seq < ? ORDER BY seq DESC LIMIT ?
                """), arguments: [threadID, beforeSeq, limit])
        } else {
            rows = try Row.fetchAll(db.cachedStatement(sql: """
                SELECT * FROM message WHERE threadId = ? ORDER BY seq DESC LIMIT ?
                """), arguments: [threadID, limit])
        }
        return rows.map(StoredMessage.init(row:))
    }

    // MARK: Receipts

    /// Raises deliveredSeq and/or readSeq; see `MessagingWriter.updateReceipt`, which this runs without a cache.
    public static func updateReceipt(_ db: Database, threadID: String, userID: String, deliveredSeq: Int64?,
                                     readSeq: Int64?) throws -> (receipt: ReceiptRecord, changed: Bool) {
        try MessagingWriter().updateReceipt(db, threadID: threadID, userID: userID, deliveredSeq: deliveredSeq,
                                            readSeq: readSeq)
    }

    /// The user's receipt in the thread (zeros if none).
    public static func receipt(_ db: Database, threadID: String, userID: String) throws -> ReceiptRecord {
        let row = try Row.fetchOne(db.cachedStatement(sql: """
            SELECT deliveredSeq, readSeq FROM receipt WHERE threadId = ? AND userId = ?
            """), arguments: [threadID, userID])
        return ReceiptRecord(threadID: threadID, userID: userID, deliveredSeq: row?["deliveredSeq"] ?? 0,
                             readSeq: row?["readSeq"] ?? 0)
    }

    // MARK: Unread and conversation list

    /// Sum of unread (lastSeq - readSeq, floored at 0) over the user's threads.
    public static func totalUnread(_ db: Database, userID: String) throws -> Int64 {
        try Int64.fetchOne(db.cachedStatement(sql: """
            SELECT COALESCE(SUM(MAX(t.lastSeq - COALESCE(r.readSeq, 0), 0)), 0)
            FROM thread t LEFT JOIN receipt r ON r.threadId = t.id AND r.userId = ?1
            WHERE t.coachId = ?1 OR t.clientId = ?1
            """), arguments: [userID]) ?? 0
    }

    /// The user's threads with the peer, receipts and unread; most recent activity first (lastMessageAt
    /// desc, threads without messages last, then by thread createdAt desc, then id).
    public static func summaries(_ db: Database, userID: String) throws -> [ThreadSummary] {
        try Row.fetchAll(db.cachedStatement(sql: """
            SELECT t.*, p.id AS peerId, p.fullName AS peerName, p.lastSeenAt AS peerLastSeenAt,
                   COALESCE(r.readSeq, 0) AS myReadSeq, COALESCE(r.deliveredSeq, 0) AS myDeliveredSeq,
                   COALESCE(pr.readSeq, 0) AS peerReadSeq, COALESCE(pr.deliveredSeq, 0) AS peerDeliveredSeq
            FROM (SELECT *, CASE WHEN coachId = ?1 THEN clientId ELSE coachId END AS peer
                  FROM thread WHERE coachId = ?1 OR clientId = ?1) t
            LEFT JOIN "user" p ON p.id = t.peer
            LEFT JOIN receipt r ON r.threadId = t.id AND r.userId = ?1
            LEFT JOIN receipt pr ON pr.threadId = t.id AND pr.userId = t.peer
            ORDER BY t.lastMessageAt IS NULL, t.lastMessageAt DESC, t.createdAt DESC, t.id
            """), arguments: [userID]).map { row in
            let thread = ThreadRecord(row: row)
            let readSeq: Int64 = row["myReadSeq"]
            return ThreadSummary(thread: thread, peerID: row["peer"], peerName: row["peerName"],
                                 peerLastSeenAt: row["peerLastSeenAt"], readSeq: readSeq,
                                 deliveredSeq: row["myDeliveredSeq"], peerReadSeq: row["peerReadSeq"],
                                 peerDeliveredSeq: row["peerDeliveredSeq"], unread: max(thread.lastSeq - readSeq, 0))
        }
    }

    // MARK: The user event log

    /// Appends to the user's ordered event log; see `MessagingWriter.appendEvent`, which this runs without a
    /// cache.
    @discardableResult
    public static func appendEvent(_ db: Database, userID: String, kind: String, payload: String, now: Int64) throws -> Int64 {
        try MessagingWriter().appendEvent(db, userID: userID, kind: kind, payload: payload, now: now)
    }

    /// Events with cursor > `cursor`, ascending, at most `limit`; or `.expired` when events after `cursor`
    /// were pruned already (cursor < oldest retained - 1), so replaying from it would leave a gap.
    public static func events(_ db: Database, userID: String, after cursor: Int64, limit: Int) throws -> EventPage {
        let oldest = try Int64.fetchOne(db.cachedStatement(sql: "SELECT MIN(cursor) FROM userEvent WHERE userId = ?"),
                                        arguments: [userID])
        // With nothing retained, the next event to come is the oldest available.
        let oldestAvailable = try oldest ?? (latestCursor(db, userID: userID) + 1)
        if cursor < oldestAvailable - 1 { return .expired(oldestAvailable: oldestAvailable) }
        guard limit > 0 else { return .events([]) }
        return .events(try Row.fetchAll(db.cachedStatement(sql: """
            SELECT * FROM userEvent WHERE userId = ? AND cursor > ? ORDER BY cursor LIMIT ?
            """), arguments: [userID, cursor, limit]).map(UserEventRecord.init(row:)))
    }

    /// The user's latest cursor (0 if none): the newest event, or the mark pruning left when it deleted the
    /// newest (`userCursor`), whichever is higher. Appends do not write the mark; only pruning needs it.
    public static func latestCursor(_ db: Database, userID: String) throws -> Int64 {
        let newest = try Int64.fetchOne(db.cachedStatement(sql: "SELECT MAX(cursor) FROM userEvent WHERE userId = ?"),
                                        arguments: [userID]) ?? 0
        let mark = try Int64.fetchOne(db.cachedStatement(sql: "SELECT lastCursor FROM userCursor WHERE userId = ?"),
                                      arguments: [userID]) ?? 0
        return max(newest, mark)
    }

    /// Deletes events older than `olderThan` (createdAt) but always keeps each user's newest `keepAtLeast`.
    /// Only a prefix of each user's log is deleted (up to the first event that must be kept), so what is
    /// retained is always gapless and `events(after:)` can tell exactly when a cursor expired.
    /// Returns the number deleted.
    @discardableResult
    public static func pruneEvents(_ db: Database, olderThan: Int64, keepAtLeast: Int) throws -> Int {
        let candidates = try Row.fetchAll(db.cachedStatement(sql: """
            SELECT userId, MAX(cursor) AS lastCursor, MIN(CASE WHEN createdAt >= ?1 THEN cursor END) AS firstKept
            FROM userEvent GROUP BY userId HAVING MIN(createdAt) < ?1
            """), arguments: [olderThan])
        var deleted = 0
        for row in candidates {
            let userID: String = row["userId"]
            let lastCursor: Int64 = row["lastCursor"]
            var cutoff = lastCursor - Int64(max(keepAtLeast, 0))
            if let firstKept: Int64 = row["firstKept"] { cutoff = min(cutoff, firstKept - 1) }
            if cutoff >= lastCursor {
                // The newest event goes too: keep its cursor as the mark, so it is never handed out again.
                try db.cachedStatement(sql: """
                    INSERT INTO userCursor (userId, lastCursor) VALUES (?, ?)
                    ON CONFLICT(userId) DO UPDATE SET lastCursor = MAX(lastCursor, excluded.lastCursor)
                    """).execute(arguments: [userID, lastCursor])
            }
            try db.cachedStatement(sql: "DELETE FROM userEvent WHERE userId = ? AND cursor <= ?").execute(arguments: [userID, cutoff])
            deleted += db.changesCount
        }
        return deleted
    }

    // MARK: Presence

    /// Records when the user was last seen (unix seconds).
    public static func setLastSeen(_ db: Database, userID: String, at: Int64) throws {
        try db.cachedStatement(sql: #"UPDATE "user" SET lastSeenAt = ? WHERE id = ?"#).execute(arguments: [at, userID])
    }
}
