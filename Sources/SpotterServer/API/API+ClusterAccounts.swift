import SpotterCore
import SpotterPorts
import SpotterProtocol

/// What the other processes of a cluster must hear of an account change made here (issue 31): revoked sessions and
/// profile changes are applied here at once, then logged as one `account` record (`CoreRunner+Accounts`) that the
/// others follow. Alone, the record changes nothing anywhere.
extension API {
    /// Sessions revoked here (a sign-out, a reused refresh token, a password change), after the accounts committed
    /// it: refused and closed here at once, then logged, one record per user, for the other processes.
    func sessionsRevoked(_ sessions: [RevokedSession]) {
        // A session this process knows as revoked already (signed out twice) was told to the others the first time.
        let fresh = sessions.filter { revokedSessions[$0.familyID] == nil }
        for session in sessions { sessionRevoked(session) }
        var families: [String: (revokedAt: Int64, ids: [String])] = [:]
        for session in fresh {
            families[session.userID, default: (session.revokedAt, [])].ids.append(session.familyID)
            families[session.userID]!.revokedAt = max(families[session.userID]!.revokedAt, session.revokedAt)
        }
        for (userID, revoked) in families.sorted(by: { $0.key < $1.key }) {
            server.runner.accountChanged(AccountChangeRecord(userID: userID, .sessionsRevoked(familyIDs: revoked.ids,
                                                                                              revokedAt: revoked.revokedAt)))
        }
    }

    /// Revocations another process made (its record followed, or the accounts read): refused and closed here, not
    /// counted again. Applying one twice changes nothing.
    func learnRevocations(_ sessions: [RevokedSession]) {
        for session in sessions { sessionRevoked(session, counted: false) }
    }

    /// A profile change committed here (the user as stored): the other processes keep the name, language and zone
    /// in memory (directory, thread lists), so the record carries them as committed. The tier has its own way
    /// (`changeTier`).
    func profileChanged(_ user: UserRecord) {
        server.runner.accountChanged(AccountChangeRecord(userID: user.id, .profile(
            AccountProfile(fullName: user.fullName, language: user.language, timeZone: user.timeZone))))
    }

    // MARK: - A token checked against the accounts

    /// Cluster mode: a token's session as the accounts hold it, before the token is let in (an HTTP call, a
    /// socket's upgrade). A sign-out acknowledged by another process is committed in the accounts before its
    /// answer, while this process learns it only when it follows the `account` record, tens of milliseconds later
    /// (longer while the log stream is down); read here, the promise holds everywhere at once: after the 204, no
    /// process accepts the token. One indexed read off the loop per check; alone (no follower) `then` runs at
    /// once and nothing is read: this process made every revocation itself. A failed read refuses with
    /// `unavailable` (the store is out of reach for everything else too) rather than let a revoked token in.
    ///
    /// `caughtUp` (a socket's upgrade): the log's head is read too, and the answer waits (at most 1.5 s) until the
    /// follower holds every record through it, so the socket's hello and replay show what any process committed
    /// before it opened — a thread linked on another process a moment ago, its messages — as one process would.
    func checkedAcrossProcesses(_ claims: AccessClaims?, caughtUp: Bool = false, then: @escaping (APIError?) -> Void) {
        guard let claims, let follower = server.runner.follower else { return then(nil) }
        let accounts = services.accounts, log = follower.log
        let familyID = claims.sessionID
        server.loop.runBlocking({ Result {
            (try accounts.revocation(ofSession: familyID), caughtUp ? try log.newestPosition() : nil)
        } }, then: { [self] result in
            switch result {
            case .success((nil, let head)):
                // Learnt meanwhile (the record followed while the read ran)?
                let decided = { [self] in then(revokedSessions[familyID] == nil ? nil : APIError(.sessionRevoked)) }
                guard let head else { return decided() }
                follower.whenApplied(through: head, then: decided)
            case .success((let revoked?, _)):
                if revokedSessions[familyID] == nil {
                    server.metrics.revocationsFromAccounts.increment()
                    learnRevocations([revoked])
                }
                then(APIError(.sessionRevoked))
            case .failure(let error):
                server.logger.warning("reading a session's revocation failed", metadata: ["error": "\(error)"])
                then(APIError(.unavailable, retryAfterSeconds: 1))
            }
        })
    }

    // MARK: - The safety net

    /// Cluster mode, once a second from the server's sweep: every `RevocationPoll.everySeconds`, revocations
    /// committed since the last read (less a minute, for the revoking process's clock and commit delay) are read
    /// off the loop and learnt. It covers a record lost between the accounts' commit and the log's append (the
    /// process died), at the cost of one indexed query per process every few seconds.
    func pollRevocations() {
        let now = services.clock.now
        guard !revocationPoll.reading, now >= revocationPoll.readThrough + RevocationPoll.everySeconds else { return }
        revocationPoll.reading = true
        let since = revocationPoll.readThrough - RevocationPoll.slackSeconds
        let accounts = services.accounts
        server.loop.runBlocking({ Result { try accounts.sessionsRevoked(since: since) } }, then: { [self] result in
            revocationPoll.reading = false
            switch result {
            case .success(let revoked):
                revocationPoll.readThrough = now
                let unknown = revoked.filter { revokedSessions[$0.familyID] == nil }
                if !unknown.isEmpty { server.metrics.revocationsFromAccounts.increment(by: unknown.count) }
                learnRevocations(unknown)
            case .failure(let error):
                // Tried again at the next sweep, from the same time.
                server.logger.warning("reading recent revocations failed", metadata: ["error": "\(error)"])
            }
        })
    }
}

/// Where the periodic read of revocations stands (`API.pollRevocations`).
struct RevocationPoll {
    /// How often revocations are read (seconds): the longest a lost record delays a refusal elsewhere.
    static let everySeconds: Int64 = 3
    /// How far before the last read the next one starts: a revocation's time is its process's clock when it was
    /// made, committed a moment later (clocks of a cluster's machines must agree within this).
    static let slackSeconds: Int64 = 60
    /// Every revocation made before this (less the slack) has been read.
    var readThrough: Int64
    var reading = false

    init(readThrough: Int64) {
        self.readThrough = readThrough
    }
}
