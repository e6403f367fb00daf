import SpotterCore
import SpotterProtocol

/// Video sessions on the live socket: invite, ask for a call, act on a session, list the calendar.
extension AppSocket {
    static func registerSessionCommands(_ table: inout CommandTable) {
        table.on(SessionCreateCommand<Invite>.self) { socket, body, id in socket.createSession(body, id: id) }
        table.on(SessionCreateCommand<CallRequest>.self) { socket, body, id in socket.createSession(body, id: id) }
        table.on(SessionActCommand.self) { socket, body, id in
            let run = { [weak socket] in
                guard let socket else { return }
                socket.runner.run(.actOnSession(userID: socket.actor.userID, sessionID: body.sessionId, action: body.action,
                                                start: body.start, reason: body.reason), reply: socket.replier(id: id))
            }
            // A new time is checked against the coach's availability (AppSocket+Availability).
            guard body.start != nil, ["propose", "reschedule"].contains(body.action ?? ""),
                  let coachID = body.sessionId.flatMap({ socket.runner.core.sessions[$0] })?.coachID else { return run() }
            socket.withAvailability(coachID: coachID, id: id) { _ in run() }
        }
        table.on(SessionsCommand.self) { socket, body, id in
            let budget = ReplyPage.budget(outbound: socket.api.server.config.maxOutboundBytes)
            socket.answer(id: id, socket.runner.core.sessionsPage(body, by: socket.actor.userID,
                                                                  now: socket.api.server.config.clock.now, budget: budget))
        }
    }

    func createSession<Mark>(_ command: SessionCreateCommand<Mark>, id: String) {
        let run = { [weak self] in
            guard let self else { return }
            runner.run(.createSession(userID: actor.userID, invite: Mark.self == Invite.self, threadID: command.threadId,
                                      start: command.start, minutes: command.durationMinutes, purpose: command.purpose),
                       reply: replier(id: id))
        }
        // In a cluster the account's budget is counted where every process sees it first (AppSocket+SessionBudget).
        withSharedSessionCreate(id: id) { [weak self] in
            guard let self else { return }
            // The time is checked against the coach's availability (AppSocket+Availability); a thread not the
            // sender's is refused by the core as before.
            guard command.start != nil, let threadID = command.threadId,
                  let coachID = runner.chat.thread(id: threadID)?.coachID else { return run() }
            withAvailability(coachID: coachID, id: id) { _ in run() }
        }
    }

    /// A reply to `id` from a result's JSON or error.
    func replier(id: String) -> (Result<String, APIError>) -> Void {
        { [weak self] result in self?.answer(id: id, result) }
    }
}
