import SpotterCore

/// Rate-limit counters every process of a cluster shares (issue 31 item 5): the limits that protect accounts —
/// sign-in attempts per address, failed proofs per account, phone-code requests per address, sign-ups per address
/// — count in the database, so three processes behind a balancer allow what one would. PostgreSQL's engine keeps
/// them (`PostgresRateLimits`); with SQLite (one process) the server keeps them in memory (`RateLimiter`) and
/// `ServerStorage.rateLimits` is nil.
///
/// The rule is `RateLimiter`'s, exactly (a sliding log, `RateLimiter.decision(after:…)`): at most `limit` attempts per
/// key in any span of `windowSeconds`; a refused attempt is not counted; `retryAfterSeconds` is when the oldest
/// attempt in the way expires. Every method blocks on the database: call it off the event loop, where the request
/// goes to the database anyway (the worker or hashing threads).
public protocol RateLimitCounters: Sendable {
    /// Counts one attempt for `key` at `now` when fewer than `limit` are live (one atomic statement); otherwise
    /// refuses, counting nothing.
    func attempt(_ key: String, limit: Int, windowSeconds: Int64, now: Int64) throws -> RateLimiter.Decision
    /// Whether an attempt would be allowed now, counting nothing.
    func check(_ key: String, limit: Int, windowSeconds: Int64, now: Int64) throws -> RateLimiter.Decision
    /// Takes back the newest attempt counted for `key` (one that turned out not to count, e.g. a proof refused for a
    /// missing field rather than a wrong password).
    func refund(_ key: String) throws
    /// Forgets `key`'s attempts (a successful sign-in clears the account's failures).
    func reset(_ key: String) throws
    /// Forgets every key's attempts (`POST /v1/dev/reset-limits`).
    func resetAll() throws
    /// Deletes the keys none of whose attempts counts at `now` any more; returns how many.
    @discardableResult func expire(now: Int64) throws -> Int
}
