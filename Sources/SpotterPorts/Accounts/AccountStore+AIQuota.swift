import SpotterCore
import SpotterProtocol

/// AI-generation quotas (issue 30 item 4): one counter per user, `aiQuota` (`userId`, the first instant of the window
/// it counts in, how many were consumed). A consume is one transaction with its `serviceRequest` idempotency record:
/// after a crash either both are there (a retry gets the stored answer and consumes nothing) or neither (the retry
/// consumes). The count moves by one conditional upsert, so parallel consumes — from one process's writer or from
/// several processes on PostgreSQL — never take more than the window allows.
extension AccountStore {
    /// The "v26-ai-quota" (SQLite) and "v16-ai-quota" (PostgreSQL) migration; the same SQL on both engines.
    public static let aiQuotaSchema = """
        CREATE TABLE aiQuota (
            userId TEXT PRIMARY KEY,
            windowStart BIGINT NOT NULL,
            used BIGINT NOT NULL
        );
        """

    /// A consume refused: the window's generations are used up until `resetsAt`. Nothing is kept (the idempotency
    /// claim is deleted before the throw): a retry after the reset may use the same `Idempotency-Key`.
    public struct AIQuotaExhausted: Error, Sendable, Equatable {
        public var tier: String
        public var resetsAt: Int64
    }

    public enum AIGenerationConsume: Sendable, Equatable {
        /// Counted now; the answer JSON is stored under the key.
        case accepted(AIGenerationConsumeView, json: String)
        /// The same request under the same key was answered before: this is that answer; nothing is counted.
        case replayed(String)
        /// The key went with another request (another user).
        case reused
        /// The key is claimed by a request still being acted on.
        case inProgress
    }

    /// Consumes one AI generation of `userID` for the service key `keyID`, idempotently by `idempotencyKey`.
    /// `metered`: tiers are in force (`--tiers`; otherwise nobody is limited). Throws `.notFound` for an unknown or
    /// erased user, `AIQuotaExhausted` when the window is used up.
    public func consumeAIGeneration(userID: String, keyID: String, idempotencyKey: String, requestHash: String,
                                    metered: Bool, now: Int64) throws -> AIGenerationConsume {
        try write { db in
            try db.execute("""
                INSERT INTO serviceRequest (keyId, idempotencyKey, requestHash, response, createdAt) VALUES (?, ?, ?, '', ?)
                ON CONFLICT (keyId, idempotencyKey) DO NOTHING
                """, [keyID, idempotencyKey, requestHash, now])
            if db.changes == 0 {
                guard let row = try db.fetchOne("""
                    SELECT requestHash, response FROM serviceRequest WHERE keyId = ? AND idempotencyKey = ?
                    """, [keyID, idempotencyKey]) else { return .inProgress }
                guard row["requestHash"] as String == requestHash else { return .reused }
                let response: String = row["response"]
                return response.isEmpty ? .inProgress : .replayed(response)
            }
            // A refusal takes the claim back itself: PostgreSQL's writer commits a lone job that threw without an SQL
            // error, so a throw alone would leave the key claimed and unanswered.
            func release() throws {
                try db.execute("DELETE FROM serviceRequest WHERE keyId = ? AND idempotencyKey = ?", [keyID, idempotencyKey])
            }
            guard let user = try AccountStore.user(db, id: userID), user.erasedAt == nil else {
                try release()
                throw AccountStoreError.notFound
            }
            let allowance = AIQuota.allowance(role: user.role, tier: user.tier, metered: metered)
            let window = AIQuota.Window(at: now, span: allowance.span, in: TimeZoneRules.zone(user.timeZone))
            // A new window starts the count at 1; within the window it moves only while under the limit.
            try db.execute("""
                INSERT INTO aiQuota (userId, windowStart, used) VALUES (?, ?, 1)
                ON CONFLICT (userId) DO UPDATE SET
                    used = CASE WHEN aiQuota.windowStart = excluded.windowStart THEN aiQuota.used + 1 ELSE 1 END,
                    windowStart = excluded.windowStart
                WHERE aiQuota.windowStart <> excluded.windowStart OR aiQuota.used < ?
                """, [userID, window.startsAt, Int64(allowance.limit ?? Int.max)])
            guard db.changes > 0 else {
                try release()
                throw AIQuotaExhausted(tier: user.tier, resetsAt: window.resetsAt)
            }
            let used: Int64 = try db.fetchValue("SELECT used FROM aiQuota WHERE userId = ?", [userID]) ?? 1
            let view = AIGenerationConsumeView(
                userId: userID, tier: metered && user.role == "client" ? user.tier : nil,
                aiGenerations: AIGenerationAllowance(used: Int(used), limit: allowance.limit, window: allowance.span.rawValue,
                                                     resetsAt: window.resetsAt))
            let json = JSONText.encoder.encodeToString(view) + "\n"
            try db.execute("UPDATE serviceRequest SET response = ? WHERE keyId = ? AND idempotencyKey = ?", [json, keyID, idempotencyKey])
            return .accepted(view, json: json)
        }
    }

    /// The user's AI generations in the window `now` falls in (nil for an unknown user).
    public func aiGenerations(userID: String, metered: Bool, now: Int64) throws -> AIGenerationAllowance? {
        try read { db in
            guard let user = try AccountStore.user(db, id: userID) else { return nil }
            let allowance = AIQuota.allowance(role: user.role, tier: user.tier, metered: metered)
            let window = AIQuota.Window(at: now, span: allowance.span, in: TimeZoneRules.zone(user.timeZone))
            let used: Int64 = try db.fetchValue("SELECT used FROM aiQuota WHERE userId = ? AND windowStart = ?",
                                                [userID, window.startsAt]) ?? 0
            return AIGenerationAllowance(used: Int(used), limit: allowance.limit, window: allowance.span.rawValue,
                                         resetsAt: window.resetsAt)
        }
    }
}

extension AccountStore {
    /// The user's stored AI-generation counter, as kept (for the export): the first instant of the window it counts
    /// in and how many were consumed in it; nil when they never consumed one.
    public struct AIQuotaCounter: Sendable, Equatable, Encodable {
        public var windowStart: Int64
        public var used: Int
        enum CodingKeys: String, CodingKey { case used, windowStart = "window_start" }
    }

    public func aiQuotaCounter(userID: String) throws -> AIQuotaCounter? {
        try read { db in
            try db.fetchOne("SELECT windowStart, used FROM aiQuota WHERE userId = ?", [userID])
                .map { AIQuotaCounter(windowStart: $0["windowStart"], used: $0["used"]) }
        }
    }
}
