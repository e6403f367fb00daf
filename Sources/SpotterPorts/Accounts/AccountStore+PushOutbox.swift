import Foundation
import SpotterCore

/// The push outbox (`pushOutbox`, `pushCursor`): pushes decided from the log and not yet done with. The push
/// consumer writes a batch's pushes and the newest record it handled in one transaction (a record handed over again
/// after a crash makes nothing new); the dispatcher claims due rows, hands them to the providers and writes back
/// what became of them. Times here are milliseconds.
extension AccountStore {
    /// The newest record whose pushes are in the outbox (0: none yet).
    public func pushHandledThrough(_ name: String) throws -> Int64 {
        try read { db in try db.fetchValue("SELECT pos FROM pushCursor WHERE name = ?", [name]) ?? 0 }
    }

    /// Takes in `entries` (in record order) and moves the cursor `name` to `handledThrough`, in one transaction.
    /// Entries of records at or before the saved cursor are passed over. See `PushIntake` for coalescing, the badge
    /// window and the queue bound.
    public func enqueuePushes(_ entries: [PushEntry], cursor name: String, handledThrough: Int64, now: Int64,
                              _ intake: PushIntake) throws -> PushIntakeResult {
        try write { db in
            let saved: Int64 = try db.fetchValue("SELECT pos FROM pushCursor WHERE name = ?", [name]) ?? 0
            var result = PushIntakeResult()
            var pending: [PushAddress.Platform: Int] = [:]
            for entry in entries where entry.push.pos > saved {
                if entry.push.kind == .badge {
                    try Self.takeBadge(db, entry, now: now, intake, &result)
                    continue
                }
                if entry.push.kind == .message, intake.coalesceMilliseconds > 0, try Self.coalesce(db, entry, now: now) {
                    result.coalesced += 1
                    continue
                }
                if pending[entry.platform] == nil {
                    pending[entry.platform] = try db.fetchValue(
                        "SELECT COUNT(*) FROM pushOutbox WHERE status = 'pending' AND platform = ?", [entry.platform.rawValue]) ?? 0
                }
                guard pending[entry.platform, default: 0] < intake.queueLimit else {
                    result.droppedFull[entry.platform, default: 0] += 1
                    continue
                }
                var notBefore = now
                if entry.push.kind == .message {
                    let last: Int64? = try db.fetchValue("""
                        SELECT MAX(COALESCE(sentAt, notBefore)) FROM pushOutbox
                        WHERE deviceId = ? AND threadId = ? AND kind = 'message' AND status IN ('sending', 'sent')
                        """, [entry.deviceID, entry.push.threadID])
                    if let last { notBefore = max(now, last + intake.coalesceMilliseconds) }
                }
                try Self.insert(db, entry, notBefore: notBefore, now: now)
                if db.changes > 0 {
                    pending[entry.platform, default: 0] += 1
                    result.queued += 1
                }
            }
            if handledThrough > saved {
                try db.execute("""
                    INSERT INTO pushCursor (name, pos) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET pos = excluded.pos
                    """, [name, handledThrough])
            }
            return result
        }
    }

    /// A message for a thread with a push to the device still waiting: counted into the newest such push (after a
    /// failed send an older one may be waiting again, under an id the device may have seen), worded again
    /// ("3 new messages from Sara"), the badge and the preview brought up to date. False: nothing waiting.
    private static func coalesce(_ db: any SQLDatabase, _ entry: PushEntry, now: Int64) throws -> Bool {
        guard let row = try db.fetchOne("""
            SELECT id, count, lastPos FROM pushOutbox
            WHERE deviceId = ? AND threadId = ? AND kind = 'message' AND status = 'pending'
            ORDER BY lastPos DESC LIMIT 1
            """, [entry.deviceID, entry.push.threadID]) else { return false }
        let lastPos: Int64 = row["lastPos"]
        guard entry.push.pos > lastPos else { return true }
        let count: Int = row["count"] + 1
        let title = PushWords(entry.push.language).newMessages(count, from: entry.push.sender)
        try db.execute("""
            UPDATE pushOutbox SET count = ?, title = ?, body = ?, badge = ?, lastPos = ?, quiet = ?, urgent = ?, expiresAt = ?,
                data = ? WHERE id = ?
            """, [count, title, entry.push.body, entry.push.badge, entry.push.pos, entry.push.quiet, entry.push.urgent,
                  entry.push.expiresAt, dataJSON(entry.push.data), row["id"] as String])
        return true
    }

    /// A read: the reader's waiting message pushes for the thread are taken back, and a silent badge update goes to
    /// each device that had a visible push lately (or had one taken back).
    private static func takeBadge(_ db: any SQLDatabase, _ entry: PushEntry, now: Int64, _ intake: PushIntake,
                                  _ result: inout PushIntakeResult) throws {
        try db.execute("DELETE FROM pushOutbox WHERE deviceId = ? AND threadId = ? AND kind = 'message' AND status = 'pending'",
                       [entry.deviceID, entry.push.threadID])
        let withdrew = db.changes
        result.withdrawn += withdrew
        let recent = try db.fetchOne("""
            SELECT 1 FROM pushOutbox WHERE deviceId = ? AND kind <> 'badge' AND status IN ('sending', 'sent')
                AND COALESCE(sentAt, notBefore) >= ?
            """, [entry.deviceID, now - intake.badgeWindowMilliseconds]) != nil
        guard withdrew > 0 || recent else { return }
        // A newer badge replaces one still waiting.
        try db.execute("DELETE FROM pushOutbox WHERE deviceId = ? AND kind = 'badge' AND status = 'pending'", [entry.deviceID])
        try insert(db, entry, notBefore: now, now: now)
        result.queued += db.changes
    }

    private static func insert(_ db: any SQLDatabase, _ entry: PushEntry, notBefore: Int64, now: Int64) throws {
        let push = entry.push
        try db.execute("""
            INSERT INTO pushOutbox (id, deviceId, userId, platform, threadId, kind, status, title, body, quiet, badge, data, urgent,
                                    expiresAt, sender, language, count, lastPos, enqueuedAt, notBefore, attempts, sentAt)
            VALUES (?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?, 0, NULL)
            ON CONFLICT (id) DO NOTHING
            """, [entry.id, entry.deviceID, push.userID, entry.platform.rawValue, push.threadID, push.kind.rawValue, push.title,
                  push.body, push.quiet, push.badge, dataJSON(push.data), push.urgent, push.expiresAt, push.sender,
                  push.language.rawValue, push.pos, now, notBefore])
    }

    /// Up to `limit` pushes for `platform` due at `now`, oldest first, marked sending, each with its device's
    /// address as it stands. Pushes whose device is gone are dropped on the way.
    public func claimDuePushes(platform: PushAddress.Platform, now: Int64, limit: Int) throws -> [OutboxPush] {
        guard limit > 0 else { return [] }
        return try write { db in
            let rows = try db.fetchAll("""
                SELECT o.*, d.token, d.topic, d.environment, d.p256dh, d.auth, d.id AS present
                FROM pushOutbox o LEFT JOIN device d ON d.id = o.deviceId
                WHERE o.status = 'pending' AND o.platform = ? AND o.notBefore <= ?
                ORDER BY o.notBefore, o.lastPos, o.id LIMIT ?
                """, [platform.rawValue, now, limit])
            var claimed: [OutboxPush] = []
            for row in rows {
                let id: String = row["id"]
                let present: String? = row["present"]
                guard present != nil else {
                    try db.execute("DELETE FROM pushOutbox WHERE id = ?", [id])
                    continue
                }
                try db.execute("UPDATE pushOutbox SET status = 'sending' WHERE id = ?", [id])
                claimed.append(Self.outboxPush(row, platform: platform))
            }
            return claimed
        }
    }

    private static func outboxPush(_ row: SQLRow, platform: PushAddress.Platform) -> OutboxPush {
        let address = PushAddress(platform: platform, token: row["token"], topic: row["topic"], environment: row["environment"],
                                  p256dh: row["p256dh"], auth: row["auth"])
        let kind: String = row["kind"]
        let title: String = row["title"]
        let alert = kind == PlannedPush.Kind.badge.rawValue
            ? nil : PushMessage.Alert(title: title, body: row["body"], quiet: row["quiet"])
        let threadID: String = row["threadId"]
        var data = (try? JSONDecoder().decode([String: String].self, from: Data((row["data"] as String).utf8))) ?? [:]
        let count: Int = row["count"]
        if count > 1 { data["count"] = String(count) }
        let message = PushMessage(id: row["id"], address: address, alert: alert, badge: row["badge"],
                                  collapseKey: alert == nil ? "badge" : collapseKey(threadID), category: kind, data: data,
                                  expiresAt: row["expiresAt"], urgent: row["urgent"])
        return OutboxPush(message: message, deviceID: row["deviceId"], attempts: row["attempts"], enqueuedAt: row["enqueuedAt"])
    }

    /// The collapse key of a thread's pushes: a thread id is a UUID (36 characters); the providers take at most 32
    /// (Web Push `Topic`), so its hex digits without the dashes.
    public static func collapseKey(_ threadID: String) -> String {
        String(threadID.filter { $0 != "-" }.prefix(32))
    }

    /// Writes back what became of pushes handed to providers (`now`: when, for `sent`).
    public func finishPushes(_ outcomes: [(id: String, deviceID: String, PushDisposition)], now: Int64) throws {
        guard !outcomes.isEmpty else { return }
        try write { db in
            for (id, deviceID, disposition) in outcomes {
                switch disposition {
                case .sent:
                    try db.execute("UPDATE pushOutbox SET status = 'sent', sentAt = ? WHERE id = ?", [now, id])
                case .again(let notBefore):
                    try db.execute("UPDATE pushOutbox SET status = 'pending', attempts = attempts + 1, notBefore = ? WHERE id = ?",
                                   [notBefore, id])
                case .dropped:
                    try db.execute("DELETE FROM pushOutbox WHERE id = ?", [id])
                case .deviceGone:
                    try db.execute("DELETE FROM device WHERE id = ?", [deviceID])
                    try db.execute("DELETE FROM pushOutbox WHERE deviceId = ?", [deviceID])
                }
            }
        }
    }

    /// At start-up: pushes a crash left in flight go again (with the same ids).
    @discardableResult
    public func resendInterruptedPushes() throws -> Int {
        try write { db in
            try db.execute("UPDATE pushOutbox SET status = 'pending' WHERE status = 'sending'")
            return db.changes
        }
    }

    /// Forgets sent pushes older than `sentBefore` and drops pending ones that expired before `now` (seconds:
    /// `expiresAt`); returns how many expired.
    public func purgePushes(sentBefore: Int64, nowSeconds: Int64) throws -> Int {
        try write { db in
            try db.execute("DELETE FROM pushOutbox WHERE status = 'sent' AND sentAt < ?", [sentBefore])
            try db.execute("DELETE FROM pushOutbox WHERE status = 'pending' AND expiresAt < ?", [nowSeconds])
            return db.changes
        }
    }

    /// Pending pushes per platform, for `/metrics`.
    public func pendingPushes() throws -> [PushAddress.Platform: Int] {
        try read { db in
            var counts: [PushAddress.Platform: Int] = [:]
            for row in try db.fetchAll("SELECT platform, COUNT(*) AS n FROM pushOutbox WHERE status = 'pending' GROUP BY platform") {
                if let platform = PushAddress.Platform(rawValue: row["platform"]) { counts[platform] = row["n"] }
            }
            return counts
        }
    }

    private static func dataJSON(_ data: [String: String]) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return (try? encoder.encode(data)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }
}
