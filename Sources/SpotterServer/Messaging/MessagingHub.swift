import EventLoop
import FoundationEssentials
import SpotterBroker
import SpotterCore
import SpotterProtocol
import SpotterPorts
import WebSocket

/// The shell around chat: it runs `ChatState`'s rules on the loop, appends
/// the records they make to the log, and once the log says they are durable
/// replies and publishes their events to the broker. Loop thread only.
///
/// Appends made during one loop iteration go to the log together (one
/// writer job, so one savepoint and one group commit for all of them), and
/// their completions come back in the same order: a reply is sent only
/// after everything it reflects is on disk.
final class MessagingHub {
    unowned let server: Server
    let log: any ChatStore
    let broker: any Broker
    private(set) var state: ChatState
    private(set) var resumeFloor: Int64

    private struct Pending {
        var records: [ChatRecord]
        var done: (Result<[ChatRecord], APIError>) -> Void
    }
    /// Appends gathered in this iteration, handed to the log at its end.
    private var gathered: [Pending] = []
    /// Records handed to the log and not yet committed. Past `maxInFlight`
    /// new sends are refused at once (`rate_limited`): an overload shows as
    /// refusals, and what is accepted is answered within the bound.
    private(set) var inFlight = 0
    /// The newest position whose commit this loop has applied (`state.committed`): every record up to it is in
    /// the state's committed views. A checkpoint marks no further than this, since its snapshots hold committed
    /// seqs only: a record still in flight when the snapshots were taken (a timer's, flushed with them) is
    /// replayed after a restart instead of being covered by a mark that its thread's saved view does not include.
    private(set) var committedThrough: Int64
    /// Crash tests: where the process kills itself (off unless armed).
    var failPoints: FailPoints
    let maxInFlight: Int
    var isOverloaded: Bool { inFlight >= maxInFlight || reloading }
    /// Why a new write is refused right now, if it is: the store failed and the state is being rebuilt from it
    /// (`unavailable`, nothing can be made durable yet), or too many records wait for the store (`rate_limited`).
    var writeRefusal: APIError? {
        if reloading { return APIError(.unavailable, retryAfterSeconds: 1) }
        if inFlight >= maxInFlight { return APIError(.rateLimited, retryAfterSeconds: 1) }
        return nil
    }
    /// Sends waiting for their thread's idempotency window, by thread id.
    /// Each is called with nil to go on, or with the refusal when the window could not be read.
    private var waitingForWindow: [String: [(APIError?) -> Void]] = [:]
    /// After a failed append: the state is being rebuilt from the store, and writes are refused.
    private(set) var reloading = false
    /// Called with what the store holds once the state was rebuilt (the sessions and the coaching record reload
    /// from it).
    var onReload: [(LoadedChat) -> Void] = []
    /// Clients' message counts this month (`--tiers`), loaded from the log on first need.
    private(set) var quotas = MessageQuotas()
    /// Cluster mode: follows every process's records in position order and makes this process's logged events.
    var follower: LogFollower?
    /// Clients' messages ever (`--ratings`: every 10th asks for a rating), loaded from the log on first need.
    private var sentEver: [String: Int] = [:]
    /// Work waiting for a client's count, by user id.
    private var waitingForQuota: [String: [() -> Void]] = [:]

    init(server: Server, log: any ChatStore, loaded: LoadedChat, broker: any Broker = InProcessBroker(), maxInFlight: Int) {
        self.server = server
        self.log = log
        self.broker = broker
        self.state = loaded.makeState()
        self.resumeFloor = loaded.resumeFloor
        self.committedThrough = loaded.position
        self.failPoints = server.config.failPoints
        self.maxInFlight = maxInFlight
        broker.presenceChanged = { [unowned self] userID, online in presenceChanged(userID, online: online) }
        server.loop.everyIteration { [unowned self] in flush() }
    }

    // MARK: - Appending

    /// Appends `records` (possibly none: then `done` only waits for every
    /// append before it) and calls `done` on the loop once they are durable,
    /// with their positions filled in.
    func append(_ records: [ChatRecord], done: @escaping (Result<[ChatRecord], APIError>) -> Void) {
        gathered.append(Pending(records: records, done: done))
        inFlight += records.count
    }

    /// Hands this iteration's appends to the log as one job.
    func flush() {
        guard !gathered.isEmpty else { return }
        let batch = gathered
        gathered = []
        let records = batch.flatMap(\.records)
        log.append(records, completion: server.loop.completion { [unowned self] (result: Result<[Int64], any Error>) in
            committed(batch, records, result)
        })
    }

    private func committed(_ batch: [Pending], _ records: [ChatRecord], _ result: Result<[Int64], any Error>) {
        inFlight -= records.count
        switch result {
        case .success(let positions):
            failPoints.reached(.commit)
            var offset = 0
            var all: [ChatRecord] = []
            for pending in batch {
                var done = pending.records
                for index in done.indices {
                    done[index].pos = positions[offset]
                    offset += 1
                    state.committed(done[index])
                }
                pending.done(.success(done))
                if follower != nil { all.append(contentsOf: done) }
            }
            if let newest = positions.last { committedThrough = max(committedThrough, newest) }
            // After the commands published their events: the follower hands them on in position order.
            follower?.own(all)
            failPoints.reached(.applied)
        case .failure(let error):
            // Nothing of the batch is durable (or its outcome is unknown: a connection lost during COMMIT); the
            // client retries with the same ids, which the recovered state answers if the records did land.
            let apiError = APIError(.unavailable, retryAfterSeconds: 1)
            for pending in batch { pending.done(.failure(apiError)) }
            failed(records, error)
        }
    }

    // MARK: - Recovery after a failed append

    /// The threads whose records failed since the recovery began (the failed batch's, and those of the batches
    /// queued behind it, which fail too: their seqs followed the lost ones).
    private var recoveryThreads: Set<Int64> = []
    /// Whether the recovery must rebuild everything rather than set some threads back.
    private var recoveryNeedsEverything = false
    private var recoveryStarted = false

    /// An append failed: writes are refused (`reloading`) until the state agrees with the store again. In a
    /// cluster the usual cause is a seq another process took first, so only the threads of the failed records are
    /// set back from the store; alone (a full disk, a lost connection), or when sessions or the coaching record
    /// changed too (their books moved with the records), everything is rebuilt.
    private func failed(_ records: [ChatRecord], _ error: any Error) {
        if !reloading {
            server.logger.error("log append failed; setting the chat state back from the store", metadata: ["error": "\(error)"])
        }
        reloading = true
        if follower == nil || records.contains(where: { ![.message, .receipt, .ratingPrompt].contains($0.kind) }) {
            recoveryNeedsEverything = true
        }
        recoveryThreads.formUnion(records.map(\.threadNo))
        recoverWhenQuiet()
    }

    /// Starts the recovery once every append handed to the log has come back.
    private func recoverWhenQuiet() {
        guard reloading, !recoveryStarted, inFlight == 0 else { return }
        recoveryStarted = true
        if recoveryNeedsEverything { reload() } else { resetThreads() }
    }

    /// Sets the failed records' threads back to what the store holds (cluster mode).
    private func resetThreads() {
        let numbers = Array(recoveryThreads)
        recoveryThreads = []
        guard let source = follower?.log else { return reload() }
        server.loop.runBlocking({ Result { try source.reloadThreads(nos: numbers) } }, then: { [self] result in
            switch result {
            case .success(let reloaded):
                learn([], reloaded.names)
                for row in reloaded.threads {
                    state.reset(to: row.makeThread(), tail: reloaded.tail)
                    // Their charges went with the lost records: count again.
                    quotas.forget(row.clientID)
                    sentEver[row.clientID] = nil
                }
                server.logger.notice("threads set back from the store", metadata: ["threads": "\(reloaded.threads.count)"])
                finishRecovery()
            case .failure(let error):
                recoveryThreads.formUnion(numbers)
                retryRecovery(error)
            }
        })
    }

    /// Rebuilds the whole state from the store.
    private func reload() {
        recoveryThreads = []
        let log = log
        server.loop.runBlocking({ Result { try log.load() } }, then: { [self] result in
            switch result {
            case .success(let loaded):
                state = loaded.makeState()
                quotas.forgetAll()  // the charges of the lost records went with them: count again
                sentEver = [:]
                resumeFloor = loaded.resumeFloor
                committedThrough = max(committedThrough, loaded.position)
                for reloaded in onReload { reloaded(loaded) }
                recoveryNeedsEverything = false
                server.logger.notice("chat state reloaded", metadata: ["threads": "\(state.threadCount)"])
                finishRecovery()
            case .failure(let error):
                retryRecovery(error)
            }
        })
    }

    private func retryRecovery(_ error: any Error) {
        server.logger.critical("reading the chat state back failed; retrying in 1 s", metadata: ["error": "\(error)"])
        let timer = Timer(loop: server.loop)
        timer.start(after: 1000, repeat: 0) { [unowned self] in
            timer.close()
            recoveryStarted = false
            recoverWhenQuiet()
        }
    }

    /// The state agrees with the store: appends go on, unless more failed meanwhile.
    private func finishRecovery() {
        recoveryStarted = false
        guard recoveryThreads.isEmpty, !recoveryNeedsEverything else { return recoverWhenQuiet() }
        log.resume()
        reloading = false
        follower?.recovered()
        // Sends that waited for a window decide again on the recovered state (the reset threads are cold in it).
        let waiting = waitingForWindow
        waitingForWindow = [:]
        for list in waiting.values { for work in list { work(nil) } }
    }

    /// The events of `session` records, per participant (`SessionDesk` words them).
    var sessionEvents: ((ChatRecord, ChatThread) -> [(userID: String, payload: String)])?

    /// A committed record's events, per participant: chat records from the state, session records from the desk.
    func events(for record: ChatRecord, messageJSON: String? = nil) -> [(userID: String, payload: String)] {
        guard record.kind == .session else { return state.events(for: record, messageJSON: messageJSON) }
        guard let thread = state.thread(no: record.threadNo) else { return [] }
        return sessionEvents?(record, thread) ?? []
    }

    /// Publishes a committed record's events to its participants.
    func publish(_ record: ChatRecord, messageJSON: String? = nil) {
        publish(record, events: events(for: record, messageJSON: messageJSON))
    }

    /// Publishes a committed record's events, written already.
    func publish(_ record: ChatRecord, events: [(userID: String, payload: String)]) {
        if let follower { return follower.publish(record, events: events) }
        for (userID, payload) in events {
            broker.publish(userID: userID, cursor: record.pos, frame: MessagingHub.frame(cursor: record.pos, payload: payload))
        }
    }

    /// `{"cursor":N,…payload…}`: built once per user, not once per socket.
    static func frame(cursor: Int64, payload: String) -> String {
        "{\"cursor\":\(cursor)," + payload.dropFirst()
    }

    /// Whether a checkpoint's parts are still being written.
    private var checkpointing = false
    /// Threads per checkpoint part: a part holds the appends behind it for a few milliseconds at most.
    static let checkpointPart = 256

    /// Saves the views that changed since the last checkpoint (every second),
    /// in parts, each handed to the log when the one before it is written.
    func checkpoint() {
        // Taken with the snapshots: in a cluster, the views include every record up to what was followed; alone,
        // every record this loop saw committed.
        let through = follower?.applied ?? committedThrough
        guard !checkpointing, !reloading, let parts = takeCheckpointParts() else { return }
        checkpointing = true
        writeCheckpoint(parts, from: 0, through: through, withRecordsInFlight: inFlight > 0)
    }

    /// At shutdown, after the loop stopped: every part at once (the writer finishes its queue before it stops).
    func checkpointBeforeStop() {
        let through = follower?.applied ?? committedThrough
        guard !reloading, let parts = takeCheckpointParts() else { return }
        for index in parts.indices {
            log.checkpoint(parts[index], first: index == 0, last: index == parts.count - 1, through: through) { _ in }
        }
    }

    /// The changed threads' snapshots in parts, after handing the log every record gathered so far (the
    /// snapshots include them, so they must be appended first); nil when nothing changed.
    private func takeCheckpointParts() -> [[ThreadSnapshot]]? {
        let snapshots = state.takeDirty()
        guard !snapshots.isEmpty else { return nil }
        flush()
        let size = MessagingHub.checkpointPart
        return stride(from: 0, to: snapshots.count, by: size).map { Array(snapshots[$0..<min($0 + size, snapshots.count)]) }
    }

    private func writeCheckpoint(_ parts: [[ThreadSnapshot]], from index: Int, through: Int64?, withRecordsInFlight: Bool) {
        let last = index == parts.count - 1
        log.checkpoint(parts[index], first: index == 0, last: last, through: through, completion: server.loop.completion { [unowned self] (result: Result<Int64, any Error>) in
            if case .failure(let error) = result {
                server.logger.error("checkpoint failed; the next one saves these threads", metadata: ["error": "\(error)"])
                for part in parts[index...] { for snapshot in part { state.markDirty(no: snapshot.no) } }
                checkpointing = false
            } else if last {
                checkpointing = false
                failPoints.reached(.checkpoint)
                if withRecordsInFlight { failPoints.reached(.checkpointInFlight) }
            } else {
                writeCheckpoint(parts, from: index + 1, through: through, withRecordsInFlight: withRecordsInFlight)
            }
        })
    }

    // MARK: - Sends

    struct SendRequest {
        let sender: String
        let threadID: String
        let clientMessageID: String
        let kind: MessageKind
        let body: String
        let now: Int64
        /// `body` is an `AttachedText` (a text with attachments).
        var withAttachments = false
    }

    /// `message.send`: the committed message as JSON, or the original when this is a retry.
    func send(_ request: SendRequest, checkDuplicates: Bool = true, reply: @escaping (Result<String, APIError>) -> Void) {
        guard !reloading else { return reply(.failure(APIError(.unavailable, retryAfterSeconds: 1))) }
        // A client's send counts against the month's messages (`--tiers`): the check and the charge are made
        // in this one step, once the send is known to be new (a retry is never charged).
        // One directory read for both (only when a feature needs the sender's account).
        // A service's system message is neither charged nor counted toward rating prompts.
        let user = (server.config.tiers || server.config.ratings) && request.kind != .system
            ? directory?.user(id: request.sender) : nil
        let meter = meter(user, now: request.now)
        let rated = asksForRatings(user)
        if (meter != nil && !quotas.isLoaded(request.sender)) || (rated && sentEver[request.sender] == nil) {
            return loadCounts(request.sender) { [self] in send(request, checkDuplicates: checkDuplicates, reply: reply) }
        }
        let decision: ChatState.SendDecision
        do {
            decision = try state.send(
                sender: request.sender, threadID: request.threadID, clientMessageID: request.clientMessageID,
                kind: request.kind, body: request.body, now: request.now, nowMilliseconds: server.loop.nowMilliseconds,
                checkDuplicates: checkDuplicates,
                admit: meter.map { meter in { [self] _ in quotas.refusal(request.sender, tier: meter.tier, month: meter.month) } },
                withAttachments: request.withAttachments)
        } catch {
            return reply(.failure(error))
        }
        switch decision {
        case .append(let record):
            if let meter { quotas.charge(request.sender, month: meter.month) }
            var records = [record]
            // Every 10th message of a client asks them for a rating, in the same commit (`--ratings`).
            if rated, let thread = state.thread(id: request.threadID) {
                let count = (sentEver[request.sender] ?? 0) + 1
                sentEver[request.sender] = count
                if ChatState.asksForRating(afterMessage: count) {
                    records.append(state.ratingPrompt(thread: thread, messagesSent: Int64(count), sessionID: nil, now: request.now))
                }
            }
            append(records) { [self] result in
                switch result {
                case .success(let done):
                    // Acknowledge first, then tell every device of both participants: one JSON for both.
                    let message = state.messageView(done[0])!.jsonText
                    reply(.success(message))
                    if request.kind == .mealLog { server.records.mealLogged(threadNo: done[0].threadNo, at: done[0].at) }
                    publish(done[0], messageJSON: message)
                    for prompt in done.dropFirst() { publish(prompt) }
                    if meter != nil { pushQuota(request.sender) }
                case .failure(let error):
                    reply(.failure(error))
                }
            }
        case .candidate(let seq):
            retry(request, originalSeq: seq, reply: reply)
        case .needsWindow:
            loadWindow(request.threadID) { [self] refusal in
                if let refusal { return reply(.failure(refusal)) }
                send(request, checkDuplicates: checkDuplicates, reply: reply)
            }
        }
    }

    /// A send whose key is in the window: read the original (after every
    /// append before it) and compare.
    private func retry(_ request: SendRequest, originalSeq: Int64, reply: @escaping (Result<String, APIError>) -> Void) {
        guard let thread = state.thread(id: request.threadID) else { return reply(.failure(APIError(.forbidden, field: "thread_id"))) }
        flush()
        log.message(threadNo: thread.no, seq: originalSeq, completion: server.loop.completion { [unowned self] (result: Result<ChatRecord?, any Error>) in
            switch result {
            case .success(let original?) where original.ref == request.clientMessageID
                && original.side == thread.side(of: request.sender):
                guard original.a == request.kind.rawValue, original.body == request.body else {
                    return reply(.failure(APIError(.idempotencyConflict, field: "client_message_id")))
                }
                reply(.success(ChatState.messageView(original, threadID: thread.id, senderID: request.sender).jsonText))
            case .success:
                // Another key with the same hash: a new message after all.
                send(request, checkDuplicates: false, reply: reply)
            case .failure(let error):
                reply(.failure(APIError(wrapping: error)))
            }
        })
    }

    /// Loads a cold thread's idempotency window, then runs what waited for it, in order.
    private func loadWindow(_ threadID: String, then work: @escaping (APIError?) -> Void) {
        guard let thread = state.thread(id: threadID) else { return work(nil) }
        if waitingForWindow[threadID] != nil {
            waitingForWindow[threadID]!.append(work)
            return
        }
        waitingForWindow[threadID] = [work]
        flush()
        log.recentSends(threadNo: thread.no, limit: ChatState.windowSize, completion: server.loop.completion { [unowned self] (result: Result<[SentKey], any Error>) in
            let waiting = waitingForWindow.removeValue(forKey: threadID) ?? []
            switch result {
            case .success(let keys):
                state.installWindow(threadID: threadID, keys.map { ($0.side, $0.clientMessageID, $0.seq) },
                                    nowMilliseconds: server.loop.nowMilliseconds)
                for work in waiting { work(nil) }
            case .failure(let error):
                // Refused, not retried at once: with the store out of reach that would spin without answering.
                server.logger.error("could not load a thread's recent sends", metadata: ["error": "\(error)"])
                for work in waiting { work(APIError(.unavailable, retryAfterSeconds: 1)) }
            }
        })
    }

    // MARK: - Quotas (`--tiers`)

    /// A client's tier and month when their sends are metered; nil for coaches, admins, or without `--tiers`.
    /// The user comes from the directory: a socket's hello put them there before any send.
    func meter(_ userID: String, now: Int64) -> (tier: Tier, month: QuotaMonth, language: Language)? {
        meter(server.config.tiers ? directory?.user(id: userID) : nil, now: now)
    }

    private func meter(_ user: UserRecord?, now: Int64) -> (tier: Tier, month: QuotaMonth, language: Language)? {
        guard server.config.tiers, let user, user.role == "client" else { return nil }
        return (Tier(stored: user.tier), month(at: now, zone: user.timeZone), Language(rawValue: user.language) ?? .english)
    }

    var directory: UserDirectory? { server.api.services.accounts.directory }

    /// The quota month of `now` in a zone, computed once per zone and month (a calendar computation costs more
    /// than the rest of a metered send).
    private func month(at now: Int64, zone: String) -> QuotaMonth {
        if let known = months[zone], known.startsAt <= now, now < known.resetsAt { return known }
        let month = QuotaMonth(at: now, in: TimeZoneRules.zone(zone))
        months[zone] = month
        return month
    }

    private var months: [String: QuotaMonth] = [:]

    /// `plan_upgrade_required` for a client whose tier has no attachments (`--tiers`); nil otherwise.
    func attachmentRefusal(_ userID: String, field: String?) -> APIError? {
        guard let meter = meter(userID, now: unixNow()), !meter.tier.attachments else { return nil }
        return APIError(.planUpgradeRequired, field: field, detail: .attachments)
    }

    /// Whether a user's messages are counted for rating prompts: a client's, with `--ratings`.
    func asksForRatings(_ userID: String) -> Bool {
        asksForRatings(server.config.ratings ? directory?.user(id: userID) : nil)
    }

    private func asksForRatings(_ user: UserRecord?) -> Bool { server.config.ratings && user?.role == "client" }

    /// Reads what is not loaded yet of a client's counts from the log (after every append before it): their
    /// messages this month (`--tiers`) and ever (`--ratings`). Then runs what waited for them, in order.
    func loadCounts(_ userID: String, then work: @escaping () -> Void) {
        let meter = meter(userID, now: unixNow())
        let wantsMonth = meter != nil && !quotas.isLoaded(userID)
        let wantsEver = asksForRatings(userID) && sentEver[userID] == nil
        guard wantsMonth || wantsEver else { return work() }
        if waitingForQuota[userID] != nil {
            waitingForQuota[userID]!.append(work)
            return
        }
        waitingForQuota[userID] = [work]
        flush()
        let threadNos = state.threads(of: userID).map(\.no)
        // Two counts at most, one after the other; then everything that waited.
        let finish = { [unowned self] in
            for work in waitingForQuota.removeValue(forKey: userID) ?? [] { work() }  // after a failure each asks again
        }
        let countEver = { [unowned self] in
            guard wantsEver else { return finish() }
            log.sendsSince(threadNos: threadNos, side: .client, since: 0,
                           completion: server.loop.completion { [unowned self] (result: Result<Int, any Error>) in
                if case .success(let count) = result, sentEver[userID] == nil { sentEver[userID] = count }
                if case .failure(let error) = result { server.logger.error("could not count a client's messages", metadata: ["error": "\(error)"]) }
                finish()
            })
        }
        guard wantsMonth, let meter else { return countEver() }
        log.sendsSince(threadNos: threadNos, side: .client, since: meter.month.startsAt,
                       completion: server.loop.completion { [unowned self] (result: Result<Int, any Error>) in
            if case .success(let used) = result, !quotas.isLoaded(userID) { quotas.load(userID, used: used, month: meter.month) }
            if case .failure(let error) = result { server.logger.error("could not count a client's messages", metadata: ["error": "\(error)"]) }
            countEver()
        })
    }

    /// The client's quota as their apps show it (loading the count first if needed); nil when not metered.
    func quotaView(_ userID: String, then done: @escaping (QuotaView?) -> Void) {
        let now = unixNow()
        guard let meter = meter(userID, now: now) else { return done(nil) }
        guard quotas.isLoaded(userID) else {
            return loadCounts(userID) { [self] in
                guard quotas.isLoaded(userID) else { return done(nil) }
                quotaView(userID, then: done)
            }
        }
        let calls = server.sessions.callsUsed(clientID: userID, month: meter.month)
        done(meter.tier.view(messages: quotas.use(userID, tier: meter.tier, month: meter.month), callsUsed: calls,
                             month: meter.month, language: meter.language))
    }

    /// Pushes the client's quota to every socket of theirs (after a send, a tier change).
    func pushQuota(_ userID: String) {
        quotaView(userID) { [self] view in
            guard let view else { return }
            broker.publishEphemeral(userID: userID, frame: QuotaEvent(quota: view).jsonText)
        }
    }

    // MARK: - Receipts

    func receipt(userID: String, threadID: String, delivered: Int64?, read: Int64?,
                 reply: @escaping (Result<ReceiptResult, APIError>) -> Void) {
        guard !reloading else { return reply(.failure(APIError(.unavailable, retryAfterSeconds: 1))) }
        let made: (record: ChatRecord?, result: ReceiptResult)
        do {
            made = try state.receipt(userID: userID, threadID: threadID, delivered: delivered, read: read, now: unixNow())
        } catch {
            return reply(.failure(error))
        }
        // With nothing new to write, the reply still waits for the appends it reflects.
        append(made.record.map { [$0] } ?? []) { [self] result in
            switch result {
            case .success(let done):
                reply(.success(made.result))
                if let record = done.first { publish(record) }
            case .failure(let error):
                reply(.failure(error))
            }
        }
    }

    // MARK: - Links

    /// A link change (a coach picked, a change approved) committed with its
    /// `link` records: update the state, then publish. Sockets read the
    /// state, so a new thread is writable at once, and a newly linked peer
    /// that is online is announced.
    func linkChange<Value: Sendable>(
        _ change: (@escaping @Sendable (Result<LinkOutcome<Value>, any Error>) -> Void) -> Void,
        reply: @escaping (Result<Value, APIError>) -> Void
    ) {
        flush()
        change(server.loop.completion { [unowned self] (result: Result<LinkOutcome<Value>, any Error>) in
            switch result {
            case .success(let outcome):
                learn(outcome.threads, outcome.names)
                reply(.success(outcome.value))
                for record in outcome.records {
                    state.apply(record)
                    publish(record)
                    // An ended link ends its sessions (the server cancels them, each with a system message).
                    if let thread = state.thread(no: record.threadNo), !thread.active {
                        server.sessions.linkEnded(thread, now: record.at)
                    }
                    guard let thread = state.thread(no: record.threadNo), thread.active else { continue }
                    for side in [Side.coach, Side.client] where broker.isOnline(thread.userID(side.other)) {
                        broker.publishEphemeral(userID: thread.userID(side), frame:
                            PresenceEvent(userId: thread.userID(side.other), online: true, lastSeenAt: nil).jsonText)
                    }
                }
                follower?.own(outcome.records)
            case .failure(let error):
                reply(.failure(APIError(wrapping: error)))
            }
        })
    }

    /// Applies a record another process committed (cluster mode, in position order: `LogFollower`) to the chat
    /// state, the sessions, the coaching record and the counts, and returns its events for this process's
    /// subscribers. Applying one twice changes nothing (every apply is monotone or replaces by id).
    func applyFollowed(_ record: ChatRecord) -> [(userID: String, payload: String)] {
        state.apply(record)
        guard let thread = state.thread(no: record.threadNo) else { return [] }
        switch record.kind {
        case .message:
            if record.side == .client && record.a != MessageKind.system.rawValue {
                // Charged by another process: this process's counts are read again from the log when next needed.
                quotas.forget(thread.clientID)
                sentEver[thread.clientID] = nil
            }
            if record.a == MessageKind.mealLog.rawValue { server.records.mealLogged(threadNo: record.threadNo, at: record.at) }
        case .session:
            server.sessions.learn(record)
        case .record:
            server.records.learn(record)
        case .tier:
            directory?.update(thread.clientID) { $0.tier = record.ref ?? Tier.freemium.rawValue }
            quotas.forget(thread.clientID)
        case .receipt, .link, .ratingPrompt:
            break
        }
        return events(for: record)
    }

    /// Threads created outside the log (provisioning for load tests): read them into the state.
    func threadsCreated(_ ids: [String], then: @escaping () -> Void) {
        let log = log
        server.loop.runBlocking({ Result { try log.threads(ids: ids) } }, then: { [self] result in
            if case .success(let (rows, names)) = result { learn(rows, names) }
            then()
        })
    }

    /// Commands waiting for a thread to be read from the store (`readThread`), by thread id.
    private var waitingForThread: [String: [(APIError?) -> Void]] = [:]

    /// Whether a command naming `threadID` must wait for the thread to be read from the store: in a cluster, a
    /// thread another process just linked (or provisioning made) can reach a command here before the follower
    /// brings its link record, and refusing it `forbidden` (which apps are told not to retry) would be wrong.
    /// Alone, every thread is in memory: an unknown one is refused at once.
    func mustReadThread(_ threadID: String) -> Bool {
        follower != nil && state.thread(id: threadID) == nil
    }

    /// Reads the thread (its saved views and its records after them) into the state, then calls `then` (with
    /// `unavailable` when the store could not be read): the waiting command runs again and finds it, or is
    /// refused as before if no such thread exists. Commands for one thread wait together, in arrival order.
    func readThread(_ threadID: String, then: @escaping (APIError?) -> Void) {
        if waitingForThread[threadID] != nil {
            waitingForThread[threadID]?.append(then)
            return
        }
        waitingForThread[threadID] = [then]
        guard let followable = follower?.log else { return finishThreadRead(threadID, nil) }
        let log = log
        server.loop.runBlocking({ Result { () throws -> ReloadedThreads? in
            let rows = try log.threads(ids: [threadID]).threads
            return rows.isEmpty ? nil : try followable.reloadThreads(nos: rows.map(\.no))
        } }, then: { [self] result in
            switch result {
            case .success(let reloaded):
                // The follower may have brought it meanwhile: what it applied is newer than this snapshot.
                if let reloaded, state.thread(id: threadID) == nil {
                    learn(reloaded.threads, reloaded.names)
                    for row in reloaded.threads { state.reset(to: row.makeThread(), tail: reloaded.tail) }
                }
                finishThreadRead(threadID, nil)
            case .failure(let error):
                server.logger.error("reading a thread from the store failed", metadata: ["error": "\(error)"])
                finishThreadRead(threadID, APIError(.unavailable, retryAfterSeconds: 1))
            }
        })
    }

    private func finishThreadRead(_ threadID: String, _ error: APIError?) {
        for waiting in waitingForThread.removeValue(forKey: threadID) ?? [] { waiting(error) }
    }

    /// Threads read from the store (a link, provisioning, another process's link) into the state, with their
    /// people's names. A thread the state has already keeps everything but its `active`.
    func learn(_ threads: [ThreadRow], _ names: [String: String]) {
        for (user, name) in names { state.setName(name, for: user) }
        for row in threads { state.add(row.makeThread()) }
    }

    // MARK: - Presence

    func isOnline(_ userID: String) -> Bool { broker.isOnline(userID) }

    /// The peers of the user's writable threads.
    func activePeers(of userID: String) -> [String] {
        state.threads(of: userID).compactMap { thread in
            guard thread.active, let side = thread.side(of: userID) else { return nil }
            return thread.userID(side.other)
        }
    }

    func attach(_ socket: AppSocket) {
        broker.subscribe(socket, userID: socket.actor.userID)
    }

    func detach(_ socket: AppSocket) {
        broker.unsubscribe(socket, userID: socket.actor.userID)
    }

    private func presenceChanged(_ userID: String, online: Bool) {
        let now = unixNow()
        let frame = PresenceEvent(userId: userID, online: online, lastSeenAt: online ? nil : now).jsonText
        // The broker's `presenceChanged` fires in every process that sees the flip: each tells its own sockets.
        for peer in activePeers(of: userID) { broker.publishEphemeralLocally(userID: peer, frame: frame) }
        if !online { log.setLastSeen(userID: userID, at: now) }
    }

    /// Closes every socket of a revoked session with 4003.
    func closeSockets(userID: String, sessionID: String) {
        for case let socket as AppSocket in broker.localSubscribers(userID) where socket.sessionID == sessionID {
            socket.connection?.close(CloseCode(SpotterCloseCode.sessionRevoked), reason: "session revoked")
        }
    }

    /// Typing goes to the peer's sockets only; it is never stored.
    func typing(from userID: String, threadID: String, to peerID: String) {
        broker.publishEphemeral(userID: peerID, frame: TypingEvent(threadId: threadID, userId: userID, expiresIn: 5).jsonText)
    }
}
