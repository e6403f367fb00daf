import FoundationEssentials
import SpotterCore
import SpotterProtocol

/// `activity`: the coach's combined feed across every current client (seed 002 coach §8), read from the log off
/// the loop like the meal feed, newest first, a page at a time by log position.
extension AppSocket {
    func activity(_ command: ActivityCommand, id: String) {
        guard actor.role == .coach else { return reply(id: id, error: APIError(.forbidden, field: "type")) }
        let limit = command.limit ?? ActivityCommand.defaultLimit
        guard ActivityCommand.limits.contains(limit) else { return reply(id: id, error: APIError(.outOfRange, field: "limit")) }
        var threads = runner.chat.threads(of: actor.userID).filter { $0.coachID == actor.userID && $0.active }
        if let threadID = command.threadId {
            threads = threads.filter { $0.id == threadID }
            guard !threads.isEmpty else { return reply(id: id, error: APIError(.forbidden, field: "thread_id")) }
        }
        let byNo = Dictionary(uniqueKeysWithValues: threads.map { ($0.no, (id: $0.id, client: $0.clientID)) })
        let log = runner.log
        let before = command.before
        let budget = ReplyPage.budget(outbound: api.server.config.maxOutboundBytes)
        runAndReplyJSON(id: id) { () -> String in
            let page = try log.activity(threadNos: Array(byNo.keys), before: before, limit: limit + 1)
            let decoder = JSONDecoder()
            let items = page.prefix(limit).compactMap { record -> ActivityItem? in
                guard let thread = byNo[record.threadNo] else { return nil }
                var item = ActivityItem(cursor: record.pos, threadId: thread.id, clientId: thread.client, at: record.at, kind: "")
                switch record.content {
                case .message(let message):
                    item.kind = message.kind == .mealLog ? "meal_log" : "message"
                    item.message = ChatState.messageView(message, seq: record.seq, at: record.at, threadID: thread.id,
                                                         senderID: thread.client)
                case .coaching:
                    guard let body = RecordBody(record, decoder: decoder) else { return nil }
                    item.kind = body.checkIn != nil ? "check_in" : body.challenge != nil ? "challenge"
                        : body.measurement != nil ? "measurement" : "goal"
                    item.change = body.change
                    item.record = body
                case .session:
                    guard let body = SessionRecordBody(record) else { return nil }
                    item.kind = "session"
                    item.change = body.change
                    item.session = body.session
                default:
                    return nil
                }
                return item
            }
            // A page of large items is cut short to stay under the outbound bound (`ReplyPage`).
            return ReplyPage.fitting(limit: items.count, budget: budget) { count in
                JSONText.encoder.encodeToString(ActivityResult(items: Array(items.prefix(count)),
                                                               hasMore: count < items.count || page.count > limit))
            }
        }
    }
}
