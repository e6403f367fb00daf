import SpotterPorts

/// How the server delivers webhooks (`ServerConfig.webhooks`; the `--webhook-*` flags). Deploy/README.md,
/// "Webhooks", says it for operators.
public struct WebhookSettings: Sendable {
    /// What sends the requests; nil: no webhook is delivered (the consumer and the dispatcher do not run; the admin
    /// endpoints still register endpoints). `spotter serve` always sets one.
    public var transport: (any WebhookTransport)?
    /// `--webhook-retry-for` (seconds in the flag): a delivery failing this long after its first attempt is
    /// dead-lettered. 24 h.
    public var retryForMilliseconds: Int64 = 24 * 3600 * 1000
    /// `--webhook-retry-base` (ms): the first retry's delay, doubled after each failure (±50 % jitter), at most
    /// `retryMaxMilliseconds`.
    public var retryBaseMilliseconds: Int64 = 5_000
    public var retryMaxMilliseconds: Int64 = 3_600_000
    /// One request's whole time, connecting included.
    public var timeoutSeconds: Double = 10
    /// Deliveries pending per endpoint at most; past it new events for that endpoint go straight to its
    /// dead-letter list (`outbox_full`), to be replayed once it is back.
    public var outboxLimit = 10_000
    /// How often the dispatcher looks for due deliveries when nothing woke it.
    public var pollMilliseconds = 250

    public init() {}

    /// The delay before attempt `attempts + 2`, `unit` in 0..<1 the jitter's draw.
    func retryDelay(afterAttempts attempts: Int, unit: Double) -> Int64 {
        var base = max(retryBaseMilliseconds, 1)
        for _ in 0..<max(attempts, 0) where base < retryMaxMilliseconds { base *= 2 }
        base = min(base, max(retryMaxMilliseconds, 1))
        return max(1, Int64(Double(base) * (0.5 + unit)))
    }
}
