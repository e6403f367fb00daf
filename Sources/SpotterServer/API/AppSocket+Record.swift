import FoundationEssentials
import SpotterCore
import SpotterProtocol

/// The coaching record on the live socket: challenges, check-ins, measurements and goals (`RecordDesk`), the
/// coach's dashboard, and meal histories and feeds.
extension AppSocket {
    static func registerRecordCommands(_ table: inout CommandTable) {
        changes(&table, ChallengeCreateCommand.self, RecordDesk.createChallenge)
        changes(&table, ChallengeCheckCommand.self, RecordDesk.checkTask)
        changes(&table, CheckInSubmitCommand.self, RecordDesk.submitCheckIn)
        changes(&table, CheckInCommentCommand.self, RecordDesk.comment)
        changes(&table, MeasurementAddCommand.self, RecordDesk.addMeasurement)
        changes(&table, GoalSetCommand.self, RecordDesk.setGoal)
        table.on(DashboardCommand.self) { socket, body, id in
            socket.answer(id: id, socket.api.server.records.dashboard(body, by: socket.actor.userID, now: unixNow()))
        }
        table.on(ChallengeTemplateCommand.self) { socket, body, id in
            socket.answer(id: id, socket.api.server.records.template(body, by: socket.actor.userID, now: unixNow()))
        }
        table.on(MealsCommand.self) { socket, body, id in socket.meals(body, id: id) }
        table.on(RecordCommand.self) { socket, body, id in
            socket.answer(id: id, socket.api.server.records.read(body, by: socket.actor.userID, now: unixNow()))
        }
    }

    /// A change of the record: the desk's rule for it, run as the socket's user now, replying to the frame's id.
    private static func changes<C: SocketCommandBody>(
        _ table: inout CommandTable, _ type: C.Type,
        _ rule: @escaping @Sendable (RecordDesk) -> (C, String, Int64, @escaping RecordDesk.Reply) -> Void
    ) {
        table.on(type) { socket, body, id in
            rule(socket.api.server.records)(body, socket.actor.userID, unixNow(), socket.replier(id: id))
        }
    }

    /// `meals`: the client's meal history, or the coach's feed across every current client, from the log.
    func meals(_ command: MealsCommand, id: String) {
        let limit = command.limit ?? 20
        guard (1...100).contains(limit) else { return reply(id: id, error: APIError(.outOfRange, field: "limit")) }
        let threads: [ChatThread]
        if let threadID = command.threadId {
            do {
                threads = [try hub.state.participant(threadID, actor.userID).0]
            } catch {
                return reply(id: id, error: error)
            }
        } else if actor.role == .client {
            threads = hub.state.threads(of: actor.userID).filter { $0.clientID == actor.userID }
        } else if actor.role == .coach {
            threads = hub.state.threads(of: actor.userID).filter { $0.coachID == actor.userID && $0.active }
        } else {
            return reply(id: id, error: APIError(.forbidden, field: "type"))
        }
        let byNo = Dictionary(uniqueKeysWithValues: threads.map { ($0.no, (id: $0.id, client: $0.clientID)) })
        let log = hub.log
        let before = command.before
        let budget = ReplyPage.budget(outbound: api.server.config.maxOutboundBytes)
        runAndReplyJSON(id: id) { () -> String in
            let page = try log.meals(threadNos: Array(byNo.keys), before: before, limit: limit + 1)
            let decoder = JSONDecoder()
            let meals = page.prefix(limit).compactMap { record -> MealEntry? in
                guard let thread = byNo[record.threadNo], let body = record.body,
                      let meal = try? decoder.decode(MealLog.self, from: Data(body.utf8)) else { return nil }
                return MealEntry(threadId: thread.id, clientId: thread.client, seq: record.seq, cursor: record.pos,
                                 clientMessageId: record.ref ?? "", createdAt: record.at, meal: meal)
            }
            // A page of large meal logs is cut short to stay under the outbound bound (`ReplyPage`).
            return ReplyPage.fitting(limit: meals.count, budget: budget) { count in
                JSON.encode(MealsResult(meals: Array(meals.prefix(count)), hasMore: count < meals.count || page.count > limit))
            }
        }
    }
}
