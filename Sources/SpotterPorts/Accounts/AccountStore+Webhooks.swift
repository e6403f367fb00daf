import SpotterCore
import SpotterProtocol

/// A registered webhook endpoint. `secret` signs every delivery; the API shows it once (made, rotated) and never
/// lists it.
public struct WebhookEndpointRecord: Sendable, Equatable {
    public var id: String
    public var url: String
    public var events: [WebhookEventType]
    public var secret: String
    public var createdBy: String
    public var createdAt: Int64
}

/// What the webhook consumer made of a batch.
public struct WebhookIntakeResult: Sendable, Equatable {
    /// Deliveries queued.
    public var queued = 0
    /// Deliveries past an endpoint's outbox bound, put straight on its dead-letter list.
    public var overflowed = 0

    public init() {}
}

/// Webhook endpoints (`webhookEndpoint`) and their outbox (`webhookDelivery`, `webhookCursor`): see
/// `AccountsSchema.webhooks`.
extension AccountStore {
    /// Registers an endpoint; nil when there are `limit` already.
    public func createWebhook(id: String, url: String, events: [WebhookEventType], secret: String, createdBy: String,
                              now: Int64, limit: Int) throws -> WebhookEndpointRecord? {
        try write { db in
            let count: Int = try db.fetchValue("SELECT COUNT(*) FROM webhookEndpoint") ?? 0
            guard count < limit else { return nil }
            try db.execute("""
                INSERT INTO webhookEndpoint (id, url, events, secret, createdBy, createdAt) VALUES (?, ?, ?, ?, ?, ?)
                """, [id, url, events.map(\.rawValue).joined(separator: ","), secret, createdBy, now])
            return WebhookEndpointRecord(id: id, url: url, events: events, secret: secret, createdBy: createdBy, createdAt: now)
        }
    }

    /// Every endpoint, oldest first, secrets included (for the dispatcher; the API leaves them out).
    public func webhooks() throws -> [WebhookEndpointRecord] {
        try read { db in try db.fetchAll("SELECT * FROM webhookEndpoint ORDER BY createdAt, id").map(Self.endpoint) }
    }

    /// Removes an endpoint with everything waiting for it and its dead letters; false when there is none.
    public func deleteWebhook(id: String) throws -> Bool {
        try write { db in
            try db.execute("DELETE FROM webhookEndpoint WHERE id = ?", [id])
            let removed = db.changes > 0
            try db.execute("DELETE FROM webhookDelivery WHERE endpointId = ?", [id])
            return removed
        }
    }

    /// Gives an endpoint a new secret, at once: deliveries from now on are signed with it. Nil: no such endpoint.
    public func rotateWebhookSecret(id: String, secret: String) throws -> WebhookEndpointRecord? {
        try write { db in
            try db.execute("UPDATE webhookEndpoint SET secret = ? WHERE id = ?", [secret, id])
            guard db.changes > 0 else { return nil }
            return try db.fetchOne("SELECT * FROM webhookEndpoint WHERE id = ?", [id]).map(Self.endpoint)
        }
    }

    private static func endpoint(_ row: SQLRow) -> WebhookEndpointRecord {
        let events: String = row["events"]
        return WebhookEndpointRecord(id: row["id"], url: row["url"],
                                     events: events.split(separator: ",").compactMap { WebhookEventType(rawValue: String($0)) },
                                     secret: row["secret"], createdBy: row["createdBy"], createdAt: row["createdAt"])
    }

    // MARK: The outbox

    /// The newest record whose deliveries are in the outbox (0: none yet).
    public func webhooksHandledThrough(_ name: String) throws -> Int64 {
        try read { db in try db.fetchValue("SELECT pos FROM webhookCursor WHERE name = ?", [name]) ?? 0 }
    }

    /// Queues one delivery of each event per endpoint subscribed to its type, and moves the cursor `name` to
    /// `handledThrough`, in one transaction. Events of records at or before the saved cursor are passed over (a
    /// batch handed over again after a crash makes nothing new). An endpoint with `outboxLimit` deliveries
    /// pending gets the new ones straight on its dead-letter list (`outbox_full`), from where an admin replays them.
    ///
    /// `considered`: the event types the caller built events for (nil: all). When an endpoint in this transaction
    /// is subscribed to another (registered since the caller read `webhookSubscriptions`), nothing is written and
    /// `WebhookIntakeError.subscriptionsChanged` is thrown: the caller builds the batch again for the new types.
    public func enqueueWebhooks(_ events: [WebhookEvent], cursor name: String, handledThrough: Int64, now: Int64,
                                outboxLimit: Int, considered: Set<WebhookEventType>? = nil) throws -> WebhookIntakeResult {
        try write { db in
            let saved: Int64 = try db.fetchValue("SELECT pos FROM webhookCursor WHERE name = ?", [name]) ?? 0
            var result = WebhookIntakeResult()
            let fresh = events.filter { $0.pos > saved }
            if let considered, handledThrough > saved, try !Self.subscriptions(db).isSubset(of: considered) {
                throw WebhookIntakeError.subscriptionsChanged
            }
            if !fresh.isEmpty {
                let endpoints = try db.fetchAll("SELECT * FROM webhookEndpoint").map(Self.endpoint)
                var pending: [String: Int] = [:]
                var index: [Int64: Int64] = [:]
                for event in fresh {
                    let ord = event.pos * 16 + min(index[event.pos, default: 0], 15)
                    index[event.pos, default: 0] += 1
                    for endpoint in endpoints where endpoint.events.contains(event.type) {
                        if pending[endpoint.id] == nil {
                            pending[endpoint.id] = try db.fetchValue(
                                "SELECT COUNT(*) FROM webhookDelivery WHERE endpointId = ? AND status = 'pending'", [endpoint.id]) ?? 0
                        }
                        let full = pending[endpoint.id, default: 0] >= outboxLimit
                        try db.execute("""
                            INSERT INTO webhookDelivery (endpointId, eventId, eventType, ord, threadId, seq, senderId, createdAt, payload,
                                                         status, attempts, enqueuedAt, firstAttemptAt, notBefore, lastError, deadAt)
                            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, NULL, ?, ?, ?)
                            ON CONFLICT (endpointId, eventId) DO NOTHING
                            """, [endpoint.id, event.id, event.type.rawValue, ord, event.threadID, event.seq, event.senderID, event.createdAt,
                                  event.payload, full ? "dead" : "pending", now, now, full ? "outbox_full" : nil, full ? now : nil])
                        guard db.changes > 0 else { continue }
                        if full { result.overflowed += 1 } else { result.queued += 1; pending[endpoint.id, default: 0] += 1 }
                    }
                }
            }
            if handledThrough > saved {
                try db.execute("""
                    INSERT INTO webhookCursor (name, pos) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET pos = excluded.pos
                    """, [name, handledThrough])
            }
            return result
        }
    }

    /// The oldest pending delivery of each endpoint not in `busy`, if it is due at `now` (ms): an endpoint's next
    /// delivery waits for the one before it. Each comes with its endpoint's URL and current secret.
    public func dueWebhookDeliveries(now: Int64, busy: Set<String>) throws -> [WebhookDeliveryRow] {
        try read { db in
            // One indexed look per endpoint (at most 50): its oldest pending delivery, however many wait behind it.
            var due: [WebhookDeliveryRow] = []
            for endpoint in try db.fetchAll("SELECT id, url, secret FROM webhookEndpoint") {
                let id: String = endpoint["id"]
                guard !busy.contains(id), let head = try db.fetchOne("""
                    SELECT d.*, ? AS url, ? AS secret FROM webhookDelivery d
                    WHERE d.endpointId = ? AND d.status = 'pending' ORDER BY d.ord LIMIT 1
                    """, [endpoint["url"] as String, endpoint["secret"] as String, id]) else { continue }
                let row = WebhookDeliveryRow(head)
                if row.notBefore <= now { due.append(row) }
            }
            return due
        }
    }

    /// What became of one delivery attempt, to write back.
    public struct WebhookAttempt: Sendable, Equatable {
        public var endpointID: String
        public var eventID: String
        public var outcome: WebhookDeliveryOutcome
        public var error: String?
        /// When the delivery was first tried (ms): kept if it was tried before.
        public var firstAttemptAt: Int64

        public init(endpointID: String, eventID: String, outcome: WebhookDeliveryOutcome, error: String?, firstAttemptAt: Int64) {
            self.endpointID = endpointID
            self.eventID = eventID
            self.outcome = outcome
            self.error = error
            self.firstAttemptAt = firstAttemptAt
        }
    }

    /// Writes back what became of deliveries, in one transaction: delivered (forgotten), again at `notBefore`, or
    /// dead-lettered at `now` (ms).
    public func finishWebhookDeliveries(_ attempts: [WebhookAttempt], now: Int64) throws {
        guard !attempts.isEmpty else { return }
        try write { db in
            for attempt in attempts {
                let (endpointID, eventID, error, first) = (attempt.endpointID, attempt.eventID, attempt.error, attempt.firstAttemptAt)
                switch attempt.outcome {
                case .delivered:
                    try db.execute("DELETE FROM webhookDelivery WHERE endpointId = ? AND eventId = ?", [endpointID, eventID])
                case .again(let notBefore):
                    try db.execute("""
                        UPDATE webhookDelivery SET attempts = attempts + 1, notBefore = ?, lastError = ?,
                            firstAttemptAt = COALESCE(firstAttemptAt, ?) WHERE endpointId = ? AND eventId = ?
                        """, [notBefore, error, first, endpointID, eventID])
                case .dead:
                    try db.execute("""
                        UPDATE webhookDelivery SET status = 'dead', attempts = attempts + 1, lastError = ?, deadAt = ?,
                            firstAttemptAt = COALESCE(firstAttemptAt, ?) WHERE endpointId = ? AND eventId = ?
                        """, [error, now, first, endpointID, eventID])
                }
            }
        }
    }

    /// An endpoint's dead letters, oldest event first, at most `limit`.
    public func webhookDeadLetters(endpointID: String, limit: Int) throws -> [WebhookDeliveryRow] {
        try read { db in
            try db.fetchAll("""
                SELECT d.*, '' AS url, '' AS secret FROM webhookDelivery d WHERE endpointId = ? AND status = 'dead'
                ORDER BY ord LIMIT ?
                """, [endpointID, limit]).map(WebhookDeliveryRow.init)
        }
    }

    /// Puts an endpoint's dead letters (all, or those of `eventIDs`) back in its outbox, due at `now`, with their
    /// event ids and a fresh retry window. Returns how many.
    public func replayWebhookDeadLetters(endpointID: String, eventIDs: [String]?, now: Int64) throws -> Int {
        try write { db in
            let reset = """
                UPDATE webhookDelivery SET status = 'pending', attempts = 0, firstAttemptAt = NULL, notBefore = ?, deadAt = NULL
                WHERE endpointId = ? AND status = 'dead'
                """
            guard let eventIDs else {
                try db.execute(reset, [now, endpointID])
                return db.changes
            }
            var count = 0
            for id in Set(eventIDs) {
                try db.execute(reset + " AND eventId = ?", [now, endpointID, id])
                count += db.changes
            }
            return count
        }
    }

    /// A purged message leaves no text in the outbox: the message events of thread `threadID` (`seq` nil: all of
    /// the thread's) keep their ids and order but their payload becomes `{"created_at","data":{"purged":true,
    /// "seq","thread_id"},"id","type"}`. Returns how many were blanked.
    @discardableResult
    public func forgetWebhookDeliveries(threadID: String, seq: Int64?) throws -> Int {
        try write { db in
            var condition = "threadId = ?"
            var arguments: [any SQLBindable] = [threadID]
            if let seq {
                condition += " AND seq = ?"
                arguments.append(seq)
            }
            return try Self.blank(db, condition, arguments)
        }
    }

    /// The same for every message of `senderID` (an erased account), in every thread.
    @discardableResult
    public func forgetWebhookDeliveries(senderID: String) throws -> Int {
        try write { db in try Self.blank(db, "senderId = ?", [senderID]) }
    }

    /// What a record makes the outbox forget (`WebhookEvents.forgetting`).
    @discardableResult
    public func forgetWebhookDeliveries(_ forgetting: WebhookEvents.Forgetting) throws -> Int {
        switch forgetting {
        case .message(let threadID, let seq): try forgetWebhookDeliveries(threadID: threadID, seq: seq)
        case .sender(let userID): try forgetWebhookDeliveries(senderID: userID)
        }
    }

    /// Blanks the queued and dead-lettered message events matching `condition` (their text): `MessageForgetting` calls
    /// it in the transaction that appends an edit, a delete or an erasure, so a purge after it finds nothing.
    @discardableResult
    static func blank(_ db: any SQLDatabase, _ condition: String, _ arguments: [any SQLBindable]) throws -> Int {
        let types = WebhookEventType.allCases.filter(\.isMessageEvent).map(\.rawValue)
        let rows = try db.fetchAll("""
            SELECT endpointId, eventId, eventType, threadId, seq, createdAt FROM webhookDelivery
            WHERE \(condition) AND eventType IN (?, ?)
            """, arguments + [types[0], types[1]])
        for row in rows {
            var data = JSONText()
            data.field("purged", true)
            data.field("seq", row["seq"] as Int64?)
            data.field("thread_id", row["threadId"] as String)
            var json = JSONText()
            json.field("created_at", row["createdAt"] as Int64)
            json.field("data", json: data.finish())
            json.field("id", row["eventId"] as String)
            json.field("type", row["eventType"] as String)
            try db.execute("UPDATE webhookDelivery SET payload = ? WHERE endpointId = ? AND eventId = ?",
                           [json.finish(), row["endpointId"] as String, row["eventId"] as String])
        }
        return rows.count
    }

    /// The payloads of an endpoint's pending deliveries, in order (what a purge must have blanked).
    public func pendingWebhookPayloads(endpointID: String) throws -> [String] {
        try read { db in
            try db.fetchValues("SELECT payload FROM webhookDelivery WHERE endpointId = ? AND status = 'pending' ORDER BY ord", [endpointID])
        }
    }

    /// Pending deliveries per endpoint, for the queue gauge.
    public func pendingWebhookDeliveries() throws -> [String: Int] {
        try read { db in
            var counts: [String: Int] = [:]
            for row in try db.fetchAll("SELECT endpointId, COUNT(*) AS n FROM webhookDelivery WHERE status = 'pending' GROUP BY endpointId") {
                counts[row["endpointId"]] = row["n"]
            }
            return counts
        }
    }
}

/// One delivery as the outbox holds it.
public struct WebhookDeliveryRow: Sendable, Equatable {
    public var endpointID: String
    public var eventID: String
    public var eventType: String
    public var payload: String
    public var attempts: Int
    public var enqueuedAt: Int64
    public var firstAttemptAt: Int64?
    public var notBefore: Int64
    public var lastError: String?
    public var deadAt: Int64?
    /// The endpoint's, for a delivery about to be sent ("" in a dead-letter listing).
    public var url: String
    public var secret: String

    init(_ row: SQLRow) {
        endpointID = row["endpointId"]
        eventID = row["eventId"]
        eventType = row["eventType"]
        payload = row["payload"]
        attempts = row["attempts"]
        enqueuedAt = row["enqueuedAt"]
        firstAttemptAt = row["firstAttemptAt"]
        notBefore = row["notBefore"]
        lastError = row["lastError"]
        deadAt = row["deadAt"]
        url = row["url"]
        secret = row["secret"]
    }
}

/// What became of a delivery attempt.
public enum WebhookDeliveryOutcome: Sendable, Equatable {
    case delivered
    case again(notBefore: Int64)
    case dead
}
