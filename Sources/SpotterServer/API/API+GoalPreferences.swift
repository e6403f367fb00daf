import SpotterCore
import SpotterProtocol
import SpotterPorts
import WebSocket

/// Goal preferences (issue 30 item 5; seed 004 US2, US8 #4, FR-027): the preferred body-fat method and units,
/// saved in the accounts store and used as the defaults of `measurement.add` and `check_in.submit`.
extension API {
    /// `GET /v1/me/goal-preferences`: the preferences in force (the defaults for a user who never changed them).
    func goalPreferences(_ actor: Actor, _ language: Language, _ respond: @escaping Respond) {
        let accounts = services.accounts
        run(language, respond) { () -> GoalPreferencesView in
            try accounts.goalPreferences(userID: actor.userID)
        }
    }

    /// `PUT /v1/me/goal-preferences`: either field, checked on the loop, saved off it; answers what is in force.
    func updateGoalPreferences(_ request: HTTPRequest, _ actor: Actor, _ language: Language,
                               _ respond: @escaping Respond) throws(APIError) {
        let body = try JSON.decode(GoalPreferencesRequest.self, from: request.body)
        if case .some(.some(let method)) = body.bodyFatMethod, !GoalPreferencesView.methods.contains(method) {
            throw APIError(.badRequest, field: "body_fat_method")
        }
        if let units = body.units, !GoalPreferencesView.unitSystems.contains(units) { throw APIError(.badRequest, field: "units") }
        let (accounts, now) = (services.accounts, services.clock.now)
        run(language, respond) { () -> GoalPreferencesView in
            try accounts.updateGoalPreferences(userID: actor.userID, bodyFatMethod: body.bodyFatMethod, units: body.units, now: now)
        }
    }
}

extension AppSocket {
    /// `measurement.add` without a `method`, or `check_in.submit` without a `unit`: the user's preferences fill it
    /// in (read off the loop), then the command goes on as sent. With both given, nothing is read.
    func withGoalPreferences(id: String, _ then: @escaping (GoalPreferencesView) -> Void) {
        let accounts = api.services.accounts
        let userID = actor.userID
        api.server.loop.runBlocking({ blockingResult { try accounts.goalPreferences(userID: userID) } },
                                    then: { [weak self] (result: Result<GoalPreferencesView, APIError>) in
            guard let self else { return }
            switch result {
            case .success(let preferences): then(preferences)
            case .failure(let error): reply(id: id, error: error)
            }
        })
    }

    func addMeasurement(_ command: MeasurementAddCommand, id: String) {
        guard command.method == nil else {
            return runner.run(.record(userID: actor.userID, .addMeasurement(command)), reply: replier(id: id))
        }
        withGoalPreferences(id: id) { [weak self] preferences in
            guard let self else { return }
            var filled = command
            filled.method = preferences.bodyFatMethod
            runner.run(.record(userID: actor.userID, .addMeasurement(filled)), reply: replier(id: id))
        }
    }

    func submitCheckInInPreferredUnits(_ command: CheckInSubmitCommand, id: String) {
        guard command.unit == nil else { return submitCheckIn(command, id: id) }
        withGoalPreferences(id: id) { [weak self] preferences in
            var filled = command
            filled.unit = preferences.units == "imperial" ? "lbs" : "kg"
            self?.submitCheckIn(filled, id: id)
        }
    }
}
