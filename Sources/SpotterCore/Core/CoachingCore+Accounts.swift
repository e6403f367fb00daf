import SpotterProtocol

// Account changes every process of a cluster follows (issue 31): the accounts' tables changed first (a sign-out, a
// reused refresh token, a password change, a profile or tier change); the core logs one `account` record so that
// the other processes, which keep copies in memory, hear of it in log order. The shell applies what the core does
// not keep (revoked sessions, the user directory) when it follows the record (`CoreRunner+Accounts`).
extension CoachingCore {
    mutating func accountChanged(_ change: AccountChangeRecord, _ context: CoreContext) -> CoreDecision {
        // Nothing to tell: no user, no session, no field (the record would change nothing anywhere).
        let empty = switch change.change {
        case .sessionsRevoked(let families, _): families.isEmpty
        case .profile(let profile): profile.isEmpty
        }
        guard !change.userID.isEmpty, !empty else { return .commit(CoreCommit(records: [], reply: .none)) }
        return .commit(CoreCommit(records: [accountRecord(change, context)], reply: .none))
    }

    /// An account record: on no thread (number 0, side coach, seq 0), like an erasure.
    func accountRecord(_ change: AccountChangeRecord, _ context: CoreContext) -> ChatRecord {
        ChatRecord(threadNo: 0, side: .coach, seq: 0, at: context.now, .account(change))
    }

    /// What an account record changes in the core (here or followed; applying it twice changes nothing): a new
    /// name in the thread lists and events of the user's peers; a new tier's counts read again. Revocations are the
    /// shell's alone (its sockets and the tokens it refuses).
    mutating func applyAccountChange(_ change: AccountChangeRecord) {
        guard let profile = change.profile else { return }
        if let name = profile.fullName { chat.setName(name, for: change.userID) }
        if profile.tier != nil { forgetCounts(of: change.userID, ever: false) }
    }
}
