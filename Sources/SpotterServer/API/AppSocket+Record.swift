import SpotterProtocol

/// The coaching record on the live socket: challenges, check-ins, measurements and goals (`RecordDesk`).
extension AppSocket {
    static func registerRecordCommands(_ table: inout CommandTable) {
        table.on(ChallengeCreateCommand.self) { socket, body, id in
            socket.api.server.records.createChallenge(body, by: socket.actor.userID, now: unixNow(), reply: socket.replier(id: id))
        }
        table.on(ChallengeCheckCommand.self) { socket, body, id in
            socket.api.server.records.checkTask(body, by: socket.actor.userID, now: unixNow(), reply: socket.replier(id: id))
        }
        table.on(CheckInSubmitCommand.self) { socket, body, id in
            socket.api.server.records.submitCheckIn(body, by: socket.actor.userID, now: unixNow(), reply: socket.replier(id: id))
        }
        table.on(CheckInCommentCommand.self) { socket, body, id in
            socket.api.server.records.comment(body, by: socket.actor.userID, now: unixNow(), reply: socket.replier(id: id))
        }
        table.on(MeasurementAddCommand.self) { socket, body, id in
            socket.api.server.records.addMeasurement(body, by: socket.actor.userID, now: unixNow(), reply: socket.replier(id: id))
        }
        table.on(GoalSetCommand.self) { socket, body, id in
            socket.api.server.records.setGoal(body, by: socket.actor.userID, now: unixNow(), reply: socket.replier(id: id))
        }
        table.on(DashboardCommand.self) { socket, body, id in
            socket.answer(id: id, socket.api.server.records.dashboard(body, by: socket.actor.userID, now: unixNow()))
        }
        table.on(ChallengeTemplateCommand.self) { socket, body, id in
            socket.answer(id: id, socket.api.server.records.template(body, by: socket.actor.userID, now: unixNow()))
        }
        table.on(RecordCommand.self) { socket, body, id in
            socket.answer(id: id, socket.api.server.records.read(body, by: socket.actor.userID, now: unixNow()))
        }
    }
}
