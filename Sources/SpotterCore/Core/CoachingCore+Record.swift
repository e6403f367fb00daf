import FoundationEssentials
import SpotterProtocol

/// The coaching record: `CoachingBook` runs the rules (so a check and its change are one step); each changed item
/// is one `record` record on the client's current thread. The reply is the items as they now stand.
extension CoachingCore {
    mutating func record(_ change: RecordChange, by userID: String, _ context: CoreContext) throws(APIError) -> CoreDecision {
        let now = context.now
        let thread: ChatThread, side: Side, bodies: [RecordBody]
        switch change {
        case .createChallenge(let command):
            thread = try writableThread(command.threadId, of: userID, as: .coach)
            side = .coach
            let new = CoachingBook.NewChallenge(id: context.newID(), clientID: thread.clientID, coachID: userID, command: command,
                                                today: LocalDay.of(now, in: context.zone(of: thread.clientID)), now: now)
            bodies = [try Self.rule { () throws(RecordError) in try coaching.createChallenge(new) }]
        case .checkTask(let command):
            guard let id = command.challengeId else { throw APIError(.missingField, field: "challenge_id") }
            guard let day = command.day else { throw APIError(.missingField, field: "day") }
            guard let done = command.done else { throw APIError(.missingField, field: "done") }
            guard let current = currentThread(ofClient: userID) else {
                // Not a client with a coach: their challenges (if any) are not theirs to change now.
                throw coaching.challenges[id]?.clientId == userID ? APIError(.noCoachAssigned) : APIError(.recordNotFound, field: "challenge_id")
            }
            thread = current
            side = .client
            let zone = context.zone(of: userID)
            let today = LocalDay.of(now, in: zone)
            let body = try Self.rule { () throws(RecordError) in
                try coaching.checkTask(challengeID: id, clientID: userID, day: day, done: done, today: today,
                                       dayOf: { LocalDay.of($0, in: zone) }, now: now)
            }
            // Already as asked (a retry): the challenge as it stands, nothing written.
            bodies = [body ?? RecordBody(change: "challenge.unchanged",
                                         challenge: coaching.challenges[id].map { CoachingBook.current($0, today: today) })]
        case .submitCheckIn(let command, let images):
            thread = try writableThread(command.threadId, of: userID, as: .client)
            side = .client
            try checkPhotoAllowance(command, of: userID, context)
            bodies = [try Self.rule { () throws(RecordError) in
                try coaching.submitCheckIn(id: context.newID(), clientID: userID, command: command,
                                           photoExists: { images.contains($0) }, now: now)
            }]
        case .comment(let command):
            guard let id = command.checkInId else { throw APIError(.missingField, field: "check_in_id") }
            guard let clientID = coaching.checkIns[id]?.clientId, let current = currentThread(ofClient: clientID, coach: userID) else {
                throw APIError(.recordNotFound, field: "check_in_id")
            }
            thread = current
            side = .coach
            bodies = [try Self.rule { () throws(RecordError) in
                try coaching.comment(checkInID: id, clientID: { $0 == clientID }, comment: command.comment, now: now)
            }]
        case .addMeasurement(let command):
            thread = try writableThread(command.threadId, of: userID, as: .client)
            side = .client
            try checkInBodyAllowance(command, of: userID, context)
            bodies = try Self.rule { () throws(RecordError) in
                try coaching.addMeasurement(id: context.newID(), clientID: userID, command: command, now: now)
            }
        case .setGoal(let command):
            thread = try writableThread(command.threadId, of: userID, as: .client)
            side = .client
            bodies = try Self.rule { () throws(RecordError) in
                try coaching.setGoal(id: context.newID(), clientID: userID, command: command, now: now)
            }
        case .joinChallenge, .leaveChallenge:
            (thread, bodies) = try groupChallenge(change, by: userID, context)
            side = .client
        case .submitDailyCheckIn(let command):
            thread = try writableThread(command.threadId, of: userID, as: .client)
            side = .client
            let today = LocalDay.of(now, in: context.zone(of: userID))
            bodies = [try Self.rule { () throws(RecordError) in
                try coaching.submitDailyCheckIn(id: context.newID(), clientID: userID, command: command, today: today, now: now)
            }]
        }
        let records = bodies.filter { $0.change != "challenge.unchanged" }.map { body in
            coaching.apply(body)
            return ChatRecord(threadNo: thread.no, side: side, seq: thread.lastSeq, at: now, .coaching(CoachingChangeRecord(
                itemID: body.challenge?.id ?? body.checkIn?.id ?? body.measurement?.id ?? body.goal?.id ?? body.dailyCheckIn?.id,
                json: JSONText.encoder.encodeToString(body))))
        }
        // A group challenge's reply carries its counts as they are with this change.
        var reply = Self.merged(bodies)
        reply.participation = participation(of: reply.challenge, context)
        let answer = JSONText.encoder.encodeToString(reply)
        return .commit(CoreCommit(records: records, reply: .json(answer)))
    }

    /// The writable thread `threadID` with `userID` on `side` of it.
    public func writableThread(_ threadID: String?, of userID: String, as side: Side) throws(APIError) -> ChatThread {
        guard let threadID else { throw APIError(.missingField, field: "thread_id") }
        let (thread, actual) = try chat.participant(threadID, userID)
        guard actual == side else { throw APIError(.forbidden, field: "thread_id") }
        guard thread.active else { throw APIError(.threadInactive, field: "thread_id") }
        return thread
    }

    /// The client's current thread, if `coachID` (when given) is its coach.
    public func currentThread(ofClient clientID: String, coach coachID: String? = nil) -> ChatThread? {
        chat.threads(of: clientID).first { $0.active && $0.clientID == clientID && (coachID == nil || $0.coachID == coachID) }
    }

    /// The reply: the first body's change with every item the bodies carry (the newest of each kind).
    static func merged(_ bodies: [RecordBody]) -> RecordBody {
        var merged = RecordBody(change: bodies.first?.change ?? "")
        for body in bodies {
            merged.challenge = body.challenge ?? merged.challenge
            merged.checkIn = body.checkIn ?? merged.checkIn
            merged.measurement = body.measurement ?? merged.measurement
            merged.goal = body.goal ?? merged.goal
            merged.dailyCheckIn = body.dailyCheckIn ?? merged.dailyCheckIn
        }
        return merged
    }

    private static func rule<T>(_ rule: () throws(RecordError) -> T) throws(APIError) -> T {
        do throws(RecordError) {
            return try rule()
        } catch {
            throw APIError(record: error)
        }
    }

    // MARK: - The coach's dashboard

    /// The client's dashboard card for their coach (after a change of their record), or nil if not current.
    func card(of thread: ChatThread, _ context: CoreContext) -> ClientCardView? {
        let now = context.now
        let figures = CoachDashboard.sessionFigures(sessions, coachID: thread.coachID, now: now, from: now, to: now)
        guard let client = dashboardClients(ofCoach: thread.coachID, only: thread.clientID, sessions: figures, context).first else {
            return nil
        }
        return CoachDashboard.card(client, book: coaching, now: now)
    }

    /// The coach's current clients as the dashboard needs them (or only `clientID`'s).
    public func dashboardClients(ofCoach coachID: String, only clientID: String? = nil, sessions figures: CoachDashboard.SessionFigures,
                                 _ context: CoreContext) -> [DashboardClient] {
        chat.threads(of: coachID).filter {
            $0.active && $0.coachID == coachID && (clientID == nil || $0.clientID == clientID)
        }.map { thread in
            DashboardClient(clientID: thread.clientID, threadID: thread.id, name: chat.names[thread.clientID],
                            unread: thread.unread(.coach), zone: context.zone(of: thread.clientID),
                            mealTimes: mealTimes[thread.no] ?? [], nextSession: figures.next[thread.id],
                            pendingResolutions: figures.pending[thread.id] ?? 0)
        }
    }

    /// `--tiers`: a Freemium client keeps at most `Tier.progressPhotos` progress photos over all their check-ins; a
    /// check-in that would pass it is refused whole (`plan_upgrade_required`, `upgrade_to` premium).
    private mutating func checkPhotoAllowance(_ command: CheckInSubmitCommand, of userID: String, _ context: CoreContext) throws(APIError) {
        guard let meter = meter(userID, context), let limit = meter.tier.progressPhotos, let photos = command.photos else { return }
        let adding = [photos.front, photos.side, photos.back].compactMap { $0 }.count
        guard adding > 0 else { return }
        let kept = coaching.checkIns(of: userID).reduce(0) { total, checkIn in
            total + [checkIn.photos?.front, checkIn.photos?.side, checkIn.photos?.back].compactMap { $0 }.count
        }
        if kept + adding > limit {
            throw APIError(.planUpgradeRequired, field: "photos", detail: .progressPhotos(limit: limit))
        }
    }
}
