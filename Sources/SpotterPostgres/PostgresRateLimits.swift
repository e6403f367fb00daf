import SpotterCore
import SpotterPorts

/// The cluster's shared rate-limit counters (`RateLimitCounters`) in PostgreSQL's `rateLimit` table: one row per
/// key (its digest) with the times of its live attempts (at most `limit` of them, oldest first) and when the newest stops
/// counting. Each attempt is one `INSERT … ON CONFLICT DO UPDATE … RETURNING` in autocommit on connections of
/// its own: the row lock makes parallel attempts from every process take turns, and the log's writer and its
/// append lock are not involved, so a storm of sign-ins neither waits behind the chat's group commits nor holds
/// them up.
///
/// Clocks of different processes may disagree a little: an attempt is stamped with its process's `now` and counts
/// like any other (the times are sorted when read), so a lagging clock cannot start a key's count again.
/// `expire` deletes rows with no live attempt (each server calls it about once a minute).
public final class PostgresRateLimits: RateLimitCounters {
    /// The "v20-rate-limits" migration.
    static let schema = """
        CREATE TABLE rateLimit (
            limitKey text PRIMARY KEY,
            times bigint[] NOT NULL,
            liveUntil bigint NOT NULL
        );
        CREATE INDEX rateLimit_liveUntil ON rateLimit (liveUntil);
        """

    private let connections: PGReaderPool

    public init(url: String) {
        connections = PGReaderPool(url: url)
    }

    public func attempt(_ key: String, limit: Int, windowSeconds: Int64, now: Int64) throws -> RateLimiter.Decision {
        let span = Span(now: now, windowSeconds: windowSeconds)
        // The live attempts ($4: counting from) are kept and this one added, only while fewer than the limit live.
        let counted = try connections.read { connection in
            try connection.exec("""
                INSERT INTO rateLimit AS r (limitKey, times, liveUntil) VALUES ($1, ARRAY[$2::bigint], $3)
                ON CONFLICT (limitKey) DO UPDATE SET
                    times = ARRAY(SELECT t FROM unnest(r.times) AS t WHERE t >= $4 ORDER BY t) || $2::bigint,
                    liveUntil = GREATEST(r.liveUntil, excluded.liveUntil)
                WHERE (SELECT count(*) FROM unnest(r.times) AS t WHERE t >= $4) < $5
                RETURNING 1
                """, [Self.row(key), String(now), String(span.liveUntil), String(span.liveFrom), String(max(1, limit))])
        }
        if !counted.isEmpty { return .allowed }
        // Refused: the wait, read back (an attempt that expired in between still refuses this one: retry in 1 s).
        let refusal = try check(key, limit: limit, windowSeconds: windowSeconds, now: now)
        return refusal == .allowed ? .limited(retryAfterSeconds: 1) : refusal
    }

    public func check(_ key: String, limit: Int, windowSeconds: Int64, now: Int64) throws -> RateLimiter.Decision {
        let times = try connections.read { connection in
            try connection.exec("SELECT t FROM rateLimit, unnest(times) AS t WHERE limitKey = $1", [Self.row(key)])
        }.rows.compactMap { $0.first.flatMap { $0.flatMap { Int64($0) } } }
        return RateLimiter.decision(after: times, limit: limit, windowSeconds: windowSeconds, now: now)
    }

    public func refund(_ key: String) throws {
        _ = try connections.read { connection in
            try connection.exec("""
                UPDATE rateLimit SET times = ARRAY(SELECT t FROM unnest(times) AS t ORDER BY t LIMIT GREATEST(cardinality(times) - 1, 0))
                WHERE limitKey = $1
                """, [Self.row(key)])
        }
    }

    public func reset(_ key: String) throws {
        _ = try connections.read { connection in try connection.exec("DELETE FROM rateLimit WHERE limitKey = $1", [Self.row(key)]) }
    }

    public func resetAll() throws {
        _ = try connections.read { connection in try connection.exec("DELETE FROM rateLimit") }
    }

    @discardableResult
    public func expire(now: Int64) throws -> Int {
        try connections.read { connection in
            try connection.exec("DELETE FROM rateLimit WHERE liveUntil <= $1 OR cardinality(times) = 0", [String(now)]).affected
        }
    }

    /// The row of `key`: its SHA-256, so the table holds no address or email, any key fits (a client's raw email
    /// may hold a NUL, which PostgreSQL's text refuses) and every row's key is 64 characters.
    static func row(_ key: String) -> String { Digest.sha256Hex(key) }

    /// Which attempts count at `now` (those at `liveFrom` or later) and until when one made now counts: `RateLimiter`'s
    /// `now < t + windowSeconds`, saturating at the ends of `Int64`.
    struct Span {
        let liveFrom: Int64
        let liveUntil: Int64

        init(now: Int64, windowSeconds: Int64) {
            let (back, below) = now.subtractingReportingOverflow(max(1, windowSeconds) - 1)
            liveFrom = below ? .min : back
            let (ahead, above) = now.addingReportingOverflow(max(1, windowSeconds))
            liveUntil = above ? .max : ahead
        }
    }
}
