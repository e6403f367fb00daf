import SpotterCore
import SpotterProtocol
import SpotterPorts
import WebSocket

/// A coach's availability over HTTP, as the other settings of `/v1/me` are (`GET`/`PUT /v1/me/availability`):
/// the same body, checks and store as the socket's `availability.get` / `availability.set`
/// (AppSocket+Availability). Coaches only (`forbidden`).
extension API {
    /// `GET /v1/me/availability`: `{"availability": …}`, null until saved.
    func availability(_ actor: Actor, _ language: Language, _ respond: @escaping Respond) {
        guard actor.role == .coach else { return respond(.apiError(APIError(.forbidden), language)) }
        let accounts = services.accounts
        run(language, respond) { () -> AvailabilityReply in
            let view = try accounts.availability(coachID: actor.userID)
            return AvailabilityReply(availability: view.flatMap(CoachAvailability.init(view:))?.view)
        }
    }

    /// `PUT /v1/me/availability`: replaces the coach's availability whole, checked on the loop (pure), saved off
    /// it; answers what was saved.
    func setAvailability(_ request: HTTPRequest, _ actor: Actor, _ language: Language,
                         _ respond: @escaping Respond) throws(APIError) {
        guard actor.role == .coach else { throw APIError(.forbidden) }
        let body = try JSON.decode(AvailabilitySetCommand.self, from: request.body)
        try body.checkRanges()
        let view = try CoachAvailability(command: body).view
        let (accounts, now) = (services.accounts, services.clock.now)
        run(language, respond) { () -> AvailabilityReply in
            try accounts.setAvailability(coachID: actor.userID, view, now: now)
            return AvailabilityReply(availability: view)
        }
    }
}
