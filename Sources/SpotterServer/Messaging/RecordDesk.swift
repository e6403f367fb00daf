import FoundationEssentials
import SpotterCore
import SpotterProtocol
import SpotterPorts

/// The coaching record on the loop: runs `CoachingBook`'s rules (so a check and its change are one step), applies
/// the change at once, appends one `record` record per changed item on the client's current thread, and once
/// they are durable replies and publishes the `record` event to both participants, and the client's dashboard
/// card to the coach. Loop thread only.
final class RecordDesk {
    unowned let hub: MessagingHub
    private(set) var book: CoachingBook
    /// When each meal log was sent, by thread number (the dashboard's meal-log consistency).
    private(set) var mealTimes: [Int64: [Int64]]

    init(hub: MessagingHub, loaded: LoadedChat) {
        self.hub = hub
        self.book = loaded.coaching
        self.mealTimes = loaded.mealTimes
        hub.onReload.append { [unowned self] loaded in
            book = loaded.coaching
            mealTimes = loaded.mealTimes
        }
    }

    /// A `record` record another process committed (cluster mode): the book takes the item as it left it.
    func learn(_ record: ChatRecord) {
        if let stored = RecordBody(record) { book.apply(stored) }
    }

    /// A meal log was committed (the hub tells every one).
    func mealLogged(threadNo: Int64, at: Int64) {
        mealTimes[threadNo, default: []].append(at)
    }

    // MARK: - Days

    func zone(of userID: String) -> TimeZone {
        TimeZoneRules.zone(hub.directory?.user(id: userID)?.timeZone ?? "UTC")
    }

    /// The client's calendar day now.
    func today(of clientID: String, now: Int64) -> Int64 { LocalDay.of(now, in: zone(of: clientID)) }

    // MARK: - Who may do what

    /// The writable thread `threadID` with `userID` on `side` of it.
    func thread(_ threadID: String?, of userID: String, as side: Side) throws(APIError) -> ChatThread {
        guard let threadID else { throw APIError(.missingField, field: "thread_id") }
        let (thread, actual) = try hub.state.participant(threadID, userID)
        guard actual == side else { throw APIError(.forbidden, field: "thread_id") }
        guard thread.active else { throw APIError(.threadInactive, field: "thread_id") }
        return thread
    }

    /// The client's current thread, if `coachID` (when given) is its coach.
    func currentThread(ofClient clientID: String, coach coachID: String? = nil) -> ChatThread? {
        hub.state.threads(of: clientID).first { $0.active && $0.clientID == clientID && (coachID == nil || $0.coachID == coachID) }
    }

    // MARK: - Commands

    func createChallenge(_ command: ChallengeCreateCommand, by userID: String, now: Int64, reply: @escaping Reply) {
        decide(reply) { () throws(APIError) in
            let thread = try thread(command.threadId, of: userID, as: .coach)
            let new = CoachingBook.NewChallenge(id: SecureRandom.uuid(), clientID: thread.clientID, coachID: userID,
                                                command: command, today: today(of: thread.clientID, now: now), now: now)
            return (thread, .coach, [try record { () throws(RecordError) in try book.createChallenge(new) }])
        }
    }

    func checkTask(_ command: ChallengeCheckCommand, by userID: String, now: Int64, reply: @escaping Reply) {
        decide(reply) { () throws(APIError) in
            guard let id = command.challengeId else { throw APIError(.missingField, field: "challenge_id") }
            guard let day = command.day else { throw APIError(.missingField, field: "day") }
            guard let done = command.done else { throw APIError(.missingField, field: "done") }
            guard let thread = currentThread(ofClient: userID) else {
                // Not a client with a coach: their challenges (if any) are not theirs to change now.
                throw book.challenges[id]?.clientId == userID ? APIError(.noCoachAssigned) : APIError(.recordNotFound, field: "challenge_id")
            }
            let zone = zone(of: userID)
            let today = LocalDay.of(now, in: zone)
            let body = try record { () throws(RecordError) in
                try book.checkTask(challengeID: id, clientID: userID, day: day, done: done, today: today,
                                   dayOf: { LocalDay.of($0, in: zone) }, now: now)
            }
            // Already as asked (a retry): the challenge as it stands, nothing written.
            guard let body else {
                return (thread, .client, [RecordBody(change: "challenge.unchanged",
                                                     challenge: book.challenges[id].map { CoachingBook.current($0, today: today) })])
            }
            return (thread, .client, [body])
        }
    }

    func submitCheckIn(_ command: CheckInSubmitCommand, by userID: String, now: Int64, reply: @escaping Reply) {
        let thread: ChatThread
        do throws(APIError) {
            thread = try self.thread(command.threadId, of: userID, as: .client)
        } catch {
            return reply(.failure(error))
        }
        // Photos must be images uploaded to this thread: read them off the loop, then decide on it.
        let refs = [command.photos?.front, command.photos?.side, command.photos?.back].compactMap { $0 }
        let attachments = hub.server.api.services.attachments
        let threadID = thread.id
        hub.server.loop.runBlocking({ blockingResult { () throws -> Set<String> in
            var images = Set<String>()
            for ref in refs {
                if let found = try attachments.find(ids: [ref], threadID: threadID)?.first, found.type.hasPrefix("image/") {
                    images.insert(ref)
                }
            }
            return images
        } }, then: { [self] (result: Result<Set<String>, APIError>) in
            decide(reply) { () throws(APIError) in
                let images = try result.get()
                let thread = try self.thread(command.threadId, of: userID, as: .client)  // still so after the read
                return (thread, .client, [try record { () throws(RecordError) in
                    try book.submitCheckIn(id: SecureRandom.uuid(), clientID: userID, command: command,
                                           photoExists: { images.contains($0) }, now: now)
                }])
            }
        })
    }

    func comment(_ command: CheckInCommentCommand, by userID: String, now: Int64, reply: @escaping Reply) {
        decide(reply) { () throws(APIError) in
            guard let id = command.checkInId else { throw APIError(.missingField, field: "check_in_id") }
            guard let clientID = book.checkIns[id]?.clientId, let thread = currentThread(ofClient: clientID, coach: userID) else {
                throw APIError(.recordNotFound, field: "check_in_id")
            }
            return (thread, .coach, [try record { () throws(RecordError) in
                try book.comment(checkInID: id, clientID: { $0 == clientID }, comment: command.comment, now: now)
            }])
        }
    }

    func addMeasurement(_ command: MeasurementAddCommand, by userID: String, now: Int64, reply: @escaping Reply) {
        decide(reply) { () throws(APIError) in
            let thread = try thread(command.threadId, of: userID, as: .client)
            return (thread, .client, try record { () throws(RecordError) in
                try book.addMeasurement(id: SecureRandom.uuid(), clientID: userID, command: command, now: now)
            })
        }
    }

    func setGoal(_ command: GoalSetCommand, by userID: String, now: Int64, reply: @escaping Reply) {
        decide(reply) { () throws(APIError) in
            let thread = try thread(command.threadId, of: userID, as: .client)
            return (thread, .client, try record { () throws(RecordError) in
                try book.setGoal(id: SecureRandom.uuid(), clientID: userID, command: command, now: now)
            })
        }
    }

    /// `record`: the client's record, for the client (any thread of theirs) or their current coach.
    func read(_ command: RecordCommand, by userID: String, now: Int64) -> Result<String, APIError> {
        guard let threadID = command.threadId else { return .failure(APIError(.missingField, field: "thread_id")) }
        let thread: ChatThread
        do throws(APIError) {
            let (found, side) = try hub.state.participant(threadID, userID)
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
        let day = today(of: client, now: now)
        guard let challenges = book.challengesPage(of: client, after: list == "challenges" ? after : nil,
                                                   limit: size("challenges"), today: day),
              let checkIns = book.checkInsPage(of: client, after: list == "check_ins" ? after : nil, limit: size("check_ins")),
              let measurements = book.measurementsPage(of: client, after: list == "measurements" ? after : nil,
                                                       limit: size("measurements"))
        else {
            return .failure(APIError(.badRequest, field: "cursor"))  // not an item of its list (or not this client's)
        }
        let budget = ReplyPage.budget(outbound: hub.server.config.maxOutboundBytes)
        let longest = max(challenges.items.count, checkIns.items.count, measurements.items.count)
        return .success(ReplyPage.fitting(limit: longest, budget: budget) { count in
            RecordDesk.recordPage(threadID: thread.id, clientID: client, book: book, count: count,
                                  challenges, checkIns, measurements)
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

    // MARK: - The coach's dashboard

    /// `dashboard`: a card per current client and the analytics over [from, to) (default: the last 30 days).
    func dashboard(_ command: DashboardCommand, by coachID: String, now: Int64) -> Result<String, APIError> {
        guard hub.directory?.user(id: coachID)?.role == "coach" else { return .failure(APIError(.forbidden, field: "type")) }
        let to = command.to ?? now + 1  // up to and including this second
        let from = command.from ?? to - CoachDashboard.defaultRange
        guard from < to else { return .failure(APIError(.outOfRange, field: "from")) }
        guard to - from <= CoachDashboard.maxRange else { return .failure(APIError(.outOfRange, field: "to")) }
        let figures = CoachDashboard.sessionFigures(hub.server.sessions.book, coachID: coachID, now: now, from: from, to: to)
        let result = CoachDashboard.make(clients: dashboardClients(ofCoach: coachID, sessions: figures, now: now), book: book,
                                         attendance: (figures.completed, figures.missed), from: from, to: to, now: now)
        return .success(result.jsonText)
    }

    /// `challenge.template`: the coach's clients in a challenge of the template that is not over.
    func template(_ command: ChallengeTemplateCommand, by coachID: String, now: Int64) -> Result<String, APIError> {
        guard let template = command.templateId else { return .failure(APIError(.missingField, field: "template_id")) }
        guard hub.directory?.user(id: coachID)?.role == "coach" else { return .failure(APIError(.forbidden, field: "type")) }
        let count = book.participants(coach: coachID, template: template, today: { [self] in today(of: $0, now: now) })
        var json = JSONText()
        json.field("template_id", template)
        json.field("participants", Int64(count))
        return .success(json.finish())
    }

    /// The coach's current clients as the dashboard needs them (or only `clientID`'s).
    func dashboardClients(ofCoach coachID: String, only clientID: String? = nil, sessions: CoachDashboard.SessionFigures,
                          now: Int64) -> [DashboardClient] {
        let threads = hub.state.threads(of: coachID).filter {
            $0.active && $0.coachID == coachID && (clientID == nil || $0.clientID == clientID)
        }
        guard !threads.isEmpty else { return [] }
        return threads.map { thread in
            DashboardClient(clientID: thread.clientID, threadID: thread.id, name: hub.state.names[thread.clientID],
                            unread: thread.unread(.coach), zone: zone(of: thread.clientID), mealTimes: mealTimes[thread.no] ?? [],
                            nextSession: sessions.next[thread.id], pendingResolutions: sessions.pending[thread.id] ?? 0)
        }
    }

    /// Pushes the client's fresh card to their coach's sockets (not logged: `dashboard` reads it again).
    private func pushCard(_ thread: ChatThread) {
        let now = unixNow()
        let sessions = CoachDashboard.sessionFigures(hub.server.sessions.book, coachID: thread.coachID, now: now, from: now, to: now)
        guard let client = dashboardClients(ofCoach: thread.coachID, only: thread.clientID, sessions: sessions, now: now).first else {
            return
        }
        let event = ClientCardEvent(card: CoachDashboard.card(client, book: book, now: now))
        hub.broker.publishEphemeral(userID: thread.coachID, frame: event.jsonText)
    }

    // MARK: - Committing

    typealias Reply = (Result<String, APIError>) -> Void

    /// Runs a decision (the thread to log on, the side that acts, the bodies of the changed items), applies the
    /// bodies, appends their records and replies with the items as they now stand once they are durable.
    private func decide(_ reply: @escaping Reply,
                        _ decision: () throws(APIError) -> (ChatThread, Side, [RecordBody])) {
        let thread: ChatThread, side: Side, bodies: [RecordBody]
        do throws(APIError) {
            if let refusal = hub.writeRefusal { throw refusal }
            (thread, side, bodies) = try decision()
        } catch {
            return reply(.failure(error))
        }
        let answer = JSONText.encoder.encodeToString(RecordDesk.merged(bodies))
        let written = bodies.filter { $0.change != "challenge.unchanged" }
        let now = unixNow()
        let records = written.map { body in
            book.apply(body)
            return ChatRecord(kind: .record, threadNo: thread.no, side: side, seq: thread.lastSeq,
                              ref: body.challenge?.id ?? body.checkIn?.id ?? body.measurement?.id ?? body.goal?.id,
                              body: JSONText.encoder.encodeToString(body), at: now)
        }
        // With nothing to write (a retry), the reply still waits for the appends before it.
        hub.append(records) { [self] result in
            switch result {
            case .success(let done):
                reply(.success(answer))
                for record in done { hub.publish(record) }
                if !done.isEmpty { pushCard(thread) }
            case .failure(let error):
                reply(.failure(error))  // the hub reloads, and the book with it
            }
        }
    }

    /// The reply: the first body's change with every item the bodies carry (the newest of each kind).
    static func merged(_ bodies: [RecordBody]) -> RecordBody {
        var merged = RecordBody(change: bodies.first?.change ?? "")
        for body in bodies {
            merged.challenge = body.challenge ?? merged.challenge
            merged.checkIn = body.checkIn ?? merged.checkIn
            merged.measurement = body.measurement ?? merged.measurement
            merged.goal = body.goal ?? merged.goal
        }
        return merged
    }

    private func record<T>(_ rule: () throws(RecordError) -> T) throws(APIError) -> T {
        do throws(RecordError) {
            return try rule()
        } catch {
            throw APIError(record: error)
        }
    }
}
