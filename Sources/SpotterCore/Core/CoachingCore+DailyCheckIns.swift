import FoundationEssentials
import SpotterProtocol

extension CoachingCore {
    /// `daily_check_ins`: the client's daily check-ins, for the client (any thread of theirs) or their current coach,
    /// a page cut short to stay within `budget` bytes (`ReplyPage`).
    public func dailyCheckInsPage(_ command: DailyCheckInsCommand, by userID: String, _ context: CoreContext,
                                  budget: Int) -> Result<String, APIError> {
        guard let threadID = command.threadId else { return .failure(APIError(.missingField, field: "thread_id")) }
        let thread: ChatThread
        do throws(APIError) {
            let (found, side) = try chat.participant(threadID, userID)
            guard side == .client || found.active else { throw APIError(.threadInactive, field: "thread_id") }
            thread = found
        } catch {
            return .failure(error)
        }
        let limit = command.limit ?? DailyCheckInsCommand.defaultLimit
        guard DailyCheckInsCommand.limits.contains(limit) else { return .failure(APIError(.outOfRange, field: "limit")) }
        if let before = command.before, LocalDay.parse(before) == nil { return .failure(APIError(.badRequest, field: "before")) }
        let client = thread.clientID
        let page = coaching.dailyCheckIns.page(of: client, before: command.before, limit: limit)
        let today = LocalDay.format(LocalDay.of(context.now, in: context.zone(of: client)))
        return .success(ReplyPage.fitting(limit: page.items.count, budget: budget) { count in
            let shown = Array(page.items.prefix(count))
            let next = count < page.items.count || page.more ? shown.last?.day : nil
            return JSONText.encoder.encodeToString(DailyCheckInsResult(threadId: thread.id, clientId: client, today: today,
                                                                       checkIns: shown, next: next))
        })
    }
}
