import SpotterCore
import SpotterProtocol

/// Video sessions on the live socket: invite, ask for a call, act on a session, list the calendar.
extension AppSocket {
    static func registerSessionCommands(_ table: inout CommandTable) {
        table.on(SessionCreateCommand<Invite>.self) { socket, body, id in socket.createSession(body, id: id) }
        table.on(SessionCreateCommand<CallRequest>.self) { socket, body, id in socket.createSession(body, id: id) }
        table.on(SessionActCommand.self) { socket, body, id in
            socket.api.server.sessions.act(body, by: socket.actor.userID, now: unixNow(), reply: socket.replier(id: id))
        }
        table.on(SessionsCommand.self) { socket, body, id in
            socket.answer(id: id, socket.api.server.sessions.list(body, by: socket.actor.userID, now: unixNow()))
        }
    }

    func createSession<Mark>(_ command: SessionCreateCommand<Mark>, id: String) {
        api.server.sessions.create(command, by: actor.userID, now: unixNow(), reply: replier(id: id))
    }

    /// A reply to `id` from a result's JSON or error.
    func replier(id: String) -> (Result<String, APIError>) -> Void {
        { [weak self] result in self?.answer(id: id, result) }
    }
}
