import FoundationEssentials
import SpotterProtocol

/// The rules of chat as a state machine: a command and the current state
/// give the records to append, the new state and the reply; a committed
/// record and the state give the events each participant sees. Pure: no
/// sockets, no SQLite, no clock (callers pass `now`).
///
/// The server keeps one `ChatState` on its loop, rebuilt at start from the
/// store's checkpoint and the log after it (`apply`). Commands change the
/// state at once (so the next send gets the next seq without waiting for
/// the disk); what lists and badges show moves only when the store says a
/// record is durable (`committed`).
public final class ChatState {
    private var threadsByID: [String: ChatThread] = [:]
    private var threadsByNo: [Int64: ChatThread] = [:]
    private var threadsByUser: [String: [ChatThread]] = [:]
    /// Each user's running unread total over their threads (`totalUnread`).
    private var tallies: [String: UnreadTally] = [:]
    /// Display names of participants (for `thread` events and lists).
    public private(set) var names: [String: String] = [:]
    private var dirty: [ChatThread] = []
    /// Threads whose idempotency window is in memory (what `dropIdleWindows` looks at).
    var warm: [Int64: ChatThread] = [:]
    /// The warm threads a sliced pass of `dropIdleWindows(…, atMost:)` has still to look at.
    var idleScan: [ChatThread] = []

    public init() {}

    /// Sends per thread kept for recognising retries (`installWindow`).
    public static let windowSize = RecentSends.capacity

    // MARK: - Threads

    public var threadCount: Int { threadsByID.count }

    public func thread(id: String) -> ChatThread? { threadsByID[id] }
    public func thread(no: Int64) -> ChatThread? { threadsByNo[no] }

    /// The user's threads, oldest first.
    public func threads(of userID: String) -> [ChatThread] { threadsByUser[userID] ?? [] }

    /// Adds a thread (at load, or when a link creates one). Adding one that exists updates nothing but `active`.
    @discardableResult
    public func add(_ thread: ChatThread) -> ChatThread {
        if let existing = threadsByID[thread.id] {
            existing.active = thread.active
            return existing
        }
        threadsByID[thread.id] = thread
        threadsByNo[thread.no] = thread
        threadsByUser[thread.coachID, default: []].append(thread)
        threadsByUser[thread.clientID, default: []].append(thread)
        thread.attach(coach: tally(of: thread.coachID), client: tally(of: thread.clientID))
        return thread
    }

    private func tally(of userID: String) -> UnreadTally {
        if let tally = tallies[userID] { return tally }
        let made = UnreadTally()
        tallies[userID] = made
        return made
    }

    public func setName(_ name: String?, for userID: String) {
        names[userID] = name
    }

    /// Unread over all of the user's threads: a running total the threads keep as their counts move (one lookup,
    /// not a walk over a coach's hundreds of threads).
    public func totalUnread(_ userID: String) -> Int64 {
        tallies[userID]?.total ?? 0
    }

    /// The total of the participant on `side` of `thread`, without looking the user up.
    func totalUnread(_ thread: ChatThread, _ side: Side) -> Int64 {
        thread.totalUnread(side) ?? totalUnread(thread.userID(side))
    }

    /// The position of the newest durable record the user can see (0 if none).
    public func lastPos(of userID: String) -> Int64 {
        (threadsByUser[userID] ?? []).reduce(0) { max($0, $1.lastPos) }
    }

    /// The thread if `userID` takes part in it; `forbidden` otherwise, so an
    /// outsider cannot tell a foreign thread from a missing one.
    public func participant(_ threadID: String, _ userID: String) throws(APIError) -> (ChatThread, Side) {
        guard let thread = threadsByID[threadID], let side = thread.side(of: userID) else {
            throw APIError(.forbidden, field: "thread_id")
        }
        return (thread, side)
    }

    // MARK: - Commands

    public enum SendDecision: Equatable {
        /// A new message: append this record (its seq is taken).
        case append(ChatRecord)
        /// Perhaps a retry of the message with this seq: read it and compare
        /// (`MessageRetry`); if it is not the same key after all, send again
        /// with `checkDuplicates` false.
        case candidate(seq: Int64)
        /// The thread's idempotency window is not in memory: load it
        /// (`installWindow`) and decide again.
        case needsWindow
    }

    /// `message.send` after its fields were validated (`MessageRules`).
    /// `admit`, if given, runs once the send is known to be new (not a retry), before its seq is taken: an
    /// error it returns (a used-up quota) is thrown, and nothing is made.
    public func send(sender: String, threadID: String, clientMessageID: String, kind: MessageKind, body: String,
                     now: Int64, nowMilliseconds: UInt64 = 0, checkDuplicates: Bool = true,
                     admit: ((Side) -> APIError?)? = nil, withAttachments: Bool = false) throws(APIError) -> SendDecision {
        let (thread, side) = try participant(threadID, sender)
        guard thread.active else { throw APIError(.threadInactive, field: "thread_id") }
        guard thread.recent != nil else { return .needsWindow }
        thread.recentUsedAt = nowMilliseconds
        let key = RecentSends.key(side, clientMessageID)
        if checkDuplicates, let seq = thread.recent?.find(key) { return .candidate(seq: seq) }
        if let refused = admit?(side) { throw refused }
        let record = ChatRecord(
            threadNo: thread.no, side: side, seq: thread.lastSeq + 1, at: now,
            .message(MessageRecord(kind: kind, clientMessageID: clientMessageID, body: body, hasAttachments: withAttachments)))
        apply(record, recentKey: key)
        return .append(record)
    }

    /// `message.delivered` / `thread.read`: positions only move forward, up
    /// to the last seq; reading implies delivery. The record is nil when
    /// nothing moved.
    public func receipt(userID: String, threadID: String, delivered: Int64?, read: Int64?,
                        now: Int64) throws(APIError) -> (record: ChatRecord?, result: ReceiptResult) {
        let (thread, side) = try participant(threadID, userID)
        let newRead = max(thread.readSeq(side), min(read ?? 0, thread.lastSeq))
        let newDelivered = max(thread.deliveredSeq(side), min(delivered ?? 0, thread.lastSeq), newRead)
        var record: ChatRecord?
        if newRead != thread.readSeq(side) || newDelivered != thread.deliveredSeq(side) {
            let made = ChatRecord(threadNo: thread.no, side: side, seq: thread.lastSeq, at: now, .receipt(ReceiptRecord(
                delivered: newDelivered, read: newRead, readMoved: newRead != thread.readSeq(side))))
            apply(made)
            record = made
        }
        let result = ReceiptResult(
            threadId: threadID, deliveredSeq: thread.deliveredSeq(side), readSeq: thread.readSeq(side),
            unread: thread.unread(side), totalUnread: totalUnread(thread, side))
        return (record, result)
    }

    /// A session's change as the thread's system message: the record takes the next seq, and the side that
    /// made the change (nil: the server) has read it. Applied at once, like a send.
    public func sessionMessage(thread: ChatThread, actor: Side?, sessionID: String, body: String, now: Int64) -> ChatRecord {
        let record = ChatRecord(
            threadNo: thread.no, side: actor ?? .coach, seq: thread.lastSeq + 1, at: now,
            .session(SessionRecord(sessionID: sessionID, isSystemMessage: true, byParticipant: actor != nil, json: body)))
        apply(record)
        return record
    }

    /// A rating prompt for the client of `thread` (`--ratings`): after their `messagesSent`-th message, or after
    /// the session `sessionID` completed.
    public func ratingPrompt(thread: ChatThread, messagesSent: Int64, sessionID: String?, now: Int64) -> ChatRecord {
        ChatRecord(threadNo: thread.no, side: .client, seq: thread.lastSeq, at: now,
                   .ratingPrompt(sessionID.map { .afterSession(sessionID: $0) } ?? .afterMessages(sent: messagesSent)))
    }

    /// Whether a client's `count`-th message asks for a rating (every 10th).
    public static func asksForRating(afterMessage count: Int) -> Bool { count > 0 && count % 10 == 0 }

    // MARK: - Applying records

    /// Applies a record to the state: the commands above do it as they make
    /// one, and a restart does it for every record after the checkpoint.
    /// Records of unknown threads are skipped.
    public func apply(_ record: ChatRecord) { apply(record, recentKey: nil) }

    /// `recentKey`: a message's `RecentSends.key`, when the send has hashed its client message id already.
    private func apply(_ record: ChatRecord, recentKey: Int?) {
        guard let thread = threadsByNo[record.threadNo] else { return }
        switch record.content {
        case .ratingPrompt, .tier, .coaching, .erasure, .account, .unknown:
            if record.pos > 0 { committed(record) }
            return
        case .session(let session):
            // Sessions live in `SessionBook`; the thread learns the system message (not the list's preview,
            // which stays the last thing a person wrote, in their words) and the record's position.
            guard session.isSystemMessage else {
                if record.pos > 0 { committed(record) }
                return
            }
            if record.seq >= thread.lastSeq {
                thread.lastSeq = record.seq
                thread.lastMessageAt = record.at
            }
            // A participant who made the change has read it.
            if session.byParticipant {
                thread.setPositions(record.side, delivered: max(thread.deliveredSeq(record.side), record.seq),
                                    read: max(thread.readSeq(record.side), record.seq))
            }
        case .message(let message):
            // Applying is monotone (a record older than what the state holds changes nothing it should not), so
            // a restart may replay records a checkpoint already includes.
            if record.seq >= thread.lastSeq {
                thread.lastSeq = record.seq
                thread.lastMessageAt = record.at
                thread.lastSide = record.side
                thread.lastMessageSeq = record.seq
                if message.isDeleted {
                    thread.setLastDeleted()
                } else {
                    thread.setLast(kind: message.kind, body: message.body, attached: message.hasAttachments)
                }
            }
            // Writing marks the thread read (and received) for the writer.
            thread.setPositions(record.side, delivered: max(thread.deliveredSeq(record.side), record.seq),
                                read: max(thread.readSeq(record.side), record.seq))
            thread.recent?.add(recentKey ?? RecentSends.key(record.side, message.clientMessageID), seq: record.seq)
        case .receipt(let receipt):
            thread.setPositions(record.side, delivered: max(thread.deliveredSeq(record.side), receipt.delivered),
                                read: max(thread.readSeq(record.side), receipt.read))
        case .change(let change):
            if change.isDelete { thread.deletedSeqs.insert(change.target) }
            if change.wasLast {
                thread.lastMessageSeq = change.target
                switch change.change {
                case .delete: thread.setLastDeleted()
                case .edit(let body?, let attached) where !thread.deletedSeqs.contains(change.target):
                    thread.setLast(kind: .text, body: body, attached: attached)
                case .edit: break  // forgotten by a later change, which is applied after it
                }
            }
        case .link(let link):
            thread.active = link.active
        }
        if record.pos > 0 { committed(record) }
        markDirty(thread)
    }

    /// The store says the record is durable: lists and badges may show it.
    public func committed(_ record: ChatRecord) {
        guard let thread = threadsByNo[record.threadNo] else { return }
        thread.lastPos = max(thread.lastPos, record.pos)
        // Only a thread message's seq is one the log holds: any other record carries the thread's last seq as its
        // maker's memory had it, which may count guesses of messages still in flight that never land (a failed
        // append). Counted here, a checkpoint saved that guess as the thread's last seq, and a process that read
        // the view back guessed past the log: a session change, which keeps its guess, left a gap.
        if record.isThreadMessage, record.seq > thread.committedSeq {
            thread.committedSeq = record.seq
            markDirty(thread)  // the checkpoint saves the committed seq, which only moves now
        }
    }

    /// Sets a known thread back to `stored` (its views as the store saved them) with `tail` (its records after
    /// those views) applied on top: after an append the store refused, what this state had applied ahead of the
    /// store is forgotten. Its idempotency window is dropped (the next send reads it again).
    public func reset(to stored: ChatThread, tail: [ChatRecord]) {
        guard let thread = threadsByNo[stored.no] else { return }
        thread.restore(lastSeq: stored.lastSeq, lastMessageAt: stored.lastMessageAt, lastPreview: stored.lastPreview,
                       // The stored row's position is its highest-seq record's: a link or tier record made
                       // after it with a lower seq (decided on a view that was behind) is not counted there, but
                       // this state applied it (they are never passed over). Positions only move forward; every
                       // one here is committed. Kept, the hello's cursor is not set back before that record.
                       lastSide: stored.lastSide, lastPos: max(thread.lastPos, stored.lastPos),
                       coach: (stored.deliveredSeq(.coach), stored.readSeq(.coach)),
                       client: (stored.deliveredSeq(.client), stored.readSeq(.client)))
        thread.active = stored.active
        thread.deletedSeqs = []  // the tail's deletes are applied again below
        thread.lastMessageSeq = nil
        thread.recent = nil
        warm[thread.no] = nil
        for record in tail where record.threadNo == thread.no { apply(record) }
        markDirty(thread)
    }

    /// Marks a thread for the next checkpoint again (its last one did not stick).
    public func markDirty(no: Int64) {
        if let thread = threadsByNo[no] { markDirty(thread) }
    }

    private func markDirty(_ thread: ChatThread) {
        guard !thread.dirty else { return }
        thread.dirty = true
        dirty.append(thread)
    }

    /// A user's account was erased: in each of their threads the list no longer previews their words, and their
    /// name is forgotten. Returns their threads with their side.
    @discardableResult
    public func erase(userID: String) -> [(thread: ChatThread, side: Side)] {
        names[userID] = nil
        return threads(of: userID).compactMap { thread in
            guard let side = thread.side(of: userID) else { return nil }
            if thread.lastSide == side {
                thread.setLastDeleted()
                markDirty(thread)
            }
            return (thread, side)
        }
    }

    // MARK: - The idempotency window

    /// Installs a thread's window from its newest messages in the log, given
    /// as (side, client_message_id, seq), in any order. A window already
    /// warm is kept (it knows sends made since the read began).
    public func installWindow(threadID: String, _ sends: [(side: Side, clientMessageID: String, seq: Int64)],
                              nowMilliseconds: UInt64 = 0) {
        guard let thread = threadsByID[threadID], thread.recent == nil else { return }
        var recent = RecentSends()
        for send in sends.sorted(by: { $0.seq < $1.seq }).suffix(RecentSends.capacity) {
            recent.add(RecentSends.key(send.side, send.clientMessageID), seq: send.seq)
        }
        thread.recent = recent
        thread.recentUsedAt = nowMilliseconds
        warm[thread.no] = thread
    }

    /// Drops the windows not used for `idleMilliseconds`; returns how many.
    /// Their threads load them again on the next send.
    @discardableResult
    public func dropIdleWindows(nowMilliseconds: UInt64, idleMilliseconds: UInt64) -> Int {
        var dropped = 0
        for (no, thread) in warm where nowMilliseconds &- thread.recentUsedAt >= idleMilliseconds {
            thread.recent = nil
            warm[no] = nil
            dropped += 1
        }
        return dropped
    }

    /// Threads whose window is in memory.
    public var warmThreads: Int { warm.count }

    // MARK: - Checkpoints

    /// What changed since the last call: the threads whose views the store
    /// must save. Clears the list. The last seq saved is the last *committed* one: a seq given to a send whose
    /// append is still in flight may be lost with it (a conflict, a full disk), and a saved view that claimed it
    /// would make the next send after a rebuild or a restart skip a seq.
    public func takeDirty() -> [ThreadSnapshot] {
        snapshots(of: takeDirtyNumbers())
    }

    /// The threads that changed since the last call (their numbers), the list cleared: the shell makes their
    /// snapshots (`snapshots(of:)`) a part at a time, so one loop iteration makes a bounded number of them. A
    /// thread that changes again before its snapshot is made is listed again (saved twice: harmless).
    public func takeDirtyNumbers() -> [Int64] {
        let taken = dirty
        dirty = []
        return taken.map { thread in
            thread.dirty = false
            return thread.no
        }
    }

    /// The views of `numbers` as they are now, to save (`takeDirty`); a thread no longer known is skipped.
    public func snapshots(of numbers: [Int64]) -> [ThreadSnapshot] {
        numbers.compactMap { no in
            guard let thread = threadsByNo[no] else { return nil }
            // Positions no further than the committed seq the snapshot saves: a writer reads their own message when
            // it is decided, before it is durable; saved ahead of it, a restart (or a rebuild) would count the next
            // message as read (the simulator's finding 6). A committed record past the mark sets them again.
            let upTo = thread.committedSeq
            return ThreadSnapshot(
                no: thread.no, lastSeq: upTo, lastMessageAt: thread.lastMessageAt, lastPreview: thread.lastPreview,
                lastSide: thread.lastSide, coachDelivered: min(thread.deliveredSeq(.coach), upTo),
                coachRead: min(thread.readSeq(.coach), upTo), clientDelivered: min(thread.deliveredSeq(.client), upTo),
                clientRead: min(thread.readSeq(.client), upTo))
        }
    }

    // MARK: - Views of records

    /// The list's preview of a deleted message: a sign the apps word in their language, never its text.
    public static let deletedPreview = "🚫"

    /// The list's preview of a message, made when the list asks (not on every send or replayed record): a text
    /// with attachments (`attached`, an `AttachedText` body) shows "📎" and its text.
    public static func preview(kind: MessageKind, body: String, attached: Bool = false) -> String {
        if attached, let text = try? JSONDecoder().decode(AttachedText.self, from: Data(body.utf8)) {
            return MessageRules.preview(text: text.text.isEmpty ? "📎" : "📎 " + text.text, meal: nil)
        }
        if kind == .mealLog, let meal = try? JSONDecoder().decode(MealLog.self, from: Data(body.utf8)) {
            return MessageRules.preview(text: nil, meal: meal)
        }
        return MessageRules.preview(text: body, meal: nil)
    }

    /// The message a record holds, as clients see it.
    public func messageView(_ record: ChatRecord) -> MessageView? {
        guard let thread = threadsByNo[record.threadNo] else { return nil }
        return ChatState.messageView(record, threadID: thread.id, senderID: thread.userID(record.side))
    }

    /// The message a record holds, as clients see it; nil for a record of another kind.
    public static func messageView(_ record: ChatRecord, threadID: String, senderID: String) -> MessageView? {
        guard let message = record.content.message else { return nil }
        return messageView(message, seq: record.seq, at: record.at, threadID: threadID, senderID: senderID)
    }

    public static func messageView(_ message: MessageRecord, seq: Int64, at: Int64, threadID: String, senderID: String) -> MessageView {
        if let deletedAt = message.deletedAt {
            return MessageView(threadId: threadID, seq: seq, senderId: senderID, clientMessageId: message.clientMessageID,
                               kind: message.kind.wire, text: nil, meal: nil, createdAt: at, deletedAt: deletedAt)
        }
        let meal = message.kind == .mealLog ? try? JSONDecoder().decode(MealLog.self, from: Data(message.body.utf8)) : nil
        let attached = message.hasAttachments ? try? JSONDecoder().decode(AttachedText.self, from: Data(message.body.utf8)) : nil
        return MessageView(
            threadId: threadID, seq: seq, senderId: senderID, clientMessageId: message.clientMessageID, kind: message.kind.wire,
            text: message.kind == .mealLog ? nil : attached?.text ?? message.body, meal: meal, createdAt: at,
            attachments: attached?.attachments, editedAt: message.editedAt)
    }

    /// A message record's `message` events, one per participant, as UTF-8 bytes: what `CoachingCore.apply` makes
    /// on every send, with the message's JSON (`messageJSON`, the reply's too) written once for both.
    public func messageEvents(for record: ChatRecord, messageJSON: [UInt8]? = nil) -> [(userID: String, json: [UInt8])] {
        guard let thread = threadsByNo[record.threadNo],
              let message = messageJSON ?? messageView(record)?.jsonBytes else { return [] }
        let coach = thread.coachID, client = thread.clientID
        return [
            (coach, MessageEvent.jsonBytes(message: message, unread: thread.unread(.coach), totalUnread: totalUnread(thread, .coach))),
            (client, MessageEvent.jsonBytes(message: message, unread: thread.unread(.client), totalUnread: totalUnread(thread, .client))),
        ]
    }

    /// The events a durable record makes, one per participant at most, as
    /// JSON objects without their cursor. Counts are the state's at the time
    /// of the call (so a replay shows today's badges). `messageJSON`: the
    /// message's JSON when the caller has written it already (for the reply).
    public func events(for record: ChatRecord, messageJSON: String? = nil) -> [(userID: String, payload: String)] {
        guard let thread = threadsByNo[record.threadNo] else { return [] }
        switch record.content {
        case .message:
            return messageEvents(for: record, messageJSON: messageJSON.map { Array($0.utf8) })
                .map { ($0.userID, String(decoding: $0.json, as: UTF8.self)) }
        case .receipt(let receipt):
            let reader = thread.userID(record.side)
            let peer = thread.userID(record.side.other)
            let event = ReceiptEvent(threadId: thread.id, userId: reader, deliveredSeq: receipt.delivered, readSeq: receipt.read)
            guard receipt.readMoved else { return [(peer, event.jsonText)] }
            let unread = UnreadEvent(threadId: thread.id, unread: max(0, thread.committedSeq - receipt.read),
                                     totalUnread: totalUnread(thread, record.side), readSeq: receipt.read)
            return [(peer, event.jsonText), (reader, unread.jsonText)]
        case .ratingPrompt(let prompt):
            let event = switch prompt {
            case .afterMessages(let sent):
                RatingPromptEvent(threadId: thread.id, coachId: thread.coachID, reason: "messages", messagesSent: sent, sessionId: nil)
            case .afterSession(let sessionID):
                RatingPromptEvent(threadId: thread.id, coachId: thread.coachID, reason: "session", messagesSent: nil, sessionId: sessionID)
            }
            return [(thread.clientID, JSONText.encoder.encodeToString(event))]
        case .tier(let tier):
            return [(thread.clientID, JSONText.encoder.encodeToString(TierEvent(tier: tier.tier)))]
        case .change(let change):
            guard let event = MessageChangeEvents.json(change, threadID: thread.id, at: record.at,
                                                       deleted: thread.deletedSeqs.contains(change.target)) else { return [] }
            return [(thread.coachID, event), (thread.clientID, event)]
        case .coaching(let change):
            let event = RecordBody.eventJSON(threadID: thread.id, body: change.json)
            return [(thread.coachID, event), (thread.clientID, event)]
        case .erasure, .account:
            return []  // on no thread (an account change makes no event at all): `CoachingCore.events` makes its events, per thread of the erased user
        case .session, .unknown:
            return []  // a session is worded by the shell, which knows each reader's language and time zone (`SessionDesk`)
        case .link(let link):
            return [Side.coach, Side.client].map { side in
                let peer = thread.userID(side.other)
                let event = ThreadEvent(threadId: thread.id, peerId: peer, peerName: names[peer], active: link.active)
                return (thread.userID(side), JSONText.encoder.encodeToString(event))
            }
        }
    }
}

/// A thread's views as a checkpoint saves them.
public struct ThreadSnapshot: Sendable, Equatable {
    public let no: Int64
    public let lastSeq: Int64
    public let lastMessageAt: Int64?
    public let lastPreview: String?
    public let lastSide: Side?
    public let coachDelivered: Int64
    public let coachRead: Int64
    public let clientDelivered: Int64
    public let clientRead: Int64

    public init(no: Int64, lastSeq: Int64, lastMessageAt: Int64?, lastPreview: String?, lastSide: Side?,
                coachDelivered: Int64, coachRead: Int64, clientDelivered: Int64, clientRead: Int64) {
        self.no = no
        self.lastSeq = lastSeq
        self.lastMessageAt = lastMessageAt
        self.lastPreview = lastPreview
        self.lastSide = lastSide
        self.coachDelivered = coachDelivered
        self.coachRead = coachRead
        self.clientDelivered = clientDelivered
        self.clientRead = clientRead
    }
}
