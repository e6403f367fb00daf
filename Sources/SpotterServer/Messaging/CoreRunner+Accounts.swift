import EventLoop
import SpotterCore
import SpotterPorts
import SpotterProtocol

/// Account changes every process of a cluster follows (issue 31): sessions revoked (a sign-out, a reused refresh
/// token, a password change) and profiles changed (name, language, time zone, tier). The accounts' tables change
/// first; then the core logs one `account` record (`CoachingCore+Accounts`), which the other processes follow in
/// log order (`LogFollower` → `applyFollowed` → `accountChangedElsewhere`): within the follower's delay, tens of
/// milliseconds on a quiet cluster, they refuse the sessions' access tokens, close their sockets with 4003, and
/// show the new name, language, zone and tier.
///
/// A crash between the accounts' commit and the record's append loses the record, not the change: a profile is
/// read from the accounts by every process at its start, and revocations are read at start and, in a cluster,
/// every few seconds by every process (`API.pollRevocations`), so a lost record delays the refusal by at most that
/// period. In one process the record changes nothing (the process that made the change applied it at once).
///
/// A starting process reads the users and the revocations before it loads the log, and follows from the loaded
/// position: a change committed in the milliseconds between is in neither. The periodic read covers revocations
/// (it starts a minute before the start); such a profile change is seen at the next restart.
extension CoreRunner {
    /// Logs an account change the accounts committed (here, its effects were applied already by the caller). A
    /// refusal while the log recovers is tried again a few times, a second apart: the change is committed, and the
    /// other processes would otherwise learn it only from their own reads.
    func accountChanged(_ change: AccountChangeRecord, attempt: Int = 1) {
        if attempt == 1 { failPoints.reached(.accountCommitted) }
        run(.accountChanged(change)) { [weak self] result in
            guard let self, case .failure(let error) = result else { return }
            guard attempt < 5 else {
                logger.warning("an account change was not logged; other processes learn it from the accounts",
                               metadata: ["user": "\(change.userID)", "error": "\(error.code.rawValue)"])
                return
            }
            let retry = Timer(loop: loop)
            retry.start(after: 1000, repeat: 0) { [weak self] in
                retry.close()
                self?.accountChanged(change, attempt: attempt + 1)
            }
        }
    }

    /// Another process's account record, after the core applied it (names, counts): what the shell keeps.
    func accountChangedElsewhere(_ change: AccountChangeRecord) {
        switch change.change {
        case .sessionsRevoked(let families, let revokedAt):
            revokedElsewhere?(families.map { RevokedSession(userID: change.userID, familyID: $0, revokedAt: revokedAt) })
        case .profile(let profile):
            directory?.update(change.userID) { user in
                if let name = profile.fullName { user.fullName = name }
                if let language = profile.language { user.language = language }
                if let zone = profile.timeZone { user.timeZone = zone }
                if let tier = profile.tier { user.tier = tier }
            }
            // The AI generations' window follows the zone and their limit the tier: read again when next shown.
            if profile.timeZone != nil || profile.tier != nil { rememberAIGenerations(nil, of: change.userID) }
        }
    }
}
