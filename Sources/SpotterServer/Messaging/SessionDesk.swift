import EventLoop
import FoundationEssentials
import SpotterCore
import SpotterProtocol
import SpotterPorts

/// Video sessions on the loop: runs `SessionBook` (so an overlap check and its change are one step), appends one
/// `session` record per changed session, and once they are durable replies and publishes each record's events —
/// a `session` event per participant, with the system message in the reader's language and time zone. A timer
/// applies what is due (expiry, reminders, missed sessions, completion); its changes are records too, so each
/// fires once across restarts. Loop thread only.
final class SessionDesk {
    unowned let hub: MessagingHub
    private(set) var book: SessionBook
    let meetBaseURL: String
    let directory: UserDirectory?
    private var timer: Timer?
    /// Per account, shared by all its sockets (in this process): `session.invite` and `session.request`
    /// together, and `session.act`. Past either a command gets `rate_limited` with `retry_after`.
    private var createsByAccount: RateLimiter
    private var actsByAccount: RateLimiter
    /// Whether the first tick has cancelled the sessions of links that ended while no process was up to.
    private var sweptEndedLinks = false

    init(hub: MessagingHub, sessions: [Session], meetBaseURL: String, directory: UserDirectory?,
         config: SessionBook.Config = SessionBook.Config()) {
        self.hub = hub
        self.book = SessionBook(config: config, sessions: sessions)
        self.meetBaseURL = meetBaseURL
        self.directory = directory
        createsByAccount = RateLimiter(limit: max(1, hub.server.config.sessionCreatesPerMinute), windowSeconds: 60)
        actsByAccount = RateLimiter(limit: max(1, hub.server.config.sessionActsPerMinute), windowSeconds: 60)
        hub.sessionEvents = { [unowned self] record, thread in events(for: record, thread) }
        hub.onReload.append { [unowned self] loaded in book = SessionBook(config: book.config, sessions: loaded.sessions) }
    }

    /// Checks what is due once a second.
    func start(loop: Loop) {
        let timer = Timer(loop: loop)
        timer.start(after: 1000, repeat: 1000) { [unowned self] in tick() }
        self.timer = timer
    }

    // MARK: - Commands

    func create<Mark>(_ command: SessionCreateCommand<Mark>, by userID: String, now: Int64,
                      reply: @escaping (Result<String, APIError>) -> Void) {
        let invite = Mark.self == Invite.self
        do throws(APIError) {
            if let refusal = hub.writeRefusal { throw refusal }
            try Self.limit(&createsByAccount, userID, now: now)
            guard let threadID = command.threadId else { throw APIError(.missingField, field: "thread_id") }
            guard let start = command.start else { throw APIError(.missingField, field: "start") }
            guard let minutes = command.durationMinutes else { throw APIError(.missingField, field: "duration_minutes") }
            let (thread, side) = try hub.state.participant(threadID, userID)
            guard thread.active else { throw APIError(.threadInactive, field: "thread_id") }
            // The coach invites; the client asks for a call.
            guard side == (invite ? .coach : .client) else { throw APIError(.forbidden, field: "type") }
            let actor: SessionActor = side == .coach ? .coach : .client
            if let refusal = tierRefusal(clientID: thread.clientID, start: start, minutes: minutes, countsNow: !invite) {
                throw refusal
            }
            let room = "spotter-" + Digest.hex(SecureRandom.bytes(16))  // 128 random bits
            let result = book.create(
                id: SecureRandom.uuid(), threadID: thread.id, coachID: thread.coachID, clientID: thread.clientID,
                by: actor, start: start, durationMinutes: minutes, purpose: command.purpose ?? "",
                meetURL: meetBaseURL + room, now: now)
            switch result {
            case .success(let outcome):
                commit(outcome, actor: actor, action: nil, now: now, reply: reply, for: userID, about: nil)
            case .failure(let error):
                throw APIError(session: error)
            }
        } catch {
            reply(.failure(error))
        }
    }

    func act(_ command: SessionActCommand, by userID: String, now: Int64, reply: @escaping (Result<String, APIError>) -> Void) {
        if let refusal = hub.writeRefusal { return reply(.failure(refusal)) }
        do throws(APIError) { try Self.limit(&actsByAccount, userID, now: now) } catch { return reply(.failure(error)) }
        guard let id = command.sessionId else { return reply(.failure(APIError(.missingField, field: "session_id"))) }
        guard let name = command.action else { return reply(.failure(APIError(.missingField, field: "action"))) }
        // The server's own actions are not commands.
        guard let action = SessionAction(rawValue: name), ![.confirm, .reject, .expire, .miss].contains(action) else {
            return reply(.failure(APIError(.badRequest, field: "action")))
        }
        let actor = book[id]?.actor(userID)
        // A session of an ended link is no one's to move (its participants learn nothing more of each other).
        if actor != nil, let session = book[id], hub.state.thread(id: session.threadID)?.active == false {
            return reply(.failure(APIError(.threadInactive, field: "session_id")))
        }
        // An accept confirms the session: it must fit the client's video calls of its month (`--tiers`).
        if action == .accept, let session = book[id],
           [.invited, .requested, .alternativeProposed].contains(session.status),
           let refusal = tierRefusal(clientID: session.clientID, start: session.proposedStart ?? session.start,
                                     minutes: nil, countsNow: true) {
            return reply(.failure(refusal))
        }
        switch book.act(action, sessionID: id, userID: userID, start: command.start, reason: command.reason, now: now) {
        case .success(let outcome):
            commit(outcome, actor: actor, action: action, now: now, reply: reply, for: userID, about: id)
        case .failure(let error):
            reply(.failure(APIError(session: error)))
        }
    }

    /// One attempt of `userID` against `limiter` at `now`: `rate_limited` with the wait when past the limit.
    private static func limit(_ limiter: inout RateLimiter, _ userID: String, now: Int64) throws(APIError) {
        if case .limited(let wait) = limiter.attempt(userID, now: now) {
            throw APIError(.rateLimited, field: "type", retryAfterSeconds: wait)
        }
    }

    // MARK: - Ended links

    /// The coaching link of `thread` ended (a coach change approved): the server cancels its sessions that are
    /// not final and not under way, each a record and a system message (`link_ended`), so nothing the former
    /// coach set up still moves in the former client's calendar.
    func linkEnded(_ thread: ChatThread, now: Int64) {
        for outcome in book.endLink(threadID: thread.id, coachID: thread.coachID, now: now) {
            commit(outcome, actor: .system, action: .cancel, now: now, reply: nil, for: nil, about: nil)
        }
    }

    /// The sessions of links that ended before their sessions were cancelled (a crash between the two commits).
    private func sweepEndedLinks(now: Int64) {
        sweptEndedLinks = true
        for (threadID, _) in book.threadsWithOpenSessions {
            if let thread = hub.state.thread(id: threadID), !thread.active { linkEnded(thread, now: now) }
        }
    }

    /// `sessions`: the user's sessions meeting [from, to), and (for a coach) the pending resolutions.
    func list(_ command: SessionsCommand, by userID: String, now: Int64) -> Result<String, APIError> {
        let from = command.from ?? now - 86_400
        let to = command.to ?? now + 30 * 86_400
        guard from < to, to - from <= 92 * 86_400 else { return .failure(APIError(.outOfRange, field: "to")) }
        let limit = command.limit ?? SessionsCommand.defaultLimit
        guard SessionsCommand.limits.contains(limit) else { return .failure(APIError(.outOfRange, field: "limit")) }
        var after: (start: Int64, id: String)?
        if let cursor = command.cursor {
            guard let parsed = Self.parseCursor(cursor) else { return .failure(APIError(.badRequest, field: "cursor")) }
            after = parsed
        }
        let page = book.calendarPage(of: userID, from: from, to: to, after: after, limit: limit)
        let pending = book.pendingResolutions(ofCoach: userID).count
        let budget = ReplyPage.budget(outbound: hub.server.config.maxOutboundBytes)
        return .success(ReplyPage.fitting(limit: page.sessions.count, budget: budget) { count in
            let shown = page.sessions.prefix(count)
            let next = (count < page.sessions.count || page.more) ? shown.last.map(Self.cursor(after:)) : nil
            return SessionsResult(sessions: shown.map(\.view), pendingResolutions: pending, nextCursor: next).jsonText
        })
    }

    /// A `sessions` cursor: the last listed session's start and id (`1790000000:uuid`), opaque to clients.
    static func cursor(after session: Session) -> String { "\(session.start):\(session.id)" }

    static func parseCursor(_ text: String) -> (start: Int64, id: String)? {
        guard let colon = text.firstIndex(of: ":"), let start = Int64(text[..<colon]) else { return nil }
        let id = String(text[text.index(after: colon)...])
        return id.isEmpty ? nil : (start, id)
    }

    /// What the client's tier refuses (`--tiers`): a call longer than the tier's (`invalid_duration`, naming
    /// it), or — when the change would confirm a call (`countsNow`: a client's request, an accept) — one more
    /// call than the tier gives in the month of `start` (`quota_exceeded`). Nil when it fits, and always
    /// without `--tiers`.
    func tierRefusal(clientID: String, start: Int64, minutes: Int?, countsNow: Bool) -> APIError? {
        guard let meter = hub.meter(clientID, now: start) else { return nil }
        if let minutes, minutes > meter.tier.callMinutes {
            return APIError(.invalidDuration, field: "duration_minutes", detail: .callLength(tier: meter.tier.rawValue))
        }
        if countsNow, callsUsed(clientID: clientID, month: meter.month) >= meter.tier.callsPerMonth {
            return APIError(.quotaExceeded, field: "start", detail: .callQuota(tier: meter.tier.rawValue))
        }
        return nil
    }

    /// A client's video calls this month (`--tiers`): sessions starting in the month that were confirmed and
    /// not given back (cancelled, declined and expired ones do not count).
    func callsUsed(clientID: String, month: QuotaMonth) -> Int {
        book.calendar(of: clientID, from: month.startsAt, to: month.resetsAt).filter { session in
            session.start >= month.startsAt
                && [.scheduled, .rescheduleRequested, .inProgress, .completed, .missed].contains(session.status)
        }.count
    }

    // MARK: - Timers

    func tick() {
        // In a cluster one process fires the timers (the one holding the timer lease), so each fires once.
        let now = unixNow()
        if now % 60 == 0 {
            createsByAccount.prune(now: now)
            actsByAccount.prune(now: now)
        }
        guard !hub.isOverloaded, hub.server.holdsTimers else { return }
        if !sweptEndedLinks { sweepEndedLinks(now: now) }
        let outcome = book.tick(now: now)
        guard !outcome.changed.isEmpty else { return }
        commit(outcome, actor: .system, action: nil, now: now, reply: nil, for: nil, about: nil)
    }

    // MARK: - Records and events

    /// Appends one record per changed session; on commit replies with the session the command was about and
    /// publishes every record's events. A failed append reloads the book from the log. Each session's JSON is
    /// written once, for its record, its events and the reply.
    ///
    /// The reply carries `about` (an act's session), or the session a create made, and never one that `userID`
    /// is not a participant of: one answer may change another client's session too (a conflict's
    /// `ask_reschedule` answered: the coach's other client's session moves with it), and that one reaches its
    /// own participants as events only.
    private func commit(_ outcome: SessionBook.Outcome, actor: SessionActor?, action: SessionAction?, now: Int64,
                        reply: ((Result<String, APIError>) -> Void)?, for userID: String?, about: String?) {
        var records: [ChatRecord] = []
        var made: [(body: SessionRecordBody, sessionJSON: String, thread: ChatThread)] = []
        var previous = outcome.previous
        for session in outcome.changed {
            guard let thread = hub.state.thread(id: session.threadID) else { continue }
            let old = previous[session.id]
            previous[session.id] = session
            let change = old == nil ? "created"
                : outcome.notices.contains(.coachJoined(sessionID: session.id)) ? "coach_joined"
                : outcome.notices.contains(.startingSoon(sessionID: session.id)) ? "starting_soon"
                : (session.id == (about ?? outcome.changed.last?.id) ? action?.rawValue : nil) ?? "updated"
            let body = SessionRecordBody(change: change, actor: actor, action: action, before: old, after: session)
            let sessionJSON = body.session.jsonText
            let side: Side? = switch actor { case .coach: .coach; case .client: .client; case .system, nil: nil }
            records.append(hub.state.sessionMessage(thread: thread, actor: side, sessionID: session.id,
                                                    body: body.jsonText(sessionJSON: sessionJSON), now: now))
            made.append((body, sessionJSON, thread))
        }
        // A completed session asks its client for a rating, in the same commit (`--ratings`).
        if hub.server.config.ratings {
            for (body, _, thread) in made where body.session.status == SessionStatus.completed.rawValue
                && body.previousStatus != SessionStatus.completed.rawValue {
                records.append(hub.state.ratingPrompt(thread: thread, messagesSent: 0, sessionID: body.session.id, now: now))
            }
        }
        let theirs = made.filter { userID == nil || $0.body.session.coachId == userID || $0.body.session.clientId == userID }
        let answer = (theirs.first { $0.body.session.id == about } ?? theirs.last { $0.body.change == "created" } ?? theirs.last)?
            .sessionJSON ?? "{}"
        hub.append(records) { [self] result in
            switch result {
            case .success(let done):
                reply?(.success(answer))
                for (record, made) in zip(done, made) {
                    hub.publish(record, events: events(made.body, sessionJSON: made.sessionJSON, record: record, made.thread))
                }
                for prompt in done.dropFirst(made.count) { hub.publish(prompt) }
                // A confirmed, cancelled or declined call changes the client's quota (a no-op without `--tiers`).
                for clientID in Set(made.map(\.thread.clientID)) { hub.pushQuota(clientID) }
                if actor == .system && action == nil { hub.failPoints.reached(.timer) }  // a tick's, not an ended link's
            case .failure(let error):
                reply?(.failure(error))  // the hub reloads the chat state and, through it, the book
            }
        }
    }

    /// A `session` record another process committed (cluster mode): the book takes the session as it left it.
    func learn(_ record: ChatRecord) {
        guard let stored = SessionRecordBody(record), let session = Session(view: stored.session) else { return }
        book.learn(session)
    }

    /// A `session` record's events read back from the log (`resume`).
    private func events(for record: ChatRecord, _ thread: ChatThread) -> [(userID: String, payload: String)] {
        guard let stored = SessionRecordBody(record) else { return [] }
        return events(stored, sessionJSON: stored.session.jsonText, record: record, thread)
    }

    /// A `session` record's events: one per participant, the system message worded for them, with their
    /// unread counts (the message is one). A record from before system messages took a seq makes none.
    private func events(_ stored: SessionRecordBody, sessionJSON: String, record: ChatRecord,
                        _ thread: ChatThread) -> [(userID: String, payload: String)] {
        [(Side.coach, SessionActor.coach), (.client, .client)].compactMap { side, reader in
            let userID = thread.userID(side)
            let (language, timeZone) = wording(for: userID)
            guard let message = SessionText.message(stored, record: record, threadID: thread.id, recipient: reader,
                                                    language: language, timeZone: timeZone) else { return nil }
            return (userID, SessionEvent.jsonText(
                change: stored.change, sessionJSON: sessionJSON, messageJSON: message.jsonText,
                unread: thread.unread(side), totalUnread: hub.state.totalUnread(userID)))
        }
    }

    /// The language and time zone a user's system messages are worded in (English and UTC if unknown).
    func wording(for userID: String) -> (Language, TimeZone) {
        let user = directory?.user(id: userID)
        return (user.flatMap { Language(rawValue: $0.language) } ?? .english, TimeZoneRules.zone(user?.timeZone ?? "UTC"))
    }
}
