import FoundationEssentials
import SpotterProtocol

/// What the core answers without changing anything: the calendar, the coaching record, the coach's dashboard.
/// Replies that list what can grow come a page at a time within `budget` bytes (`ReplyPage`).
extension CoachingCore {
    /// `sessions`: the user's sessions meeting [from, to), and (for a coach) the pending resolutions.
    public func sessionsPage(_ command: SessionsCommand, by userID: String, now: Int64, budget: Int) -> Result<String, APIError> {
        let from = command.from ?? now - 86_400
        let to = command.to ?? now + 30 * 86_400
        guard from < to, to - from <= 92 * 86_400 else { return .failure(APIError(.outOfRange, field: "to")) }
        let limit = command.limit ?? SessionsCommand.defaultLimit
        guard SessionsCommand.limits.contains(limit) else { return .failure(APIError(.outOfRange, field: "limit")) }
        var after: (start: Int64, id: String)?
        if let cursor = command.cursor {
            guard let parsed = Self.parseSessionsCursor(cursor) else { return .failure(APIError(.badRequest, field: "cursor")) }
            after = parsed
        }
        let page = sessions.calendarPage(of: userID, from: from, to: to, after: after, limit: limit)
        let pending = sessions.pendingResolutions(ofCoach: userID).count
        return .success(ReplyPage.fitting(limit: page.sessions.count, budget: budget) { count in
            let shown = page.sessions.prefix(count)
            let next = (count < page.sessions.count || page.more) ? shown.last.map(Self.sessionsCursor(after:)) : nil
            return SessionsResult(sessions: shown.map(\.view), pendingResolutions: pending, nextCursor: next).jsonText
        })
    }

    /// A `sessions` cursor: the last listed session's start and id (`1790000000:uuid`), opaque to clients.
    public static func sessionsCursor(after session: Session) -> String { "\(session.start):\(session.id)" }

    public static func parseSessionsCursor(_ text: String) -> (start: Int64, id: String)? {
        guard let colon = text.firstIndex(of: ":"), let start = Int64(text[..<colon]) else { return nil }
        let id = String(text[text.index(after: colon)...])
        return id.isEmpty ? nil : (start, id)
    }

    /// `record`: the client's record, for the client (any thread of theirs) or their current coach.
    public func recordPage(_ command: RecordCommand, by userID: String, _ context: CoreContext, budget: Int) -> Result<String, APIError> {
        guard let threadID = command.threadId else { return .failure(APIError(.missingField, field: "thread_id")) }
        let thread: ChatThread
        do throws(APIError) {
            let (found, side) = try chat.participant(threadID, userID)
            guard side == .client || found.active else { throw APIError(.threadInactive, field: "thread_id") }
            thread = found
        } catch {
            return .failure(error)
        }
        let limit = command.limit ?? RecordCommand.defaultLimit
        guard RecordCommand.limits.contains(limit) else { return .failure(APIError(.outOfRange, field: "limit")) }
        // A cursor names its list and the last item shown (`check_ins:<id>`): the next page of that list alone.
        var list: String?, after: String?
        if let cursor = command.cursor {
            guard let colon = cursor.firstIndex(of: ":"), ["challenges", "check_ins", "measurements"].contains(cursor[..<colon]) else {
                return .failure(APIError(.badRequest, field: "cursor"))
            }
            list = String(cursor[..<colon])
            after = String(cursor[cursor.index(after: colon)...])
        }
        let client = thread.clientID
        // A list the cursor does not name gets an empty page (the guard below refuses a cursor of no item).
        let size = { (name: String) in list == nil || list == name ? limit : 0 }
        let day = LocalDay.of(context.now, in: context.zone(of: client))
        guard let challenges = coaching.challengesPage(of: client, after: list == "challenges" ? after : nil,
                                                       limit: size("challenges"), today: day),
              let checkIns = coaching.checkInsPage(of: client, after: list == "check_ins" ? after : nil, limit: size("check_ins")),
              let measurements = coaching.measurementsPage(of: client, after: list == "measurements" ? after : nil,
                                                           limit: size("measurements"))
        else {
            return .failure(APIError(.badRequest, field: "cursor"))  // not an item of its list (or not this client's)
        }
        let longest = max(challenges.items.count, checkIns.items.count, measurements.items.count)
        let book = coaching
        return .success(ReplyPage.fitting(limit: longest, budget: budget) { count in
            Self.recordPage(threadID: thread.id, clientID: client, book: book, count: count, challenges, checkIns, measurements)
        })
    }

    /// The `record` reply showing at most `count` items of each page, each list's next cursor after what it shows.
    static func recordPage(threadID: String, clientID: String, book: CoachingBook, count: Int,
                           _ challenges: CoachingBook.Page<ChallengeView>, _ checkIns: CoachingBook.Page<CheckInView>,
                           _ measurements: CoachingBook.Page<MeasurementView>) -> String {
        func next<Item>(_ name: String, _ page: CoachingBook.Page<Item>, _ id: (Item) -> String) -> String? {
            let shown = page.items.prefix(count)
            guard count < page.items.count || page.more, let last = shown.last else { return nil }
            return name + ":" + id(last)
        }
        let result = RecordResult(
            threadId: threadID, clientId: clientID, latestWeightKg: book.latestWeight(of: clientID),
            nextMeasurementAt: book.nextMeasurementAllowed(of: clientID), goal: book.goal(of: clientID),
            challenges: Array(challenges.items.prefix(count)), checkIns: Array(checkIns.items.prefix(count)),
            measurements: Array(measurements.items.prefix(count)),
            challengesNext: next("challenges", challenges, \.id), checkInsNext: next("check_ins", checkIns, \.id),
            measurementsNext: next("measurements", measurements, \.id))
        return JSONText.encoder.encodeToString(result)
    }

    /// `dashboard`: a card per current client and the analytics over [from, to) (default: the last 30 days).
    public func dashboard(_ command: DashboardCommand, by coachID: String, _ context: CoreContext) -> Result<String, APIError> {
        guard context.people(coachID)?.role == "coach" else { return .failure(APIError(.forbidden, field: "type")) }
        let now = context.now
        let to = command.to ?? now + 1  // up to and including this second
        let from = command.from ?? to - CoachDashboard.defaultRange
        guard from < to else { return .failure(APIError(.outOfRange, field: "from")) }
        guard to - from <= CoachDashboard.maxRange else { return .failure(APIError(.outOfRange, field: "to")) }
        let figures = CoachDashboard.sessionFigures(sessions, coachID: coachID, now: now, from: from, to: to)
        let clients = dashboardClients(ofCoach: coachID, sessions: figures, context)
        var result = CoachDashboard.make(clients: clients, book: coaching, attendance: (figures.completed, figures.missed),
                                         from: from, to: to, now: now)
        result.analytics = CoachDashboard.withEngagement(
            result.analytics, clients: clients, book: coaching,
            attended: CoachDashboard.attendedStarts(sessions, coachID: coachID, from: from, to: to), now: now)
        return .success(result.jsonText)
    }

    /// `challenge.template`: the coach's clients in a challenge of the template that is not over.
    public func template(_ command: ChallengeTemplateCommand, by coachID: String, _ context: CoreContext) -> Result<String, APIError> {
        guard let template = command.templateId else { return .failure(APIError(.missingField, field: "template_id")) }
        guard context.people(coachID)?.role == "coach" else { return .failure(APIError(.forbidden, field: "type")) }
        let count = coaching.participants(coach: coachID, template: template,
                                          today: { LocalDay.of(context.now, in: context.zone(of: $0)) })
        var json = JSONText()
        json.field("template_id", template)
        json.field("participants", Int64(count))
        return .success(json.finish())
    }
}
