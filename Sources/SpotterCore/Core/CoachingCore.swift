import FoundationEssentials
import SpotterProtocol

/// The server's rules as one value: the chat (threads, seqs, receipts, idempotency windows), the session book,
/// the coaching record, and the per-client counts the features meter (messages this month for `--tiers`, ever
/// for `--ratings`). Two entry points:
/// - `decide(command, context)`: the records a command appends and its reply, a refusal, or a read of the log it
///   needs first (the shell reads it, hands it to `learn`, and asks again);
/// - `apply(records, origin, context)`: committed records — this process's, or followed from others — and the
///   events they make for each participant.
///
/// The core reads no clock, no configuration and no store: `context` carries the time, the people, the features
/// and the source of new ids. A decision moves the state at once (the next send gets the next seq without
/// waiting for the disk); what lists and badges show moves when the records are applied as committed.
///
/// The chat part (`ChatState`) keeps its threads as objects, for speed: a copy of a core shares its threads, so
/// one process keeps one core (as the shell and the simulator do).
public struct CoachingCore {
    public internal(set) var chat: ChatState
    public internal(set) var sessions: SessionBook
    public internal(set) var coaching: CoachingBook
    /// When each meal log was sent, by thread number (the dashboard's meal-log consistency).
    public internal(set) var mealTimes: [Int64: [Int64]]
    /// Cursors below this cannot be resumed.
    public internal(set) var resumeFloor: Int64
    /// Clients' message counts this month (`--tiers`), loaded from the log on first need.
    public internal(set) var quotas = MessageQuotas()
    /// Clients' messages ever (`--ratings`: every 10th asks for a rating), loaded from the log on first need.
    public internal(set) var sentEver: [String: Int] = [:]
    /// Per client, how many times their counts were forgotten: a count read asked for before the latest forget
    /// may have been made before messages charged since, and is dropped when it lands (the steps ask again).
    public internal(set) var countGenerations: [String: Int] = [:]
    /// The session record bodies this core made, with their session's JSON, until their records are applied: a
    /// commit's events reuse them instead of decoding the record's JSON again.
    var madeSessions: [MadeSession: (body: SessionRecordBody, sessionJSON: String)] = [:]
    struct MadeSession: Hashable {
        let threadNo: Int64
        let seq: Int64
    }
    /// The quota month of each zone, computed once per zone and month.
    var months: [String: QuotaMonth] = [:]
    /// Per account: session creates and session actions in the last minute.
    var sessionCreates: RateLimiter
    var sessionActs: RateLimiter
    /// Whether the first tick has cancelled the sessions of links that ended while no process was up to.
    var sweptEndedLinks = false

    public init(chat: ChatState, sessions: [Session] = [], coaching: CoachingBook = CoachingBook(),
                mealTimes: [Int64: [Int64]] = [:], resumeFloor: Int64 = 0, features: CoreFeatures = CoreFeatures()) {
        self.chat = chat
        self.sessions = SessionBook(config: features.sessions, sessions: sessions)
        self.coaching = coaching
        self.mealTimes = mealTimes
        self.resumeFloor = resumeFloor
        sessionCreates = RateLimiter(limit: max(1, features.sessionCreatesPerMinute), windowSeconds: 60)
        sessionActs = RateLimiter(limit: max(1, features.sessionActsPerMinute), windowSeconds: 60)
    }

    // MARK: - Deciding

    public mutating func decide(_ command: CoreCommand, _ context: CoreContext) -> CoreDecision {
        do throws(APIError) {
            switch command {
            case .send(let request): return try send(request, context)
            case .receipt(let userID, let threadID, let delivered, let read):
                let made = try chat.receipt(userID: userID, threadID: threadID, delivered: delivered, read: read, now: context.now)
                return .commit(CoreCommit(records: made.record.map { [$0] } ?? [], reply: .json(made.result.jsonText)))
            case .createSession(let userID, let invite, let threadID, let start, let minutes, let purpose):
                return try createSession(userID: userID, invite: invite, threadID: threadID, start: start, minutes: minutes,
                                         purpose: purpose, context)
            case .actOnSession(let userID, let sessionID, let action, let start, let reason):
                return try actOnSession(userID: userID, sessionID: sessionID, action: action, start: start, reason: reason, context)
            case .tick: return tick(context)
            case .linkEnded(let threadNo): return linkEnded(threadNo: threadNo, context)
            case .tierSet(let clientID, let tier): return tierSet(clientID: clientID, tier: tier, context)
            case .record(let userID, let change): return try record(change, by: userID, context)
            case .changeMessage(let request): return try changeMessage(request, context)
            case .eraseUser(let userID): return eraseUser(userID, context)
            case .accountChanged(let change): return accountChanged(change, context)
            }
        } catch {
            return .refuse(error)
        }
    }

    /// What a read brought: the state takes it (a window, counts); the shell then decides again.
    public mutating func learn(_ read: CoreRead, _ result: CoreReadResult, _ context: CoreContext) {
        switch (read, result) {
        case (.counts(let userID, _, let since, _, let generation), .counts(let used, let ever)):
            guard generation == countGenerations[userID, default: 0] else { return }
            if let used, let since, !quotas.isLoaded(userID),
               let meter = meter(userID, context), meter.month.startsAt == since {
                quotas.load(userID, used: used, month: meter.month)
            }
            if let ever, sentEver[userID] == nil { sentEver[userID] = ever }
        case (.window(let threadID, _, _), .window(let keys)):
            chat.installWindow(threadID: threadID, keys, nowMilliseconds: context.nowMilliseconds)
        default:
            break  // `original` changes no state: the command carries it (`SendRequest.original`)
        }
    }

    // MARK: - Sends

    private mutating func send(_ request: SendRequest, _ context: CoreContext) throws(APIError) -> CoreDecision {
        // A client's send counts against the month's messages (`--tiers`): the check and the charge are made in
        // this one step, once the send is known to be new (a retry is never charged). A service's system message
        // is neither charged nor counted toward rating prompts.
        let counted = request.kind != .system
        let meter = counted ? meter(request.sender, context) : nil
        let rated = counted && asksForRatings(request.sender, context)
        let wantsMonth = meter != nil && !quotas.isLoaded(request.sender)
        let wantsEver = rated && sentEver[request.sender] == nil
        if wantsMonth || wantsEver {
            return .read(.counts(userID: request.sender, threadNos: chat.threads(of: request.sender).map(\.no),
                                 since: wantsMonth ? meter?.month.startsAt : nil, ever: wantsEver,
                                 generation: countGenerations[request.sender, default: 0]))
        }
        let quotas = quotas
        let decision = try chat.send(
            sender: request.sender, threadID: request.threadID, clientMessageID: request.clientMessageID,
            kind: request.kind, body: request.body, now: context.now, nowMilliseconds: context.nowMilliseconds,
            checkDuplicates: request.checkDuplicates,
            admit: meter.map { meter in { _ in quotas.refusal(request.sender, tier: meter.tier, month: meter.month) } },
            withAttachments: request.withAttachments)
        switch decision {
        case .append(let record):
            if let meter { self.quotas.charge(request.sender, month: meter.month) }
            var records = [record]
            // Every 10th message of a client asks them for a rating, in the same commit (`--ratings`).
            if rated, let thread = chat.thread(id: request.threadID) {
                let count = (sentEver[request.sender] ?? 0) + 1
                sentEver[request.sender] = count
                if ChatState.asksForRating(afterMessage: count) {
                    records.append(chat.ratingPrompt(thread: thread, messagesSent: Int64(count), sessionID: nil, now: context.now))
                }
            }
            return .commit(CoreCommit(records: records, reply: .committedMessage, quotaChanged: meter == nil ? [] : [request.sender]))
        case .candidate(let seq):
            guard let thread = chat.thread(id: request.threadID) else { throw APIError(.forbidden, field: "thread_id") }
            guard case .read(let found) = request.original else { return .read(.original(threadNo: thread.no, seq: seq)) }
            guard let found, let original = found.content.message, original.clientMessageID == request.clientMessageID,
                  found.side == thread.side(of: request.sender) else {
                // Another key with the same hash: a new message after all.
                var again = request
                again.checkDuplicates = false
                again.original = .notRead
                return try send(again, context)
            }
            // Edited or deleted since: the retry gets the message as it now stands (its first body is gone).
            guard original.kind == request.kind, original.body == request.body || original.editedAt != nil || original.isDeleted else {
                throw APIError(.idempotencyConflict, field: "client_message_id")
            }
            return .commit(CoreCommit(records: [], reply: .json(ChatState.messageView(
                original, seq: found.seq, at: found.at, threadID: thread.id, senderID: request.sender).jsonText)))
        case .needsWindow:
            guard let thread = chat.thread(id: request.threadID) else { throw APIError(.forbidden, field: "thread_id") }
            return .read(.window(threadID: thread.id, threadNo: thread.no, limit: ChatState.windowSize))
        }
    }

    // MARK: - Tiers (`--tiers`) and ratings (`--ratings`)

    /// A client's tier, quota month and language when their sends are metered; nil for coaches, admins, or
    /// without `--tiers`.
    mutating func meter(_ userID: String, at time: Int64? = nil, _ context: CoreContext) -> (tier: Tier, month: QuotaMonth, language: Language)? {
        guard context.features.tiers, let person = context.people(userID), person.role == "client" else { return nil }
        return (Tier(stored: person.tier ?? Tier.freemium.rawValue), month(at: time ?? context.now, zone: person.timeZone), person.language)
    }

    /// The quota month of `time` in a zone, computed once per zone and month (a calendar computation costs more
    /// than the rest of a metered send).
    private mutating func month(at time: Int64, zone: String) -> QuotaMonth {
        if let known = months[zone], known.startsAt <= time, time < known.resetsAt { return known }
        let month = QuotaMonth(at: time, in: TimeZoneRules.zone(zone))
        months[zone] = month
        return month
    }

    /// Whether a user's messages are counted for rating prompts: a client's, with `--ratings`.
    func asksForRatings(_ userID: String, _ context: CoreContext) -> Bool {
        context.features.ratings && context.people(userID)?.role == "client"
    }

    /// `plan_upgrade_required` for a client whose tier has no attachments (`--tiers`); nil otherwise.
    public mutating func attachmentRefusal(_ userID: String, field: String?, _ context: CoreContext) -> APIError? {
        guard let meter = meter(userID, context), !meter.tier.attachments else { return nil }
        return APIError(.planUpgradeRequired, field: field, detail: .attachments)
    }

    /// The client's quota as their apps show it, or the read of their count it needs first; `.ready(nil)` when
    /// they are not metered.
    public mutating func quotaView(_ userID: String, _ context: CoreContext) -> QuotaAnswer {
        guard let meter = meter(userID, context) else { return .ready(nil) }
        guard quotas.isLoaded(userID) else {
            return .read(.counts(userID: userID, threadNos: chat.threads(of: userID).map(\.no), since: meter.month.startsAt,
                                 ever: false, generation: countGenerations[userID, default: 0]))
        }
        return .ready(meter.tier.view(messages: quotas.use(userID, tier: meter.tier, month: meter.month),
                                      callsUsed: callsUsed(clientID: userID, month: meter.month),
                                      month: meter.month, language: meter.language))
    }

    public enum QuotaAnswer {
        case ready(QuotaView?)
        case read(CoreRead)
    }

    /// A tier change, logged on the client's current thread (replayed by `resume`); nothing to log without
    /// `--tiers` or a current thread.
    private mutating func tierSet(clientID: String, tier: String, _ context: CoreContext) -> CoreDecision {
        guard context.features.tiers, let thread = chat.threads(of: clientID).first(where: \.active) else {
            // No thread to log it on: the other processes of a cluster learn the tier from an account record.
            let record = accountRecord(AccountChangeRecord(userID: clientID, .profile(AccountProfile(tier: tier))), context)
            return .commit(CoreCommit(records: [record], reply: .none, quotaChanged: [clientID]))
        }
        // The client's count is forgotten when the record is applied (`.tier`), as a followed one is.
        let record = ChatRecord(threadNo: thread.no, side: .client, seq: thread.lastSeq, at: context.now, .tier(TierRecord(tier: tier)))
        return .commit(CoreCommit(records: [record], reply: .none, quotaChanged: [clientID]))
    }

    // MARK: - Applying committed records

    /// Applies committed records (with their positions) and returns the events they make. `here`: this core
    /// decided them, so its state moved already and only what waits for durability moves now; `elsewhere`:
    /// another process's (or read back from the log), applied in full. Applying one twice changes nothing
    /// (every apply is monotone or replaces by id).
    public mutating func apply(_ records: [ChatRecord], origin: Origin, _ context: CoreContext) -> Applied {
        var applied = Applied()
        applied.logged.reserveCapacity(records.count * 2)  // a message's two events: one allocation, not a growth
        var cardsFor: [Int64] = []
        for record in records {
            // A record at or below the thread's newest applied position was applied before (a follower's read
            // overlapping what it had): what only adds (a meal log's time) must not add it again.
            let fresh = record.pos > (chat.thread(no: record.threadNo)?.lastPos ?? 0)
            switch origin {
            case .here: chat.committed(record)
            case .elsewhere: chat.apply(record)
            }
            if let erasure = record.content.erasure {
                // On no thread: every thread of the erased user.
                applyErasure(erasure)
                for (userID, payload) in erasureEvents(erasure) {
                    applied.logged.append(LoggedEvent(userID: userID, cursor: record.pos, payload: payload))
                }
                continue
            }
            if let change = record.content.account {
                // On no thread, and no event: what the core keeps of the account (`applyAccountChange`).
                applyAccountChange(change)
                continue
            }
            guard let thread = chat.thread(no: record.threadNo) else { continue }
            var messageJSON: [UInt8]?
            var made: (body: SessionRecordBody, sessionJSON: String)?
            switch record.content {
            case .message(let message):
                if origin == .elsewhere, record.side == .client, message.kind != .system {
                    // Charged by another process: this process's counts are read again from the log when next needed.
                    forgetCounts(of: thread.clientID, ever: true)
                }
                if fresh, message.kind == .mealLog { mealTimes[record.threadNo, default: []].append(record.at) }
                messageJSON = chat.messageView(record)?.jsonBytes
                if applied.messageJSON == nil, let messageJSON { applied.messageJSON = String(decoding: messageJSON, as: UTF8.self) }
            case .session:
                made = madeSessions.removeValue(forKey: MadeSession(threadNo: record.threadNo, seq: record.seq))
                if origin == .elsewhere, let stored = SessionRecordBody(record), let session = Session(view: stored.session) {
                    sessions.learn(session)
                }
            case .coaching:
                if origin == .elsewhere, let stored = RecordBody(record) { coaching.apply(stored) }
                if !cardsFor.contains(thread.no) { cardsFor.append(thread.no) }
                if origin == .here { applied.ephemeral += participantEvents(record, context) }
            case .tier:
                forgetCounts(of: thread.clientID, ever: false)
            case .link:
                if !thread.active { applied.endedLinks.append(thread.no) }
            case .receipt, .ratingPrompt, .change, .erasure, .account, .unknown:  // an erasure or account change is applied above
                break
            }
            if case .message = record.content {
                // A send's events, the hot path: bytes from the fields to the frame, the message's JSON written once.
                for (userID, json) in chat.messageEvents(for: record, messageJSON: messageJSON) {
                    applied.logged.append(LoggedEvent(userID: userID, cursor: record.pos, json: json))
                }
                continue
            }
            for (userID, payload) in events(for: record, messageJSON: nil, made: origin == .here ? made : nil, context) {
                applied.logged.append(LoggedEvent(userID: userID, cursor: record.pos, payload: payload))
            }
        }
        // The coach's card of each client whose record changed (not logged: `dashboard` reads it again).
        if origin == .here {
            for no in cardsFor {
                guard let thread = chat.thread(no: no), let card = card(of: thread, context) else { continue }
                applied.ephemeral.append((thread.coachID, ClientCardEvent(card: card).jsonText))
            }
        }
        return applied
    }

    /// A committed record's events, per participant (read back by `resume` too): chat records from the chat
    /// state, session records worded for each reader in their language and time zone.
    public func events(for record: ChatRecord, messageJSON: String? = nil, _ context: CoreContext) -> [(userID: String, payload: String)] {
        events(for: record, messageJSON: messageJSON, made: nil, context)
    }

    private func events(for record: ChatRecord, messageJSON: String?, made: (body: SessionRecordBody, sessionJSON: String)?,
                        _ context: CoreContext) -> [(userID: String, payload: String)] {
        if let erasure = record.content.erasure { return erasureEvents(erasure) }
        if record.content.account != nil { return [] }
        guard case .session = record.content else { return chat.events(for: record, messageJSON: messageJSON) }
        guard let thread = chat.thread(no: record.threadNo), let stored = made?.body ?? SessionRecordBody(record) else { return [] }
        let sessionJSON = made?.sessionJSON ?? stored.session.jsonText
        return [(Side.coach, SessionActor.coach), (.client, .client)].compactMap { side, reader in
            let userID = thread.userID(side)
            let (language, timeZone) = context.wording(for: userID)
            guard let message = SessionText.message(stored, record: record, threadID: thread.id, recipient: reader,
                                                    language: language, timeZone: timeZone) else { return nil }
            return (userID, SessionEvent.jsonText(
                change: stored.change, sessionJSON: sessionJSON, messageJSON: message.jsonText,
                unread: thread.unread(side), totalUnread: chat.totalUnread(userID)))
        }
    }

    // MARK: - Threads and recovery

    /// The `link` record of a thread whose link state a committed change set (a coach picked, a change
    /// approved): made by the engines inside the transaction that changes the link, with the thread's newest seq
    /// and state as that transaction reads them, and applied here like any followed record.
    public static func linkRecord(threadNo: Int64, lastSeq: Int64, active: Bool, now: Int64) -> ChatRecord {
        ChatRecord(threadNo: threadNo, side: .client, seq: lastSeq, at: now, .link(LinkChangeRecord(active: active)))
    }

    /// Threads read from the store (a link, provisioning, another process's link) with their people's names. A
    /// thread the state has already keeps everything but its `active`.
    public mutating func learn(threads: [ChatThread], names: [String: String]) {
        for (user, name) in names { chat.setName(name, for: user) }
        for thread in threads { chat.add(thread) }
    }

    /// The next tick looks again for ended links with open sessions (after a recovery, during which no
    /// cancellation was decided).
    public mutating func sweepEndedLinksAgain() { sweptEndedLinks = false }

    /// Forgets a client's count this month (and ever): it is read again from the log when next needed, and a read
    /// asked for before now is dropped when it lands.
    mutating func forgetCounts(of clientID: String, ever: Bool) {
        quotas.forget(clientID)
        if ever { sentEver[clientID] = nil }
        countGenerations[clientID, default: 0] += 1
    }

    /// A user's display name changed (nil: the account was erased, and its peers see no name).
    public mutating func setName(_ name: String?, for userID: String) { chat.setName(name, for: userID) }

    /// How to recover after a failed append: in a cluster the usual cause is a seq another process took first, so
    /// only the failed records' threads are set back from the store; alone (a full disk, a lost connection), or
    /// when sessions or the coaching record changed too (their books moved with the records), everything is
    /// rebuilt.
    public static func recovery(after failed: [ChatRecord], clustered: Bool) -> Recovery {
        let threadsAlone = failed.allSatisfy { record in
            switch record.content {
            case .message, .receipt, .ratingPrompt, .change: true
            case .link, .session, .tier, .coaching, .erasure, .account, .unknown: false
            }
        }
        if !clustered || !threadsAlone {
            return .everything
        }
        return .threads(Set(failed.map(\.threadNo)))
    }

    public enum Recovery: Equatable {
        case everything
        case threads(Set<Int64>)
    }

    /// Sets threads back to what the store holds (`recovery` said `.threads`): their counts went with the lost
    /// records, so they are read again.
    public mutating func reset(_ threads: [ChatThread], tail: [ChatRecord]) {
        let nos = Set(threads.map(\.no))
        madeSessions = madeSessions.filter { !nos.contains($0.key.threadNo) }  // their records were lost
        for thread in threads {
            chat.reset(to: thread, tail: tail)
            forgetCounts(of: thread.clientID, ever: true)
        }
    }

    /// Drops idempotency windows idle for `idleMilliseconds` (they are read again when next needed).
    @discardableResult
    public mutating func dropIdleWindows(nowMilliseconds: UInt64, idleMilliseconds: UInt64) -> Int {
        chat.dropIdleWindows(nowMilliseconds: nowMilliseconds, idleMilliseconds: idleMilliseconds)
    }

    /// The same, looking at no more than `atMost` windows per call (`ChatState.dropIdleWindows(…, atMost:)`).
    @discardableResult
    public mutating func dropIdleWindows(nowMilliseconds: UInt64, idleMilliseconds: UInt64, atMost: Int) -> Int {
        chat.dropIdleWindows(nowMilliseconds: nowMilliseconds, idleMilliseconds: idleMilliseconds, atMost: atMost)
    }
}
