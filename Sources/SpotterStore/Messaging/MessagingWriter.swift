import GRDB

/// The write side of messaging, for the one connection that writes (the store writer's thread).
///
/// It keeps what every send needs — each thread's participants and `lastSeq`, receipts, each user's latest
/// cursor and total unread — in memory, so a send reads nothing from SQLite once its thread and users are
/// known. The cache is write-through: every change is written to SQLite in the caller's transaction first and
/// copied into memory only after its statements succeeded, so the database stays the truth and the cache can be
/// dropped (`invalidate()`) at any time; it fills again from SQLite on the next miss.
///
/// Not thread-safe: one instance belongs to one writing connection. A transaction or savepoint that rolls back
/// must be followed by `invalidate()` (the store writer does this), because the cache may hold the rolled-back
/// changes. Writes to threads or receipts that bypass this type must invalidate it too; creating threads and
/// links does not need to (a new thread starts at seq 0 and is loaded on first use).
public final class MessagingWriter: @unchecked Sendable {
    private struct ReceiptKey: Hashable {
        let threadID: String
        let userID: String
    }

    private var threads: [String: ThreadRecord] = [:]
    private var receipts: [ReceiptKey: ReceiptRecord] = [:]
    private var cursors: [String: Int64] = [:]
    private var totals: [String: Int64] = [:]
    private let capacity: Int

    /// `capacity`: past this many entries in any one table the whole cache is dropped and refills on demand,
    /// which bounds memory however many users write.
    public init(capacity: Int = 200_000) {
        self.capacity = max(capacity, 1)
    }

    /// Forgets everything cached. Always safe: the database holds every change.
    public func invalidate() {
        threads.removeAll(keepingCapacity: true)
        receipts.removeAll(keepingCapacity: true)
        cursors.removeAll(keepingCapacity: true)
        totals.removeAll(keepingCapacity: true)
    }

    /// Entries cached (for tests).
    public var cachedEntries: Int { threads.count + receipts.count + cursors.count + totals.count }

    // MARK: Reads (cached)

    public func thread(_ db: Database, id: String) throws -> ThreadRecord? {
        if let thread = threads[id] { return thread }
        return try Messaging.thread(db, id: id).map { remember($0, in: \.threads, at: id) }
    }

    public func receipt(_ db: Database, threadID: String, userID: String) throws -> ReceiptRecord {
        let key = ReceiptKey(threadID: threadID, userID: userID)
        if let receipt = receipts[key] { return receipt }
        return remember(try Messaging.receipt(db, threadID: threadID, userID: userID), in: \.receipts, at: key)
    }

    public func totalUnread(_ db: Database, userID: String) throws -> Int64 {
        if let total = totals[userID] { return total }
        return remember(try Messaging.totalUnread(db, userID: userID), in: \.totals, at: userID)
    }

    public func latestCursor(_ db: Database, userID: String) throws -> Int64 {
        if let cursor = cursors[userID] { return cursor }
        return remember(try Messaging.latestCursor(db, userID: userID), in: \.cursors, at: userID)
    }

    // MARK: Writes

    /// Appends a message with the next gapless seq of its thread (thread.lastSeq + 1, updated with
    /// lastMessageAt, lastPreview, lastSenderId). If (threadID, senderID, clientMessageID) exists already,
    /// nothing changes and the original comes back as `.duplicate`. A message by a participant also moves that
    /// participant's receipt (readSeq and deliveredSeq) up to the new seq. Throws
    /// `MessagingError.threadNotFound` for an unknown thread.
    public func insertMessage(_ db: Database, _ message: NewMessage) throws -> InsertOutcome {
        guard let before = try thread(db, id: message.threadID) else {
            throw MessagingError.threadNotFound(message.threadID)
        }
        let seq = before.lastSeq + 1
        do {
            // The idempotency index refuses a retry; the INSERT does that check as it places the row.
            let insert = try DirectStatement(db, sql: """
                INSERT INTO message (threadId, seq, senderId, clientMessageId, kind, body, createdAt)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """)
            insert.bind(1, message.threadID)
            insert.bind(2, seq)
            insert.bind(3, message.senderID)
            insert.bind(4, message.clientMessageID)
            insert.bind(5, message.kind)
            insert.bind(6, message.body)
            insert.bind(7, message.createdAt)
            try insert.run()
        } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
            if let original = try Messaging.message(db, threadID: message.threadID, senderID: message.senderID,
                                                    clientMessageID: message.clientMessageID) {
                return .duplicate(original)
            }
            throw error
        }
        let update = try DirectStatement(db, sql: """
            UPDATE thread SET lastSeq = ?, lastMessageAt = ?, lastPreview = ?, lastSenderId = ? WHERE id = ?
            """)
        update.bind(1, seq)
        update.bind(2, message.createdAt)
        update.bind(3, message.preview)
        update.bind(4, message.senderID)
        update.bind(5, message.threadID)
        try update.run()
        var after = before
        after.lastSeq = seq
        after.lastMessageAt = message.createdAt
        after.lastPreview = message.preview
        after.lastSenderID = message.senderID

        // Receipts of both participants as they stand after this message.
        var moved: [(user: String, before: ReceiptRecord, after: ReceiptRecord)] = []
        for user in [before.coachID, before.clientID] {
            let current = try receipt(db, threadID: message.threadID, userID: user)
            var raised = current
            if user == message.senderID {
                raised.deliveredSeq = seq
                raised.readSeq = seq
                try raiseReceipt(db, raised)
            }
            moved.append((user, current, raised))
        }
        threads[message.threadID] = after
        for entry in moved {
            adjustTotal(entry.user, before: before, entry.before, after: after, entry.after)
            receipts[ReceiptKey(threadID: message.threadID, userID: entry.user)] = entry.after
        }
        return .inserted(StoredMessage(threadID: message.threadID, seq: seq, senderID: message.senderID,
                                       clientMessageID: message.clientMessageID, kind: message.kind,
                                       body: message.body, createdAt: message.createdAt))
    }

    /// Raises deliveredSeq and/or readSeq (never lowers; readSeq also raises deliveredSeq; both capped at the
    /// thread's lastSeq). Returns the receipt after the update and whether anything changed. Throws
    /// `MessagingError.threadNotFound` for an unknown thread.
    public func updateReceipt(_ db: Database, threadID: String, userID: String, deliveredSeq: Int64?,
                              readSeq: Int64?) throws -> (receipt: ReceiptRecord, changed: Bool) {
        guard let thread = try thread(db, id: threadID) else { throw MessagingError.threadNotFound(threadID) }
        let current = try receipt(db, threadID: threadID, userID: userID)
        let read = max(current.readSeq, min(readSeq ?? 0, thread.lastSeq))
        let delivered = max(current.deliveredSeq, min(deliveredSeq ?? 0, thread.lastSeq), read)
        let updated = ReceiptRecord(threadID: threadID, userID: userID, deliveredSeq: delivered, readSeq: read)
        guard updated != current else { return (current, false) }
        try raiseReceipt(db, updated)
        adjustTotal(userID, before: thread, current, after: thread, updated)
        receipts[ReceiptKey(threadID: threadID, userID: userID)] = updated
        return (updated, true)
    }

    /// Appends to the user's ordered event log; returns the new cursor (the latest + 1: gapless, never reused,
    /// also after pruning, which records the latest cursor of a user before deleting their events).
    public func appendEvent(_ db: Database, userID: String, kind: String, payload: String, now: Int64) throws -> Int64 {
        try appendEvents(db, [NewEvent(userID: userID, kind: kind, payload: payload)], now: now)[0]
    }

    /// Appends several events with one statement; returns their cursors, in order. Events of the same user get
    /// consecutive cursors in the order given.
    public func appendEvents(_ db: Database, _ events: [NewEvent], now: Int64) throws -> [Int64] {
        guard !events.isEmpty else { return [] }
        var next: [String: Int64] = [:]
        var assigned: [Int64] = []
        assigned.reserveCapacity(events.count)
        for event in events {
            let cursor = try (next[event.userID] ?? latestCursor(db, userID: event.userID)) + 1
            next[event.userID] = cursor
            assigned.append(cursor)
        }
        let insert = try DirectStatement(db, sql: MessagingWriter.insertEventsSQL(count: events.count))
        for (index, event) in events.enumerated() {
            let base = Int32(index * 5)
            insert.bind(base + 1, event.userID)
            insert.bind(base + 2, assigned[index])
            insert.bind(base + 3, event.kind)
            insert.bind(base + 4, event.payload)
            insert.bind(base + 5, now)
        }
        try insert.run()
        for (user, cursor) in next { cursors[user] = cursor }
        return assigned
    }

    private static func insertEventsSQL(count: Int) -> String {
        "INSERT INTO userEvent (userId, cursor, kind, payload, createdAt) VALUES "
            + Array(repeating: "(?, ?, ?, ?, ?)", count: count).joined(separator: ", ")
    }

    // MARK: Helpers

    private func raiseReceipt(_ db: Database, _ receipt: ReceiptRecord) throws {
        let upsert = try DirectStatement(db, sql: """
            INSERT INTO receipt (threadId, userId, deliveredSeq, readSeq) VALUES (?, ?, ?, ?)
            ON CONFLICT(threadId, userId) DO UPDATE SET
                deliveredSeq = MAX(deliveredSeq, excluded.deliveredSeq),
                readSeq = MAX(readSeq, excluded.readSeq)
            """)
        upsert.bind(1, receipt.threadID)
        upsert.bind(2, receipt.userID)
        upsert.bind(3, receipt.deliveredSeq)
        upsert.bind(4, receipt.readSeq)
        try upsert.run()
    }

    /// Moves a cached total by the change of the user's unread count in one thread.
    private func adjustTotal(_ userID: String, before: ThreadRecord, _ receiptBefore: ReceiptRecord,
                             after: ThreadRecord, _ receiptAfter: ReceiptRecord) {
        guard let total = totals[userID] else { return }
        let delta = max(after.lastSeq - receiptAfter.readSeq, 0) - max(before.lastSeq - receiptBefore.readSeq, 0)
        totals[userID] = total + delta
    }

    /// Caches a value loaded from SQLite. A full table drops the whole cache first: cheaper than tracking use,
    /// and the cache refills with what is hot.
    private func remember<Key: Hashable, Value>(_ value: Value, in table: ReferenceWritableKeyPath<MessagingWriter, [Key: Value]>,
                                                at key: Key) -> Value {
        if self[keyPath: table].count >= capacity { invalidate() }
        self[keyPath: table][key] = value
        return value
    }
}
