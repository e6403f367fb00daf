import EventLoop
import SpotterCore
import SpotterProtocol

/// Cluster mode: a command naming a seq this process has not followed yet — an edit, a delete or a receipt for a
/// message another process committed a moment ago — waits for the follower instead of being answered from a
/// memory that is behind (`not_found` for an edit, a read position cut short for a receipt). The follower reads
/// the store's tail at least every second (`LogFollower`), so a wait of `followedSeqPatience` ms sees everything
/// committed before the command arrived; after it the command is decided as it stands (a seq still unknown is then
/// truly not in the log: `not_found`). SQLite's single process never waits: its memory is the log's head.
extension CoreRunner {
    /// How long (ms) a command naming an unfollowed seq waits for it.
    static let followedSeqPatience: UInt64 = 1500
    /// How far above the thread's known last seq a named seq is waited for: further is no message committed a
    /// moment ago but a wrong number, answered at once.
    static let followedSeqReach: Int64 = 1000

    /// Whether `command` waits for the follower (then it runs later, once); false: run it now.
    func waitsForFollowedSeq(_ command: CoreCommand, reply: Reply?) -> Bool {
        guard follower != nil, let followed = followedCondition(command) else { return false }
        let started = loop.nowMilliseconds
        let timer = Timer(loop: loop)
        timer.start(after: 20, repeat: 20) { [weak self] in
            guard let self else { return timer.close() }
            guard followed(self) || loop.nowMilliseconds - started >= Self.followedSeqPatience else { return }
            timer.close()
            run(command, reply: reply, followed: true)
        }
        return true
    }

    /// What `command` waits to see followed here, or nil when it is decided at once:
    /// - a seq above the thread's last (an edit, a delete, a receipt of a message committed a moment ago);
    /// - a session this process does not know (`session.act` on a session invited or requested on another
    ///   process a moment ago: answered `session_not_found` from memory before). A session id never seen waits
    ///   the whole patience, then is refused as before.
    private func followedCondition(_ command: CoreCommand) -> ((CoreRunner) -> Bool)? {
        if case .actOnSession(_, let sessionID?, _, _, _) = command {
            guard core.sessions[sessionID] == nil else { return nil }
            return { $0.core.sessions[sessionID] != nil }
        }
        guard let (userID, threadID, seq) = command.namedSeq, let thread = chat.thread(id: threadID),
              userID == nil || thread.side(of: userID!) != nil,  // an outsider is refused at once, as before
              seq > thread.lastSeq, seq - thread.lastSeq <= Self.followedSeqReach else { return nil }
        return { ($0.chat.thread(id: threadID)?.lastSeq ?? 0) >= seq }
    }
}

extension CoreCommand {
    /// The participant (nil: an admin's moderation), the thread and the highest seq a person's command names,
    /// when it names one the process must know: an edit or delete not yet read from the log, a receipt.
    var namedSeq: (userID: String?, threadID: String, seq: Int64)? {
        switch self {
        case .changeMessage(let request):
            guard case .notRead = request.target, request.seq >= 1 else { return nil }
            return (request.byAdmin ? nil : request.actorID, request.threadID, request.seq)
        case .receipt(let userID, let threadID, let delivered, let read):
            let seq = max(delivered ?? 0, read ?? 0)
            return seq >= 1 ? (userID, threadID, seq) : nil
        default:
            return nil
        }
    }
}
