import FoundationEssentials
import SpotterCore
import SpotterProtocol

/// The coaching record on the live socket: challenges, check-ins, measurements and goals (`RecordDesk`), the
/// coach's dashboard, and meal histories and feeds.
extension AppSocket {
    static func registerRecordCommands(_ table: inout CommandTable) {
        table.on(ChallengeCreateCommand.self) { socket, body, id in socket.changeRecord(.createChallenge(body), id: id) }
        table.on(ChallengeCheckCommand.self) { socket, body, id in socket.changeRecord(.checkTask(body), id: id) }
        table.on(CheckInSubmitCommand.self) { socket, body, id in socket.submitCheckInInPreferredUnits(body, id: id) }
        table.on(CheckInCommentCommand.self) { socket, body, id in socket.changeRecord(.comment(body), id: id) }
        table.on(MeasurementAddCommand.self) { socket, body, id in socket.addMeasurement(body, id: id) }
        table.on(GoalSetCommand.self) { socket, body, id in socket.changeRecord(.setGoal(body), id: id) }
        table.on(DashboardCommand.self) { socket, body, id in
            socket.answer(id: id, socket.runner.core.dashboard(body, by: socket.actor.userID, socket.runner.context()))
        }
        table.on(ChallengeTemplateCommand.self) { socket, body, id in
            socket.answer(id: id, socket.runner.core.template(body, by: socket.actor.userID, socket.runner.context()))
        }
        table.on(MealsCommand.self) { socket, body, id in socket.meals(body, id: id) }
        table.on(ActivityCommand.self) { socket, body, id in socket.activity(body, id: id) }
        table.on(ChallengeJoinCommand.self) { socket, body, id in socket.changeRecord(.joinChallenge(body), id: id) }
        table.on(ChallengeLeaveCommand.self) { socket, body, id in socket.changeRecord(.leaveChallenge(body), id: id) }
        table.on(ChallengeGroupsCommand.self) { socket, body, id in
            let budget = ReplyPage.budget(outbound: socket.api.server.config.maxOutboundBytes)
            socket.answer(id: id, socket.runner.core.challengeGroups(body, by: socket.actor.userID, socket.runner.context(),
                                                                     budget: budget))
        }
        table.on(RecordCommand.self) { socket, body, id in
            let budget = ReplyPage.budget(outbound: socket.api.server.config.maxOutboundBytes)
            socket.answer(id: id, socket.runner.core.recordPage(body, by: socket.actor.userID, socket.runner.context(), budget: budget))
        }
    }

    /// A change of the record, decided by the core as the socket's user, replying to the frame's id.
    private func changeRecord(_ change: RecordChange, id: String) {
        runner.run(.record(userID: actor.userID, change), reply: replier(id: id))
    }

    /// A check-in's photos must be images uploaded to its thread: they are read off the loop first, then the core
    /// decides (a thread the client cannot write to is refused before anything is read).
    func submitCheckIn(_ command: CheckInSubmitCommand, id: String) {
        do throws(APIError) {
            _ = try runner.core.writableThread(command.threadId, of: actor.userID, as: .client)
        } catch {
            return reply(id: id, error: error)
        }
        let refs = [command.photos?.front, command.photos?.side, command.photos?.back].compactMap { $0 }
        let attachments = api.services.attachments
        let threadID = command.threadId ?? ""
        api.server.loop.runBlocking({ blockingResult { () throws -> Set<String> in
            var images = Set<String>()
            for ref in refs {
                if let found = try attachments.find(ids: [ref], threadID: threadID)?.first, found.type.hasPrefix("image/") {
                    images.insert(ref)
                }
            }
            return images
        } }, then: { [weak self] (result: Result<Set<String>, APIError>) in
            guard let self else { return }
            switch result {
            case .success(let images): changeRecord(.submitCheckIn(command, images: images), id: id)
            case .failure(let error): reply(id: id, error: error)
            }
        })
    }

    /// `meals`: the client's meal history, or the coach's feed across every current client, from the log.
    func meals(_ command: MealsCommand, id: String) {
        let limit = command.limit ?? 20
        guard (1...100).contains(limit) else { return reply(id: id, error: APIError(.outOfRange, field: "limit")) }
        let threads: [ChatThread]
        if let threadID = command.threadId {
            do {
                threads = [try runner.chat.participant(threadID, actor.userID).0]
            } catch {
                return reply(id: id, error: error)
            }
        } else if actor.role == .client {
            threads = runner.chat.threads(of: actor.userID).filter { $0.clientID == actor.userID }
        } else if actor.role == .coach {
            threads = runner.chat.threads(of: actor.userID).filter { $0.coachID == actor.userID && $0.active }
        } else {
            return reply(id: id, error: APIError(.forbidden, field: "type"))
        }
        let byNo = Dictionary(uniqueKeysWithValues: threads.map { ($0.no, (id: $0.id, client: $0.clientID)) })
        let log = runner.log
        let before = command.before
        let budget = ReplyPage.budget(outbound: api.server.config.maxOutboundBytes)
        runAndReplyJSON(id: id) { () -> String in
            let page = try log.meals(threadNos: Array(byNo.keys), before: before, limit: limit + 1)
            let decoder = JSONDecoder()
            let meals = page.prefix(limit).compactMap { record -> MealEntry? in
                guard let thread = byNo[record.threadNo], let message = record.content.message,
                      let meal = try? decoder.decode(MealLog.self, from: Data(message.body.utf8)) else { return nil }
                return MealEntry(threadId: thread.id, clientId: thread.client, seq: record.seq, cursor: record.pos,
                                 clientMessageId: message.clientMessageID, createdAt: record.at, meal: meal)
            }
            // A page of large meal logs is cut short to stay under the outbound bound (`ReplyPage`).
            return ReplyPage.fitting(limit: meals.count, budget: budget) { count in
                JSON.encode(MealsResult(meals: Array(meals.prefix(count)), hasMore: count < meals.count || page.count > limit))
            }
        }
    }
}
