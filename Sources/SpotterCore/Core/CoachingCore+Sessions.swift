import FoundationEssentials
import SpotterProtocol

/// Video sessions: `SessionBook` runs the rules (so an overlap check and its change are one step); each changed
/// session is one `session` record, the thread's system message about it.
extension CoachingCore {
    mutating func createSession(userID: String, invite: Bool, threadID: String?, start: Int64?, minutes: Int?,
                                purpose: String?, _ context: CoreContext) throws(APIError) -> CoreDecision {
        try Self.limit(&sessionCreates, userID, now: context.now)
        guard let threadID else { throw APIError(.missingField, field: "thread_id") }
        guard let start else { throw APIError(.missingField, field: "start") }
        guard let minutes else { throw APIError(.missingField, field: "duration_minutes") }
        let (thread, side) = try chat.participant(threadID, userID)
        guard thread.active else { throw APIError(.threadInactive, field: "thread_id") }
        // The coach invites; the client asks for a call.
        guard side == (invite ? .coach : .client) else { throw APIError(.forbidden, field: "type") }
        let actor: SessionActor = side == .coach ? .coach : .client
        if let refusal = tierRefusal(clientID: thread.clientID, start: start, minutes: minutes, countsNow: !invite, context) {
            throw refusal
        }
        let outside = try availabilityCheck(coachID: thread.coachID, actor: actor, start: start, minutes: minutes, context)
        let result = sessions.create(
            id: context.newID(), threadID: thread.id, coachID: thread.coachID, clientID: thread.clientID, by: actor,
            start: start, durationMinutes: minutes, purpose: purpose ?? "",
            meetURL: context.features.meetBaseURL + context.newRoom(), now: context.now)
        switch result {
        case .success(var outcome):
            if let outside { flag(&outcome, outcome.changed.last?.id, outside) }
            return commit(outcome, actor: actor, action: nil, for: userID, about: nil, context)
        case .failure(let error):
            throw APIError(session: error)
        }
    }

    mutating func actOnSession(userID: String, sessionID: String?, action name: String?, start: Int64?, reason: String?,
                               _ context: CoreContext) throws(APIError) -> CoreDecision {
        try Self.limit(&sessionActs, userID, now: context.now)
        guard let id = sessionID else { throw APIError(.missingField, field: "session_id") }
        guard let name else { throw APIError(.missingField, field: "action") }
        // The server's own actions are not commands.
        guard let action = SessionAction(rawValue: name), ![.confirm, .reject, .expire, .miss].contains(action) else {
            throw APIError(.badRequest, field: "action")
        }
        let actor = sessions[id]?.actor(userID)
        // A session of an ended link is no one's to move (its participants learn nothing more of each other).
        if actor != nil, let session = sessions[id], chat.thread(id: session.threadID)?.active == false {
            throw APIError(.threadInactive, field: "session_id")
        }
        // An accept confirms the session: it must fit the client's video calls of its month (`--tiers`).
        if action == .accept, let session = sessions[id],
           [.invited, .requested, .alternativeProposed].contains(session.status),
           let refusal = tierRefusal(clientID: session.clientID, start: session.proposedStart ?? session.start,
                                     minutes: nil, countsNow: true, context) {
            throw refusal
        }
        // A new time for the session itself (not `ask_reschedule`'s, which moves the coach's other session).
        var outside: Bool?
        if let start, [.propose, .reschedule].contains(action), let actor, let session = sessions[id] {
            outside = try availabilityCheck(coachID: session.coachID, actor: actor, start: start,
                                            minutes: session.durationMinutes, context)
        }
        switch sessions.act(action, sessionID: id, userID: userID, start: start, reason: reason, now: context.now) {
        case .success(var outcome):
            if let outside { flag(&outcome, id, outside) }
            return commit(outcome, actor: actor, action: action, for: userID, about: id, context)
        case .failure(let error):
            throw APIError(session: error)
        }
    }

    /// A new time against the coach's availability (when they saved one): a client's outside it is refused
    /// (`outside_availability`); a coach's is allowed, and the answer says whether to flag the session
    /// (`outside_availability: true`). Nil: nothing to flag either way (no availability, or a time in the past,
    /// which the book refuses with its own error).
    private func availabilityCheck(coachID: String, actor: SessionActor, start: Int64, minutes: Int,
                                   _ context: CoreContext) throws(APIError) -> Bool? {
        guard start > context.now, let availability = context.availability(coachID) else { return nil }
        let outside = !FreeSlots.allows(availability, start: start, minutes: minutes, now: context.now)
        if outside, actor == .client { throw APIError(.outsideAvailability, field: "start") }
        return actor == .coach ? outside : nil
    }

    private mutating func flag(_ outcome: inout SessionBook.Outcome, _ id: String?, _ outside: Bool) {
        guard let id, let index = outcome.changed.firstIndex(where: { $0.id == id }) else { return }
        sessions.flagOutsideAvailability(id, outside)
        outcome.changed[index].outsideAvailability = outside
    }

    /// One attempt of `userID` against `limiter` at `now`: `rate_limited` with the wait when past the limit.
    private static func limit(_ limiter: inout RateLimiter, _ userID: String, now: Int64) throws(APIError) {
        if case .limited(let wait) = limiter.attempt(userID, now: now) {
            throw APIError(.rateLimited, field: "type", retryAfterSeconds: wait)
        }
    }

    /// What is due now (expiry, reminders, missed sessions, completion); first, once, the sessions of links that
    /// ended before their sessions were cancelled (a crash between the two commits).
    mutating func tick(_ context: CoreContext) -> CoreDecision {
        if context.now % 60 == 0 {
            sessionCreates.prune(now: context.now)
            sessionActs.prune(now: context.now)
        }
        var records: [ChatRecord] = []
        var quotaChanged: [String] = []
        if !sweptEndedLinks {
            sweptEndedLinks = true
            for (threadID, _) in sessions.threadsWithOpenSessions {
                guard let thread = chat.thread(id: threadID), !thread.active,
                      case .commit(let ended) = linkEnded(threadNo: thread.no, context) else { continue }
                records += ended.records
                quotaChanged += ended.quotaChanged
            }
        }
        let outcome = sessions.tick(now: context.now)
        if !outcome.changed.isEmpty, case .commit(let due) = commit(outcome, actor: .system, action: nil, for: nil, about: nil, context) {
            records += due.records
            quotaChanged += due.quotaChanged
        }
        return .commit(CoreCommit(records: records, reply: .none, quotaChanged: quotaChanged, byTimers: !outcome.changed.isEmpty))
    }

    /// The coaching link of a thread ended (a coach change approved): its sessions that are not final and not
    /// under way are cancelled, each a record and a system message (`link_ended`), so nothing the former coach set
    /// up still moves in the former client's calendar.
    mutating func linkEnded(threadNo: Int64, _ context: CoreContext) -> CoreDecision {
        guard let thread = chat.thread(no: threadNo) else { return .commit(CoreCommit(records: [], reply: .none)) }
        var records: [ChatRecord] = []
        var quotaChanged: [String] = []
        for outcome in sessions.endLink(threadID: thread.id, coachID: thread.coachID, now: context.now) {
            guard case .commit(let made) = commit(outcome, actor: .system, action: .cancel, for: nil, about: nil, context) else { continue }
            records += made.records
            quotaChanged += made.quotaChanged
        }
        return .commit(CoreCommit(records: records, reply: .none, quotaChanged: quotaChanged))
    }

    /// One record per changed session (its system message), and a rating prompt for each session that completed
    /// (`--ratings`). The reply is the session the command was about (an act's), or the one a create made, and
    /// never one that `userID` takes no part in: one answer may change another client's session too (a conflict's
    /// `ask_reschedule` answered moves the coach's other session), which reaches its own participants as events.
    private mutating func commit(_ outcome: SessionBook.Outcome, actor: SessionActor?, action: SessionAction?,
                                 for userID: String?, about: String?, _ context: CoreContext) -> CoreDecision {
        var records: [ChatRecord] = []
        var made: [(body: SessionRecordBody, sessionJSON: String, thread: ChatThread)] = []
        var previous = outcome.previous
        for session in outcome.changed {
            guard let thread = chat.thread(id: session.threadID) else { continue }
            let old = previous[session.id]
            previous[session.id] = session
            let change = old == nil ? "created"
                : outcome.notices.contains(.coachJoined(sessionID: session.id)) ? "coach_joined"
                : outcome.notices.contains(.startingSoon(sessionID: session.id)) ? "starting_soon"
                : (session.id == (about ?? outcome.changed.last?.id) ? action?.rawValue : nil) ?? "updated"
            let body = SessionRecordBody(change: change, actor: actor, action: action, before: old, after: session)
            let sessionJSON = body.session.jsonText
            let side: Side? = switch actor { case .coach: .coach; case .client: .client; case .system, nil: nil }
            let record = chat.sessionMessage(thread: thread, actor: side, sessionID: session.id,
                                             body: body.jsonText(sessionJSON: sessionJSON), now: context.now)
            madeSessions[MadeSession(threadNo: record.threadNo, seq: record.seq)] = (body, sessionJSON)
            records.append(record)
            made.append((body, sessionJSON, thread))
        }
        if context.features.ratings {
            for (body, _, thread) in made where body.session.status == SessionStatus.completed.rawValue
                && body.previousStatus != SessionStatus.completed.rawValue {
                records.append(chat.ratingPrompt(thread: thread, messagesSent: 0, sessionID: body.session.id, now: context.now))
            }
        }
        let theirs = made.filter { userID == nil || $0.body.session.coachId == userID || $0.body.session.clientId == userID }
        let answer = (theirs.first { $0.body.session.id == about } ?? theirs.last { $0.body.change == "created" } ?? theirs.last)?
            .sessionJSON ?? "{}"
        // A confirmed, cancelled or declined call changes the client's quota.
        let clients = context.features.tiers ? Array(Set(made.map(\.thread.clientID))).sorted() : []
        return .commit(CoreCommit(records: records, reply: userID == nil ? .none : .json(answer), quotaChanged: clients))
    }

    /// What the client's tier refuses (`--tiers`): a call longer than the tier's (`invalid_duration`), or — when
    /// the change would confirm a call (`countsNow`: a client's request, an accept) — one more call than the tier
    /// gives in the month of `start` (`quota_exceeded`). Nil when it fits, and always without `--tiers`.
    mutating func tierRefusal(clientID: String, start: Int64, minutes: Int?, countsNow: Bool, _ context: CoreContext) -> APIError? {
        guard let meter = meter(clientID, at: start, context) else { return nil }
        if let minutes, minutes > meter.tier.callMinutes {
            return APIError(.invalidDuration, field: "duration_minutes", detail: .callLength(tier: meter.tier.rawValue))
        }
        if countsNow, callsUsed(clientID: clientID, month: meter.month) >= meter.tier.callsPerMonth {
            return APIError(.quotaExceeded, field: "start", detail: .callQuota(tier: meter.tier.rawValue))
        }
        return nil
    }

    /// A client's video calls in a month: sessions starting in it that were confirmed and not given back
    /// (cancelled, declined and expired ones do not count).
    public func callsUsed(clientID: String, month: QuotaMonth) -> Int {
        sessions.calendar(of: clientID, from: month.startsAt, to: month.resetsAt).filter { session in
            session.start >= month.startsAt
                && [.scheduled, .rescheduleRequested, .inProgress, .completed, .missed].contains(session.status)
        }.count
    }
}
