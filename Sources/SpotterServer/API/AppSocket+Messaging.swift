import FoundationEssentials
import SpotterBroker
import SpotterCore
import SpotterProtocol
import SpotterPorts
import WebSocket

/// Chat on the live socket: send, receipts, the conversation list,
/// history, typing, and resuming from a cursor.
extension AppSocket {
    static func registerMessagingCommands(_ table: inout CommandTable) {
        table.on(SendMessageCommand.self) { socket, body, id in socket.sendMessage(body, id: id) }
        table.on(ReceiptCommand<Delivered>.self) { socket, body, id in socket.receipt(body, id: id) }
        table.on(ReceiptCommand<Read>.self) { socket, body, id in socket.receipt(body, id: id) }
        table.on(ThreadsCommand.self) { socket, _, id in socket.listThreads(id: id) }
        table.on(HistoryCommand.self) { socket, body, id in socket.history(body, id: id) }
        table.on(TypingCommand.self) { socket, body, id in socket.typing(body, id: id) }
        table.on(ResumeCommand.self) { socket, body, id in socket.resume(body, id: id) }
        table.on(MessageEditCommand.self) { socket, body, id in
            socket.changeMessage(threadID: body.threadId, seq: body.seq, edit: true, text: body.text, id: id)
        }
        table.on(MessageDeleteCommand.self) { socket, body, id in
            socket.changeMessage(threadID: body.threadId, seq: body.seq, edit: false, text: nil, id: id)
        }
    }

    /// `message.edit` / `message.delete`: the core reads the message and decides; the reply is the message as it
    /// now stands, and both participants' devices get `message.edited` / `message.deleted`.
    func changeMessage(threadID: String?, seq: Int64?, edit: Bool, text: String?, id: String) {
        let request: MessageChangeRequest
        do {
            guard let threadID else { throw APIError(.missingField, field: "thread_id") }
            guard let seq else { throw APIError(.missingField, field: "seq") }
            request = MessageChangeRequest(actorID: actor.userID, threadID: threadID, seq: seq,
                                           text: edit ? try MessageRules.text(text) : nil)
        } catch {
            return reply(id: id, error: APIError(wrapping: error))
        }
        runner.run(.changeMessage(request)) { [self] result in answer(id: id, result) }
    }

    /// A validated send, to the core; the reply acks it (and counts it) once it is durable.
    private func submitSend(threadID: String, clientMessageID: String, kind: MessageKind, body: String,
                            withAttachments: Bool, arrived: ContinuousClock.Instant, id: String) {
        let request = SendRequest(sender: actor.userID, threadID: threadID, clientMessageID: clientMessageID, kind: kind,
                                  body: body, withAttachments: withAttachments)
        runner.run(.send(request)) { [self] result in
            pendingSends -= 1
            if case .success = result {
                let metrics = api.server.metrics
                metrics.messagesAcked.increment()
                metrics.sendAck.recordNanoseconds(Int64((ContinuousClock.now - arrived) / .nanoseconds(1)))
            }
            answer(id: id, result)
        }
    }

    func sendMessage(_ command: SendMessageCommand, id: String) {
        let kind = command.kind ?? "text"
        let threadID: String, clientMessageID: String
        var text: String?, meal: MealLog?
        let attachments = command.attachments ?? []
        do {
            guard let thread = command.threadId else { throw APIError(.missingField, field: "thread_id") }
            threadID = thread
            clientMessageID = try MessageRules.clientMessageID(command.clientMessageId)
            switch kind {
            // With attachments the text may be empty.
            case "text": text = attachments.isEmpty || !(command.text ?? "").isEmpty ? try MessageRules.text(command.text) : ""
            case "meal_log": meal = try MessageRules.meal(command.meal)
            default: throw APIError(.invalidMessage, field: "kind")  // `system` is the server's alone
            }
            if !attachments.isEmpty {
                guard kind == "text" else { throw APIError(.invalidMessage, field: "attachments") }
                guard attachments.count <= 10, Set(attachments).count == attachments.count else {
                    throw APIError(.outOfRange, field: "attachments")
                }
                if let refusal = runner.attachmentRefusal(actor.userID, field: "attachments") { throw refusal }
            }
        } catch {
            reply(id: id, error: APIError(wrapping: error))
            return
        }
        // At most 64 sends in flight per socket, and none past the server's bound.
        if let refusal = runner.writeRefusal { return reply(id: id, error: refusal) }
        guard pendingSends < 64 else { return reply(id: id, error: APIError(.rateLimited, retryAfterSeconds: 1)) }
        pendingSends += 1
        let arrived = ContinuousClock.now
        // A method, not a closure the two paths share: the plain send makes no closure but the reply.
        func send(_ kind: MessageKind, _ body: String, _ withAttachments: Bool) {
            submitSend(threadID: threadID, clientMessageID: clientMessageID, kind: kind, body: body,
                       withAttachments: withAttachments, arrived: arrived, id: id)
        }
        guard !attachments.isEmpty else {
            return send(MessageKind(wire: kind) ?? .text, meal.map { JSON.encode($0) } ?? text ?? "", false)
        }
        // A text with files uploaded to the thread: their types and sizes are read first (off the loop), then it is
        // sent like any message. (A delete of another message naming the same file may take it off the thread in
        // between: this message then names a file whose download answers not_found.)
        let store = api.services.attachments
        api.server.loop.runBlocking({
            blockingResult {
                // With each file's thumbnail, when it has one (the view keeps its URL).
                try store.find(ids: attachments, threadID: threadID)?.map { row in
                    AttachmentView(id: row.id, type: row.type, bytes: row.bytes, thumbnailURL: store.hasThumbnail(row.id)
                        ? AttachmentView.thumbnailURL(threadID: threadID, id: row.id) : nil)
                }
            }
        }, then: { [self] result in
            switch result {
            case .success(let found?):
                send(.text, JSONText.encoder.encodeToString(AttachedText(text: text ?? "", attachments: found)), true)
            case .success(nil):
                pendingSends -= 1
                reply(id: id, error: APIError(.notFound, field: "attachments"))
            case .failure(let error):
                pendingSends -= 1
                reply(id: id, error: error)
            }
        })
    }

    func receipt<Mark>(_ command: ReceiptCommand<Mark>, id: String) {
        let read = Mark.self == Read.self
        guard let threadID = command.threadId else { return reply(id: id, error: APIError(.missingField, field: "thread_id")) }
        guard let seq = command.seq else { return reply(id: id, error: APIError(.missingField, field: "seq")) }
        guard seq >= 0 else { return reply(id: id, error: APIError(.outOfRange, field: "seq")) }
        runner.run(.receipt(userID: actor.userID, threadID: threadID, delivered: read ? nil : seq, read: read ? seq : nil)) { [self] result in
            answer(id: id, result)
        }
    }

    /// The conversation list, from the chat state; only the peers' last-seen times are read from the store.
    func listThreads(id: String) {
        let userID = actor.userID
        let threads = runner.chat.threads(of: userID).sorted { a, b in
            // Most recent activity first; threads without messages last, newest first; then by id.
            switch (a.lastMessageAt, b.lastMessageAt) {
            case let (x?, y?) where x != y: return x > y
            case (_?, nil): return true
            case (nil, _?): return false
            default: return a.createdAt != b.createdAt ? a.createdAt > b.createdAt : a.id < b.id
            }
        }
        let peers = threads.compactMap { thread in thread.side(of: userID).map { thread.userID($0.other) } }
        let log = runner.log
        api.server.loop.runBlocking({ blockingResult { try log.lastSeen(userIDs: peers) } }, then: { [self] result in
            guard case .success(let lastSeen) = result else { return reply(id: id, error: APIError(.internalError)) }
            let state = runner.chat
            let views = threads.compactMap { thread -> ThreadView? in
                guard let side = thread.side(of: userID) else { return nil }
                let peer = thread.userID(side.other)
                return ThreadView(
                    threadId: thread.id, peerId: peer, peerName: state.names[peer], peerOnline: runner.isOnline(peer),
                    peerLastSeenAt: lastSeen[peer], lastSeq: thread.committedSeq, lastMessageAt: thread.lastMessageAt,
                    lastPreview: thread.lastPreview, lastSenderId: thread.lastSide.map(thread.userID),
                    readSeq: thread.readSeq(side), deliveredSeq: thread.deliveredSeq(side),
                    peerReadSeq: thread.readSeq(side.other), peerDeliveredSeq: thread.deliveredSeq(side.other),
                    unread: thread.unread(side), active: thread.active, peerErased: runner.isErased(peer))
            }
            let result = ThreadsResult(threads: views, totalUnread: state.totalUnread(userID), cursor: max(lastSentCursor, state.lastPos(of: userID)))
            send(Reply.ok(id: id, resultJSON: JSON.encode(result)))
        })
    }

    func history(_ command: HistoryCommand, id: String) {
        guard let threadID = command.threadId else { return reply(id: id, error: APIError(.missingField, field: "thread_id")) }
        let limit = command.limit ?? 50
        guard (1...100).contains(limit) else { return reply(id: id, error: APIError(.outOfRange, field: "limit")) }
        let thread: ChatThread
        do {
            thread = try runner.chat.participant(threadID, actor.userID).0
        } catch {
            return reply(id: id, error: error)
        }
        let before = command.beforeSeq
        let log = runner.log
        let (no, coachID, clientID) = (thread.no, thread.coachID, thread.clientID)
        // System messages about sessions are worded for the reader.
        let reader: SessionActor = actor.userID == coachID ? .coach : .client
        let (language, timeZone) = runner.context().wording(for: actor.userID)
        let budget = ReplyPage.budget(outbound: api.server.config.maxOutboundBytes)
        runAndReplyJSON(id: id) { () -> String in
            let page = try log.history(threadNo: no, beforeSeq: before, limit: limit + 1)
            let messages = page.prefix(limit).compactMap { record in
                record.kind == .session
                    ? SessionText.message(record, threadID: threadID, recipient: reader, language: language, timeZone: timeZone)
                    : ChatState.messageView(record, threadID: threadID, senderID: record.side == .coach ? coachID : clientID)
            }
            // A page of long messages is cut short to stay under the outbound bound (`ReplyPage`).
            return ReplyPage.fitting(limit: messages.count, budget: budget) { count in
                JSON.encode(HistoryResult(messages: Array(messages.prefix(count)),
                                          hasMore: count < messages.count || page.count > limit))
            }
        }
    }

    /// Typing is forwarded at most every 2 s per thread, and never stored.
    func typing(_ command: TypingCommand, id: String) {
        guard let threadID = command.threadId else { return reply(id: id, error: APIError(.missingField, field: "thread_id")) }
        let thread: ChatThread, side: Side
        do {
            (thread, side) = try runner.chat.participant(threadID, actor.userID)
        } catch {
            return reply(id: id, error: error)
        }
        guard thread.active else { return reply(id: id, error: APIError(.threadInactive, field: "thread_id")) }
        let now = api.server.loop.nowMilliseconds
        if now &- (lastTyping[threadID] ?? 0) >= 2000 {
            lastTyping[threadID] = now
            runner.typing(from: actor.userID, threadID: threadID, to: thread.userID(side.other))
        }
        send(Reply.ok(id: id, resultJSON: "{}"))
    }

    /// Replays the log after `cursor` in pages, pacing itself on the socket's
    /// backlog, then sends `live` and the reply. Live events that arrive
    /// meanwhile wait and follow without duplicates.
    func resume(_ command: ResumeCommand, id: String) {
        guard let cursor = command.cursor else { return reply(id: id, error: APIError(.missingField, field: "cursor")) }
        guard cursor >= 0 else { return reply(id: id, error: APIError(.outOfRange, field: "cursor")) }
        guard case .live = delivery else { return reply(id: id, error: APIError(.conflict, field: "cursor")) }
        startResume(from: cursor, id: id)
    }

    /// Replays from `cursor` (a `resume` command, or `?cursor=` at connect
    /// with `id` nil: then no reply follows the `live` marker).
    func startResume(from cursor: Int64, id: String?) {
        guard cursor <= lastSentCursor else {
            goLive()
            return reply(id: id, error: APIError(.outOfRange, field: "cursor"))
        }
        // Cursors from before the log (see the v5-log migration) cannot be translated.
        guard cursor >= runner.core.resumeFloor || runner.core.resumeFloor == 0 else {
            goLive()
            return reply(id: id, error: APIError(.cursorExpired, field: "cursor"))
        }
        let previous = lastSentCursor
        beginReplay(from: cursor)
        // Only what the loop has applied is replayed: a record committed and not yet applied comes live (its event
        // is published once applied, after this point, and waits in the socket's buffer). Were it read here, a
        // thread the state did not yet show as newer would be skipped while a later record of another thread was
        // sent, and the cursor guard would then drop the skipped record's live event (the simulator's finding 5).
        replayPage(after: cursor, through: runner.appliedThrough, replayed: 0, id: id, fallback: previous)
    }

    /// One page of the records after `cursor` in the user's threads (only
    /// threads with something newer are read), as events built from today's
    /// state; the next page once this one has left the socket.
    private func replayPage(after cursor: Int64, through: Int64, replayed: Int, id: String?, fallback: Int64) {
        let log = runner.log
        let userID = actor.userID
        let pageSize = 200
        let threadNos = runner.chat.threads(of: userID).filter { $0.lastPos > cursor }.map(\.no)
        api.server.loop.runBlocking({
            blockingResult { try log.records(threadNos: threadNos, after: cursor, limit: pageSize) }
        }, then: { [self] result in
            switch result {
            case .success(let read):
                let page = read.prefix { $0.pos <= through }
                let context = runner.context()
                for record in page {
                    for (user, payload) in runner.core.events(for: record, context) where user == userID {
                        sendLogged(cursor: record.pos, frame: EventFrame(cursor: record.pos, object: payload))
                    }
                }
                let count = replayed + page.count
                guard read.count == pageSize, page.count == read.count, let last = page.last else {
                    goLive()
                    send(JSON.encode(LiveEvent(cursor: lastSentCursor)))
                    if id != nil { send(Reply.ok(id: id, resultJSON: "{\"cursor\":\(lastSentCursor),\"replayed\":\(count)}")) }
                    return
                }
                // Next page once this one has left: a long absence never floods the outbound queue.
                connection?.whenDrained { [weak self] error in
                    guard error == nil else { return }
                    self?.replayPage(after: last.pos, through: through, replayed: count, id: id, fallback: fallback)
                }
            case .failure(let error):
                lastSentCursor = fallback
                goLive()
                reply(id: id, error: error)
            }
        })
    }
}
