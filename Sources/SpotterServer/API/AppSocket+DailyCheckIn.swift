import FoundationEssentials
import SpotterCore
import SpotterProtocol

/// The daily check-in on the live socket: the client submits today's (a `record` record, decided by the core),
/// and either participant lists the client's history.
extension AppSocket {
    static func registerDailyCheckInCommands(_ table: inout CommandTable) {
        table.on(DailyCheckInSubmitCommand.self) { socket, body, id in
            socket.runner.run(.record(userID: socket.actor.userID, .submitDailyCheckIn(body)), reply: socket.replier(id: id))
        }
        table.on(DailyCheckInsCommand.self) { socket, body, id in
            let budget = ReplyPage.budget(outbound: socket.api.server.config.maxOutboundBytes)
            socket.answer(id: id, socket.runner.core.dailyCheckInsPage(body, by: socket.actor.userID, socket.runner.context(),
                                                                       budget: budget))
        }
    }
}
