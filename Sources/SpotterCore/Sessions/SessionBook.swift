/// Every session, with the rule no timer, command or interleaving may break: **no user is in two overlapping
/// sessions that hold time** (`scheduled`, `reschedule_requested` on its current slot, `in_progress`). Pure and
/// single-threaded: the shell runs it on one thread, so the overlap check and the change are one step.
public struct SessionBook: Sendable {
    public struct Config: Sendable {
        /// How long before the start a join is accepted (default 10 minutes).
        public var joinEarlySeconds: Int64 = 600
        /// The "starting soon" notice, this long before the start (default 10 minutes).
        public var reminderSeconds: Int64 = 600
        /// A session in progress completes by itself this long after its end (default 30 minutes).
        public var autoCompleteAfterSeconds: Int64 = 1800
        /// Sessions one coach and client may have open (not final: pending, upcoming or under way) at once; a
        /// new invite or request past it is refused (`tooManyOpen`), so no one can flood the other's calendar.
        public var maxOpenPerPair = 20
        public init() {}
    }

    public let config: Config
    /// Every session, in creation order; `index` finds one by id.
    private(set) var storage: [Session] = []
    private var index: [String: Int] = [:]
    /// Each user's sessions (positions in `storage`, in creation order): overlap checks and calendars read only
    /// these, so their cost follows one user's sessions, not everyone's. A session's participants never change.
    private var byUser: [String: [Int]] = [:]
    /// Sessions not yet final: what the timers look at.
    private(set) var open: Set<Int> = []
    /// When each open session's next step is due (`SessionDueQueue`): a tick reads what is due, not every session.
    var timers = SessionDueQueue()

    public init(config: Config = Config(), sessions: [Session] = []) {
        self.config = config
        for session in sessions { insert(session) }
    }

    public subscript(id: String) -> Session? {
        index[id].map { storage[$0] }
    }

    /// Every session by id (a copy of the whole book: for tests and inspection).
    public var sessions: [String: Session] {
        Dictionary(uniqueKeysWithValues: storage.map { ($0.id, $0) })
    }

    private mutating func insert(_ session: Session) {
        let position = storage.count
        storage.append(session)
        index[session.id] = position
        byUser[session.coachID, default: []].append(position)
        byUser[session.clientID, default: []].append(position)
        if !session.status.isFinal { open.insert(position) }
        scheduleTimer(position)
    }

    /// A session as a record committed elsewhere left it (cluster mode: another process's command or timer):
    /// it replaces the one with its id, or is added. Applying the same record again changes nothing.
    public mutating func learn(_ session: Session) {
        guard let position = index[session.id] else { return insert(session) }
        storage[position] = session
        if session.status.isFinal { open.remove(position) } else { open.insert(position) }
        scheduleTimer(position)
    }

    /// Stores a changed session (never a new one: `insert`), and drops it from the timers once final.
    /// Marks a session just created or moved by its coach as set outside (or inside) the coach's availability;
    /// not a change of its own (the command that moved it is).
    public mutating func flagOutsideAvailability(_ id: String, _ flag: Bool) {
        guard let position = index[id] else { return }
        storage[position].outsideAvailability = flag
    }

    private mutating func store(_ session: Session) {
        guard let position = index[session.id] else { return insert(session) }
        if touched[session.id] == nil { touched[session.id] = storage[position] }
        storage[position] = session
        if session.status.isFinal { open.remove(position) }
        scheduleTimer(position)
    }

    /// `userID`'s sessions, in creation order.
    /// Runs `body` on each session of `userID`, in no particular order, without gathering them first.
    public func forEachSession(of userID: String, _ body: (Session) -> Void) {
        for position in byUser[userID] ?? [] { body(storage[position]) }
    }

    private func sessions(of userID: String) -> [Session] {
        (byUser[userID] ?? []).map { storage[$0] }
    }

    /// The result of a command: every session it changed (in the order they changed) and the notices.
    public struct Outcome: Equatable, Sendable {
        public var changed: [Session] = []
        public var notices: [SessionNotice] = []
        /// Each changed session as it was before the command (absent for one it created).
        public var previous: [String: Session] = [:]
    }

    /// Sessions changed by the operation under way, as they were before it (filled by `store`).
    private var touched: [String: Session] = [:]

    // MARK: Creating

    /// A coach's invite (`proposedBy` coach) or a client's request for a call (`proposedBy` client) on their
    /// thread. An invite into a slot the coach or client already holds waits in `needs_resolution`.
    public mutating func create(id: String, threadID: String, coachID: String, clientID: String, by actor: SessionActor,
                                start: Int64, durationMinutes: Int, purpose: String, meetURL: String,
                                now: Int64) -> Result<Outcome, SessionError> {
        guard actor != .system else { return .failure(.notParticipant) }
        if let error = Self.validate(start: start, durationMinutes: durationMinutes, now: now) { return .failure(error) }
        guard !purpose.isEmpty, purpose.count <= SessionRules.maxPurposeCharacters else { return .failure(.invalidPurpose) }
        guard openCount(coachID: coachID, clientID: clientID) < config.maxOpenPerPair else { return .failure(.tooManyOpen) }
        var session = Session(id: id, threadID: threadID, coachID: coachID, clientID: clientID, start: start,
                              durationMinutes: durationMinutes, purpose: purpose, meetURL: meetURL,
                              status: actor == .coach ? .invited : .requested, proposedBy: actor)
        if actor == .coach, let existing = firstOverlap(with: session, start: start, end: session.end) {
            session.held = .invited
            session.conflictWith = existing.id
            session.status = .needsResolution
        }
        insert(session)
        return .success(Outcome(changed: [session]))
    }

    // MARK: Acting

    /// `action` on a session by one of its participants. `start` is the new time for `propose`, `reschedule`
    /// and `ask_reschedule` (then it is the existing session's new start); `reason` goes with `cancel` and
    /// `replace_existing`.
    public mutating func act(_ action: SessionAction, sessionID: String, userID: String, start: Int64? = nil,
                             reason: String? = nil, now: Int64) -> Result<Outcome, SessionError> {
        guard let session = self[sessionID] else { return .failure(.notFound) }
        guard let actor = session.actor(userID) else { return .failure(.notParticipant) }
        touched = [:]
        defer { touched = [:] }
        return perform(action, on: session, by: actor, start: start, reason: reason, now: now).map { outcome in
            var outcome = outcome
            outcome.previous = touched
            return outcome
        }
    }

    /// The server's own actions that are due at `now` (expiry, missed, completion, reminders), applied.
    public mutating func tick(now: Int64) -> Outcome {
        var outcome = Outcome()
        touched = [:]
        defer { touched = [:] }
        // What is due, in order of start (then id), whatever order the book was built in: a restarted server
        // does the same. From the due-time queue, not a look at every open session.
        let due = takeDue(now: now)
        // Each due session is queued again at its next step once handled (one whose step failed stays due).
        defer { for position in due { scheduleTimer(position) } }
        for position in due {
            // Re-read: an earlier step of this tick may have changed it.
            let session = storage[position], id = session.id
            guard let step = nextStep(session), step.at <= now else { continue }
            // A reminder for a session already over (the server was down) is skipped: it is missed.
            guard let action = step.action ?? (now >= session.end ? .miss : nil) else {
                var reminded = session
                reminded.reminded = true
                reminded.version += 1
                store(reminded)
                outcome.changed.append(reminded)  // logged, so it fires once across restarts
                outcome.notices.append(.startingSoon(sessionID: id))
                continue
            }
            if case .success(let done) = perform(action, on: session, by: .system, start: nil, reason: nil, now: now) {
                outcome.changed += done.changed
                outcome.notices += done.notices
            }
        }
        outcome.previous = touched
        return outcome
    }

    /// The next moment something is due for `session` (for the shell's timer), or nil.
    public func nextDue(_ session: Session) -> Int64? { nextStep(session)?.at }

    /// Sessions of `userID` whose slot meets [from, to), by start.
    public func calendar(of userID: String, from: Int64, to: Int64) -> [Session] {
        (byUser[userID] ?? []).compactMap { position in
            storage[position].start < to && storage[position].end > from ? storage[position] : nil
        }.sorted { ($0.start, $0.id) < ($1.start, $1.id) }
    }

    /// A page of `calendar(of:from:to:)`: the first `limit` sessions after `after` (a session's start and id,
    /// in calendar order), and whether more follow.
    public func calendarPage(of userID: String, from: Int64, to: Int64, after: (start: Int64, id: String)?,
                             limit: Int) -> (sessions: [Session], more: Bool) {
        var all = calendar(of: userID, from: from, to: to)
        if let after { all.removeAll { ($0.start, $0.id) <= (after.start, after.id) } }
        return (Array(all.prefix(limit)), all.count > limit)
    }

    /// How many sessions of the pair are not final.
    public func openCount(coachID: String, clientID: String) -> Int {
        var count = 0
        for position in byUser[clientID] ?? [] where storage[position].coachID == coachID && !storage[position].status.isFinal {
            count += 1
        }
        return count
    }

    // MARK: Ended links

    /// The threads holding sessions that are not final, with their coach (a start checks that none is of a
    /// link that ended while the server was down).
    public var threadsWithOpenSessions: [String: String] {
        var threads: [String: String] = [:]
        for position in open { threads[storage[position].threadID] = storage[position].coachID }
        return threads
    }

    /// The coaching link of `threadID` ended: the server cancels each of its sessions that is not final and not
    /// under way (`cancel_reason` `link_ended`), one outcome per session in order of start. A session under way
    /// runs to its end and completes by itself; the thread refuses every other command.
    public mutating func endLink(threadID: String, coachID: String, now: Int64) -> [Outcome] {
        let ending = sessions(of: coachID).filter { $0.threadID == threadID && !$0.status.isFinal && $0.status != .inProgress }
            .sorted { ($0.start, $0.id) < ($1.start, $1.id) }
        var outcomes: [Outcome] = []
        for session in ending {
            // Re-read: cancelling one may have settled another.
            guard let current = self[session.id], !current.status.isFinal, current.status != .inProgress else { continue }
            touched = [:]
            if case .success(var outcome) = perform(.cancel, on: current, by: .system, start: nil,
                                                    reason: SessionRules.linkEndedReason, now: now) {
                outcome.previous = touched
                outcomes.append(outcome)
            }
        }
        touched = [:]
        return outcomes
    }

    /// A coach's sessions waiting for a conflict decision (the dashboard badge).
    public func pendingResolutions(ofCoach coachID: String) -> [Session] {
        sessions(of: coachID).filter { $0.coachID == coachID && $0.status == .needsResolution }.sorted { $0.start < $1.start }
    }

    // MARK: The steps

    /// The server's next step for `session` and when it is due: an action, or (nil) the "starting soon" reminder.
    func nextStep(_ session: Session) -> (at: Int64, action: SessionAction?)? {
        switch session.status {
        case .requested, .invited, .alternativeProposed, .needsResolution, .rescheduleRequested:
            return (session.start, .expire)  // unanswered by the start; a reschedule request lapses
        case .scheduled:
            return session.reminded ? (session.end, .miss) : (session.start - config.reminderSeconds, nil)
        case .inProgress:
            return (session.end + config.autoCompleteAfterSeconds, .expire)
        case .completed, .cancelled, .declined, .expired, .missed:
            return nil
        }
    }

    private mutating func perform(_ action: SessionAction, on session: Session, by actor: SessionActor, start: Int64?,
                                  reason: String?, now: Int64) -> Result<Outcome, SessionError> {
        let target: SessionMachine.Target
        // The server cancels what either side could cancel (an ended link: `endLink`); the table has no such rule.
        let decided = actor == .system && action == .cancel
            ? SessionMachine.next(session.status, .cancel, by: .coach).flatMapError { _ in
                SessionMachine.next(session.status, .cancel, by: .client)
            }
            : SessionMachine.next(session.status, action, by: actor, proposedBy: session.proposedBy)
        switch decided {
        case .success(let next): target = next
        case .failure(let refusal): return .failure(.refused(refusal))
        }
        var next = session
        next.version += 1
        var outcome = Outcome()
        var alsoChanged: [Session] = []

        switch (session.status, action) {
        case (.requested, .propose), (.invited, .propose), (.alternativeProposed, .propose):
            guard let start else { return .failure(.missingStart) }
            if let error = Self.validate(start: start, durationMinutes: session.durationMinutes, now: now) { return .failure(error) }
            if session.status == .invited {
                next.proposedStart = start  // the client's alternative; the invite's slot stays until accepted
            } else {
                next.start = start  // the coach's own time: a new invite
                next.proposedStart = nil
            }
            next.proposedBy = actor
        case (.requested, .accept), (.invited, .accept), (.alternativeProposed, .accept):
            if session.status == .alternativeProposed, let proposed = session.proposedStart { next.start = proposed }
            next.proposedStart = nil
            next.proposedBy = nil
            if now >= next.start { return .failure(.startInPast) }
            if let existing = firstOverlap(with: next, start: next.start, end: next.end) {
                next.status = .needsResolution
                next.held = .scheduled
                next.conflictWith = existing.id
                store(next)
                return .success(Outcome(changed: [next]))
            }
        case (.alternativeProposed, .decline):
            next.proposedStart = nil
            next.proposedBy = .coach
        case (.scheduled, .reschedule):
            guard let start else { return .failure(.missingStart) }
            if let error = Self.validate(start: start, durationMinutes: session.durationMinutes, now: now) { return .failure(error) }
            if let existing = firstOverlap(with: session, start: start, end: session.end(startingAt: start)) {
                return .failure(.conflict(existing))
            }
            next.proposedStart = start
            next.proposedBy = actor
        case (.rescheduleRequested, .accept), (.rescheduleRequested, .decline), (.rescheduleRequested, .expire):
            // Accepted, the session moves (if the new slot is still free); otherwise it keeps its slot. Either
            // way a session waiting for this slot learns whether it was freed.
            let moves = action == .accept
            if moves {
                guard let proposed = session.proposedStart else { return .failure(.missingStart) }
                if let existing = firstOverlap(with: session, start: proposed, end: session.end(startingAt: proposed),
                                               ignoring: session.resolving) {
                    return .failure(.conflict(existing))
                }
                next.start = proposed
            }
            store(next.with(status: .scheduled, held: nil))
            outcome.changed.append(self[next.id]!)
            if let waiting = session.resolving { settle(waiting, freed: moves, now: now, into: &outcome) }
            return .success(outcome)
        case (.scheduled, .join), (.inProgress, .join):
            guard now >= session.start - config.joinEarlySeconds, now < session.end else { return .failure(.outsideJoinWindow) }
            if actor == .coach && !session.coachJoined {
                next.coachJoined = true
                outcome.notices.append(.coachJoined(sessionID: session.id))
            }
        case (.needsResolution, .askReschedule):
            guard let start else { return .failure(.missingStart) }
            guard var existing = session.conflictWith.flatMap({ self[$0] }) else { return .failure(.notFound) }
            // Only a session that stands as agreed can be asked to move (not one already asked, or under way).
            guard existing.status == .scheduled else {
                return .failure(.refused(SessionRefusal(
                    reason: .notAllowed, status: existing.status, action: action, actor: actor,
                    allowed: SessionMachine.allowed(.needsResolution, by: actor).filter { $0 != .askReschedule })))
            }
            if let error = Self.validate(start: start, durationMinutes: existing.durationMinutes, now: now) { return .failure(error) }
            let end = existing.end(startingAt: start)
            // The existing session's new slot must be free, and must not take the slot it is freeing.
            if let other = firstOverlap(with: existing, start: start, end: end) { return .failure(.conflict(other)) }
            if session.overlaps(start: start, end: end) { return .failure(.conflict(session)) }
            existing.version += 1
            existing.status = .rescheduleRequested
            existing.proposedStart = start
            existing.proposedBy = .coach
            existing.resolving = session.id
            store(existing)
            alsoChanged.append(existing)
        case (.needsResolution, .replaceExisting):
            guard var existing = session.conflictWith.flatMap({ self[$0] }) else { return .failure(.notFound) }
            if existing.status.holdsTime {
                existing = existing.with(status: .cancelled, held: nil)
                existing.version += 1
                existing.cancelReason = reason ?? "replaced"
                store(existing)
                alsoChanged.append(existing)
            }
            outcome.changed = alsoChanged
            settle(session.id, freed: true, now: now, into: &outcome)
            return .success(outcome)
        case (_, .cancel), (.needsResolution, .keepExisting):
            next.cancelReason = reason ?? (action == .keepExisting ? "kept_existing" : nil)
        default:
            break
        }

        switch target {
        case .status(let status):
            store(next.with(status: status, held: status == .needsResolution ? next.held : nil))
        case .held:
            store(next.with(status: next.held ?? .invited, held: nil))
        }
        outcome.changed = alsoChanged + [self[next.id]!] + outcome.changed
        // A conflict that ended without the coach's choice going through (kept, cancelled, expired): the
        // existing session asked to move for it keeps its slot, the request withdrawn.
        if session.status == .needsResolution, self[session.id]!.status.isFinal,
           let asked = sessions(of: session.coachID).first(where: { $0.resolving == session.id && $0.status == .rescheduleRequested }) {
            var withdrawn = asked.with(status: .scheduled, held: nil)
            withdrawn.version += 1
            store(withdrawn)
            outcome.changed.append(withdrawn)
        }
        // A session that was asked to free its slot for another and is now cancelled: the slot is free.
        if let waiting = session.resolving, self[session.id]!.status != .rescheduleRequested {
            settle(waiting, freed: !self[session.id]!.status.holdsTime, now: now, into: &outcome)
        }
        return .success(outcome)
    }

    /// A session waiting in `needs_resolution` learns whether its slot was freed: if so it goes on (or waits
    /// on the next session it still overlaps), if not it is rejected.
    private mutating func settle(_ id: String, freed: Bool, now: Int64, into outcome: inout Outcome) {
        guard var waiting = self[id], waiting.status == .needsResolution else { return }
        waiting.version += 1
        if !freed || now >= waiting.start {
            waiting.status = now >= waiting.start ? .expired : .declined
            waiting.held = nil
            waiting.conflictWith = nil
        } else if let still = firstOverlap(with: waiting, start: waiting.start, end: waiting.end) {
            waiting.conflictWith = still.id
        } else {
            waiting.status = waiting.held ?? .invited
            waiting.held = nil
            waiting.conflictWith = nil
        }
        store(waiting)
        outcome.changed.append(waiting)
    }

    /// The first session (by start) that holds time, shares a participant with `session`, is not `session`
    /// itself (nor `ignoring`), and meets [start, end).
    func firstOverlap(with session: Session, start: Int64, end: Int64, ignoring: String? = nil) -> Session? {
        var best: Int?
        for list in [byUser[session.coachID], byUser[session.clientID]] {
            for position in list ?? [] {
                // Read in place (no copy of the session) and the cheap tests first.
                guard storage[position].status.holdsTime, storage[position].start < end, start < storage[position].end,
                      storage[position].id != session.id, storage[position].id != ignoring else { continue }
                if let current = best,
                   (storage[current].start, storage[current].id) <= (storage[position].start, storage[position].id) { continue }
                best = position
            }
        }
        return best.map { storage[$0] }
    }

    static func validate(start: Int64, durationMinutes: Int, now: Int64) -> SessionError? {
        if start <= now { return .startInPast }
        if !SessionRules.durations.contains(durationMinutes) { return .invalidDuration }
        return nil
    }
}
