import SpotterCore
import SpotterPorts

/// How the server pushes (`ServerConfig.push`; the `--push-*` and provider flags).
public struct PushSettings: Sendable {
    /// One per platform that can be pushed to (APNs, FCM, Web Push); a device of another platform gets nothing.
    /// None: the push consumer does not run.
    public var providers: [any PushProvider] = []
    /// `--push-preview`.
    public var preview = PushPreview.sender
    /// `--push-coalesce` (seconds in the flag): one visible push per thread and device per this, the messages that
    /// arrive meanwhile counted into the next.
    public var coalesceMilliseconds: Int64 = 30_000
    /// Pending pushes per platform at most; past it new pushes for that platform are dropped and counted
    /// (`spotter_push_failed_total{reason="queue_full"}`): a provider that has been down long enough to fill it
    /// would deliver them stale.
    public var queueLimit = 100_000
    /// Pushes handed to one provider and not yet answered, at most.
    public var inFlightPerProvider = 256
    /// How often the dispatcher looks for due pushes when nothing woke it.
    public var pollMilliseconds = 250
    /// The first retry's delay; doubled after each further failure (with ±50 % jitter), at most `retryMaxMilliseconds`.
    /// A provider's `Retry-After` wins when it gives one (at most an hour).
    public var retryBaseMilliseconds: Int64 = 1_000
    public var retryMaxMilliseconds: Int64 = 60_000
    /// Attempts before a push is given up (or earlier, when it expires).
    public var maxAttempts = 20

    public init() {}

    /// The delay before attempt `attempts + 1`, `unit` in 0..<1 the jitter's draw.
    func retryDelay(afterAttempts attempts: Int, retryAfterSeconds: Int?, unit: Double) -> Int64 {
        if let retryAfterSeconds { return Int64(min(max(retryAfterSeconds, 0), 3600)) * 1000 }
        let doublings = min(max(attempts, 0), 20)
        let base = min(retryBaseMilliseconds << Int64(doublings), retryMaxMilliseconds)
        return max(1, Int64(Double(base) * (0.5 + unit)))
    }
}
