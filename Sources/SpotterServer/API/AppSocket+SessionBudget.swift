import SpotterCore
import SpotterProtocol

/// The per-account budget of session creates (`session.invite` and `session.request`, `--session-creates-per-minute`)
/// across every process of a cluster.
///
/// The core keeps the budget in memory (`CoachingCore.sessionCreates`), which is all of it for one process. With
/// PostgreSQL the processes also count each create in the shared rate-limit table (`RateLimitCounters`, the
/// `rateLimit` rows the sign-in limits use), before the command reaches the core: one atomic upsert off the loop,
/// so an account whose sockets sit on three processes still gets the budget once, not three times. The key is the
/// account's id; the window and the limit are the core's, so the shared count refuses exactly where the core's
/// own would on one process (and the core's then never does). On SQLite nothing changes.
extension AppSocket {
    /// The shared rows' key for `userID`'s session creates.
    static func sessionCreatesKey(_ userID: String) -> String { "sessionCreates|" + userID }

    /// Runs `next` once the shared count admits one more create of this socket's account; past the budget the
    /// command is answered `rate_limited` (field `type`, with `retry_after`), as the core answers it; a store that
    /// cannot be read answers `unavailable` (retry in 1 s), as the availability check does. On the loop.
    func withSharedSessionCreate(id: String, then next: @escaping () -> Void) {
        guard let shared = api.sharedLimits else { return next() }
        let key = Self.sessionCreatesKey(actor.userID)
        let limit = max(1, api.server.config.sessionCreatesPerMinute)
        let now = api.services.clock.now
        api.server.loop.runBlocking({ blockingResult { try shared.attempt(key, limit: limit, windowSeconds: 60, now: now) } },
                                    then: { [weak self] result in
            guard let self else { return }
            switch result {
            case .success(.allowed):
                next()
            case .success(.limited(let wait)):
                reply(id: id, error: APIError(.rateLimited, field: "type", retryAfterSeconds: wait))
            case .failure:
                reply(id: id, error: APIError(.unavailable, retryAfterSeconds: 1))
            }
        })
    }
}
