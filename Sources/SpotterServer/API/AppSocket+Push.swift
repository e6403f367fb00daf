import SpotterProtocol

extension AppSocket {
    /// `app_state`: background or foreground (Protocol/README.md, "Notifications").
    func appState(_ command: AppStateCommand, id: String) {
        guard let state = command.state else { return reply(id: id, error: APIError(.missingField, field: "state")) }
        guard AppStateCommand.states.contains(state) else { return reply(id: id, error: APIError(.badRequest, field: "state")) }
        inBackground = state == "background"
        send(Reply.ok(id: id, resultJSON: "{\"state\":\"\(state)\"}"))
    }
}
