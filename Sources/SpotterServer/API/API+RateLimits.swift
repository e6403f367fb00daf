import SpotterCore
import SpotterPorts
import SpotterProtocol
import WebSocket

/// The limits that protect accounts, and where they are counted (issue 31 item 5).
///
/// | limit | key | shared in a cluster |
/// | --- | --- | --- |
/// | sign-in, phone-code, provider-token and erasure attempts: 30 per 15 min | address | yes (PostgreSQL) |
/// | failed proofs (password, code) on one account: 5 per 15 min | email / user | yes (PostgreSQL) |
/// | phone-code requests (each may send an SMS): 10 per hour | address | yes (PostgreSQL) |
/// | sign-ups: `--signups-per-hour` | address | yes (PostgreSQL) |
/// | session creates: `--session-creates-per-minute` | account | yes (PostgreSQL, `AppSocket+SessionBudget`) |
///
/// On PostgreSQL they are `RateLimitCounters` rows every process counts in, one atomic upsert per attempt on the
/// thread that takes the request to the database anyway (`LimitGate.run`): never on the loop. On SQLite (one
/// process) they stay in memory (`RateLimiter`), decided on the loop before any work is queued. The rule is the same
/// sliding log on both (at most the limit in any span of the window).
///
/// What stays per process or per socket, and what that means behind a balancer with N processes: a socket's command
/// budget and its 64 pending sends (per socket: a client has the same budget whichever process holds it); session
/// acts per minute (`--session-acts-per-minute`, kept by each process's core: a user whose sockets sit on k processes
/// gets at most k× — at most N×; session creates are counted in the shared rows too, `AppSocket+SessionBudget`); exports (one per user and four at once
/// per process: N per user, 4N in all); uploads' bytes in flight, appends in flight and the hashing queue (capacity
/// of one process, not limits on a person). Limits already in the database hold everywhere: a phone code's resend
/// wait and wrong guesses (`otpChallenge`), AI generations (`aiQuota`).
extension API {
    /// The in-memory limiters, by name: the name also prefixes their keys in the shared counters.
    enum AccountLimit: String, Sendable {
        case failuresByAccount = "failures"
        case attemptsByAddress = "attempts"
        case otpRequestsByAddress = "otp"
        case signupsByAddress = "signups"
    }

    /// Admits a request under its limits: every `counted` one takes an attempt, and `account` (when given) refuses
    /// once its failed proofs reached the limit. In memory: decided here, on the loop (429 `rate_limited`), and the
    /// returned gate does nothing. Shared: nothing happens here; the gate counts when the work runs.
    func admit(counting counted: [(AccountLimit, String)], account: String? = nil) throws(APIError) -> LimitGate {
        guard let shared = sharedLimits else {
            for (name, key) in counted { try limit(name, key, check: false) }
            if let account { try limit(.failuresByAccount, account, check: true) }
            return LimitGate(shared: nil, counted: [], account: nil, clock: services.clock)
        }
        return LimitGate(shared: shared, counted: counted.map(count), account: account.map { count((.failuresByAccount, $0)) },
                         clock: services.clock)
    }

    /// In memory: the outcome of a gated request settles the account's failures (success clears them, a wrong proof
    /// adds one). Shared, the gate did it already. On the loop.
    func settleLocally(_ gate: LimitGate, account: String, _ error: APIError?) {
        guard gate.shared == nil else { return }
        if error == nil {
            failuresByAccount.reset(account)
        } else if error?.code == .invalidCredentials {
            _ = failuresByAccount.attempt(account, now: services.clock.now)
        }
    }

    private func count(_ entry: (AccountLimit, String)) -> LimitGate.Count {
        let limiter = limiter(entry.0)
        return LimitGate.Count(key: entry.0.rawValue + "|" + entry.1, limit: limiter.limit, windowSeconds: limiter.windowSeconds)
    }

    private func limiter(_ name: AccountLimit) -> RateLimiter {
        switch name {
        case .failuresByAccount: failuresByAccount
        case .attemptsByAddress: attemptsByAddress
        case .otpRequestsByAddress: otpRequestsByAddress
        case .signupsByAddress: signupsByAddress
        }
    }

    /// Counts an attempt in memory (or, with `check`, only looks) and refuses with 429 past the limit.
    func limit(_ name: AccountLimit, _ key: String, check: Bool) throws(APIError) {
        let now = services.clock.now
        let decision: RateLimiter.Decision
        switch (name, check) {
        case (_, true): decision = limiter(name).check(key, now: now)
        case (.failuresByAccount, false): decision = failuresByAccount.attempt(key, now: now)
        case (.attemptsByAddress, false): decision = attemptsByAddress.attempt(key, now: now)
        case (.otpRequestsByAddress, false): decision = otpRequestsByAddress.attempt(key, now: now)
        case (.signupsByAddress, false): decision = signupsByAddress.attempt(key, now: now)
        }
        if case .limited(let wait) = decision { throw APIError(.rateLimited, retryAfterSeconds: wait) }
    }

    /// `POST /v1/dev/reset-limits`'s shared half: off the loop.
    func resetSharedLimits(_ respond: @escaping Respond) {
        guard let shared = sharedLimits else { return respond(HTTPResponse(status: 204)) }
        server.loop.runBlocking({ blockingResult { try shared.resetAll() } }, then: { result in
            switch result {
            case .success: respond(HTTPResponse(status: 204))
            case .failure(let error): respond(.apiError(error, .english))
            }
        })
    }

    /// Deletes the shared keys with no live attempt (each process does it; deleting twice is harmless).
    func expireSharedLimits() {
        guard let shared = sharedLimits else { return }
        let now = services.clock.now
        server.loop.runBlocking({ blockingResult { try shared.expire(now: now) } }, then: { [logger = server.logger] result in
            if case .failure(let error) = result { logger.warning("could not expire rate-limit counts", metadata: ["error": "\(error.code)"]) }
        })
    }
}

/// A request's limits where they are shared: counted by `run` on the worker or hashing thread, before the work.
struct LimitGate: Sendable {
    struct Count: Sendable {
        let key: String
        let limit: Int
        let windowSeconds: Int64
    }

    /// nil: the limits were kept in memory and decided on the loop already; the gate does nothing.
    let shared: (any RateLimitCounters)?
    let counted: [Count]
    /// The account whose failed proofs are limited: counted as an attempt first (so parallel guesses on several
    /// processes cannot all pass a look taken before any of them failed), cleared on success, kept on a wrong proof,
    /// taken back on any other outcome.
    let account: Count?
    let clock: any Clock

    /// Counts the attempts, then runs `work` and settles the account's count by its outcome. Blocking.
    func run<T>(_ work: () throws -> T) throws -> T {
        guard let shared else { return try work() }
        let now = clock.now
        for count in counted + (account.map { [$0] } ?? []) {
            let decision = try shared.attempt(count.key, limit: count.limit, windowSeconds: count.windowSeconds, now: now)
            if case .limited(let wait) = decision { throw APIError(.rateLimited, retryAfterSeconds: wait) }
        }
        do {
            let value = try work()
            if let account { try? shared.reset(account.key) }
            return value
        } catch {
            if let account, APIError(wrapping: error).code != .invalidCredentials {
                try? shared.refund(account.key)
            }
            throw error
        }
    }
}
