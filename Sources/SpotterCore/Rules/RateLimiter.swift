/// A sliding-log rate limiter (no fixed windows, so no burst at window edges). Pure: time is passed in.
///
/// Guarantees: for each key, at most `limit` attempts are allowed in any span of `windowSeconds`
/// (an attempt at `t` counts while `now < t + windowSeconds`); a refused attempt is not recorded, so
/// `retryAfterSeconds` is exact: retrying at `now + retryAfterSeconds` succeeds if nothing else happens.
/// Memory: at most `limit` timestamps per key; `prune(now:)` drops keys with no live attempts.
public struct RateLimiter: Sendable {
    /// Attempts allowed per window.
    public let limit: Int
    /// The window length in seconds.
    public let windowSeconds: Int64
    /// Per key, the times of live recorded attempts, oldest first.
    private var log: [String: [Int64]] = [:]

    /// `limit` ≥ 1 attempts per `windowSeconds` ≥ 1 seconds (preconditions).
    public init(limit: Int, windowSeconds: Int64) {
        precondition(limit >= 1, "RateLimiter limit must be at least 1")
        precondition(windowSeconds >= 1, "RateLimiter window must be at least 1 second")
        self.limit = limit
        self.windowSeconds = windowSeconds
    }

    /// What an attempt gets.
    public enum Decision: Sendable, Equatable {
        /// Go ahead.
        case allowed
        /// Refused; the earliest retry that can succeed is this many seconds (≥ 1) from now.
        case limited(retryAfterSeconds: Int)
    }

    /// Records an attempt for `key` at `now` when allowed; returns `.limited` (recording nothing) when
    /// `limit` attempts already happened within the window.
    public mutating func attempt(_ key: String, now: Int64) -> Decision {
        var times = live(log[key] ?? [], now: now)
        let decision = decide(times, now: now)
        if decision == .allowed {
            times.append(now)
        }
        log[key] = times.isEmpty ? nil : times
        return decision
    }

    /// Whether an attempt for `key` at `now` would be allowed, without recording one.
    public func check(_ key: String, now: Int64) -> Decision {
        decide(live(log[key] ?? [], now: now), now: now)
    }

    /// Forgets every attempt for `key` (e.g. after a successful sign-in).
    public mutating func reset(_ key: String) {
        log[key] = nil
    }

    /// Forgets every attempt of every key (a test deployment starting clean).
    public mutating func resetAll() {
        log = [:]
    }

    /// Drops expired attempts everywhere and forgets keys that have none left.
    public mutating func prune(now: Int64) {
        var kept: [String: [Int64]] = [:]
        kept.reserveCapacity(log.count)
        for (key, times) in log {
            let remaining = live(times, now: now)
            if !remaining.isEmpty { kept[key] = remaining }
        }
        log = kept
    }

    /// How many keys currently hold attempts.
    public var trackedKeys: Int { log.count }

    /// The attempts that still count at `now`, oldest first (robust to a clock that stepped back).
    private func live(_ times: [Int64], now: Int64) -> [Int64] {
        Self.live(times, windowSeconds: windowSeconds, now: now)
    }

    private func decide(_ liveTimes: [Int64], now: Int64) -> Decision {
        Self.decide(liveTimes, limit: limit, windowSeconds: windowSeconds, now: now)
    }

    /// What an attempt at `now` gets when `times` are the key's recorded attempts (in any order, expired ones
    /// included): the rule above, for counters kept elsewhere (the cluster's, in PostgreSQL).
    public static func decision(after times: [Int64], limit: Int, windowSeconds: Int64, now: Int64) -> Decision {
        decide(live(times, windowSeconds: windowSeconds, now: now), limit: max(1, limit), windowSeconds: windowSeconds, now: now)
    }

    /// An attempt at `t` counts while `now < t + windowSeconds` (saturating: no instant overflows).
    private static func live(_ times: [Int64], windowSeconds: Int64, now: Int64) -> [Int64] {
        times.filter { time in
            let (end, overflow) = time.addingReportingOverflow(windowSeconds)
            return overflow || now < end
        }.sorted()
    }

    private static func decide(_ liveTimes: [Int64], limit: Int, windowSeconds: Int64, now: Int64) -> Decision {
        guard liveTimes.count >= limit else { return .allowed }
        // The attempt that must expire before a slot frees up is the limit-th newest.
        let blocking = liveTimes[liveTimes.count - limit]
        let (end, overflow) = blocking.addingReportingOverflow(windowSeconds)
        let (wait, behind) = (overflow ? Int64.max : end).subtractingReportingOverflow(now)
        return .limited(retryAfterSeconds: behind ? Int.max : Int(max(1, wait)))
    }
}
