import FoundationEssentials
import SpotterCore
import SpotterProtocol
import SpotterStore
import WebSocket

/// Chat on the live socket: send, receipts, the conversation list,
/// history, typing, and resuming from a cursor.
extension AppSocket {
    func sendMessage(_ command: SendMessageCommand, id: String) {
        let kind = command.kind ?? "text"
        let threadID: String, clientMessageID: String
        var text: String?, meal: MealLog?
        do {
            guard let thread = command.threadId else { throw APIError(.missingField, field: "thread_id") }
            threadID = thread
            clientMessageID = try MessageRules.clientMessageID(command.clientMessageId)
            switch kind {
            case "text": text = try MessageRules.text(command.text)
            case "meal_log": meal = try MessageRules.meal(command.meal)
            default: throw APIError(.invalidMessage, field: "kind")  // `system` is the server's alone
            }
        } catch {
            reply(id: id, error: APIError(wrapping: error))
            return
        }
        // At most 64 sends in flight per socket, and none past the server's bound.
        guard pendingSends < 64, !hub.isOverloaded else {
            return reply(id: id, error: APIError(.rateLimited, retryAfterSeconds: 1))
        }
        pendingSends += 1
        let senderID = actor.userID
        let now = unixNow()
        let (validText, validMeal) = (text, meal)
        let messaging = hub.messaging
        hub.write({ db in
            try MessagingJobs.send(
                db, messaging, senderID: senderID, threadID: threadID, clientMessageID: clientMessageID, kind: kind,
                text: validText, meal: validMeal, now: now)
        }, then: { [self] result in
            pendingSends -= 1
            switch result {
            case .success(let outcome):
                // Committed: acknowledge first, then tell every device of both participants.
                send(Reply.ok(id: id, resultJSON: outcome.message.jsonText))
                hub.publish(outcome.events)
            case .failure(let error):
                reply(id: id, error: error)
            }
        })
    }

    func receipt(_ command: ReceiptCommand, id: String, read: Bool) {
        guard let threadID = command.threadId else { return reply(id: id, error: APIError(.missingField, field: "thread_id")) }
        guard let seq = command.seq else { return reply(id: id, error: APIError(.missingField, field: "seq")) }
        guard seq >= 0 else { return reply(id: id, error: APIError(.outOfRange, field: "seq")) }
        hub.receipt(userID: actor.userID, threadID: threadID, delivered: read ? nil : seq, read: read ? seq : nil) { [self] result in
            switch result {
            case .success(let value): send(Reply.ok(id: id, resultJSON: value.jsonText))
            case .failure(let error): reply(id: id, error: error)
            }
        }
    }

    func listThreads(id: String) {
        let store = api.services.store
        let userID = actor.userID
        api.server.loop.runBlocking({
            blockingResult { () -> ([(ThreadSummary, Bool)], Int64, Int64) in
                try store.writer.read { db in
                    let summaries = try Messaging.summaries(db, userID: userID).map { ($0, try Messaging.isActive(db, thread: $0.thread)) }
                    return (summaries, try Messaging.totalUnread(db, userID: userID), try Messaging.latestCursor(db, userID: userID))
                }
            }
        }, then: { [self] result in
            switch result {
            case .success(let (summaries, total, cursor)):
                let views = summaries.map { summary, active in
                    ThreadView(
                        threadId: summary.thread.id, peerId: summary.peerID, peerName: summary.peerName,
                        peerOnline: hub.isOnline(summary.peerID), peerLastSeenAt: summary.peerLastSeenAt,
                        lastSeq: summary.thread.lastSeq, lastMessageAt: summary.thread.lastMessageAt,
                        lastPreview: summary.thread.lastPreview, lastSenderId: summary.thread.lastSenderID,
                        readSeq: summary.readSeq, deliveredSeq: summary.deliveredSeq, peerReadSeq: summary.peerReadSeq,
                        peerDeliveredSeq: summary.peerDeliveredSeq, unread: summary.unread, active: active)
                }
                for (summary, active) in summaries { threads[summary.thread.id] = (summary.peerID, active) }
                send(Reply.ok(id: id, resultJSON: JSON.encode(ThreadsResult(threads: views, totalUnread: total, cursor: cursor))))
            case .failure(let error):
                reply(id: id, error: error)
            }
        })
    }

    func history(_ command: HistoryCommand, id: String) {
        guard let threadID = command.threadId else { return reply(id: id, error: APIError(.missingField, field: "thread_id")) }
        let limit = command.limit ?? 50
        guard (1...100).contains(limit) else { return reply(id: id, error: APIError(.outOfRange, field: "limit")) }
        let before = command.beforeSeq
        let store = api.services.store
        let userID = actor.userID
        runAndReply(id: id) { () -> HistoryResult in
            try store.writer.read { db in
                _ = try MessagingJobs.participantThread(db, threadID: threadID, userID: userID)
                let page = try Messaging.history(db, threadID: threadID, beforeSeq: before, limit: limit + 1)
                return HistoryResult(messages: page.prefix(limit).map(MessagingJobs.messageView), hasMore: page.count > limit)
            }
        }
    }

    /// Typing is forwarded at most every 2 s per thread, and never stored.
    func typing(_ command: ThreadCommand, id: String) {
        guard let threadID = command.threadId else { return reply(id: id, error: APIError(.missingField, field: "thread_id")) }
        guard let thread = threads[threadID] else { return reply(id: id, error: APIError(.forbidden, field: "thread_id")) }
        guard thread.active else { return reply(id: id, error: APIError(.threadInactive, field: "thread_id")) }
        let now = api.server.loop.nowMilliseconds
        if now &- (lastTyping[threadID] ?? 0) >= 2000 {
            lastTyping[threadID] = now
            hub.typing(from: actor.userID, threadID: threadID, to: thread.peer)
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
        let previous = lastSentCursor
        beginReplay(from: cursor)
        replayPage(after: cursor, replayed: 0, id: id, fallback: previous)
    }

    private func replayPage(after cursor: Int64, replayed: Int, id: String?, fallback: Int64) {
        let store = api.services.store
        let userID = actor.userID
        let pageSize = 200
        api.server.loop.runBlocking({
            blockingResult { try store.writer.read { db in try Messaging.events(db, userID: userID, after: cursor, limit: pageSize) } }
        }, then: { [self] result in
            switch result {
            case .success(.events(let page)):
                for event in page { sendLogged(cursor: event.cursor, frame: LoggedEvent(userID: userID, cursor: event.cursor, payload: event.payload).frame) }
                let count = replayed + page.count
                guard page.count == pageSize, let last = page.last else {
                    goLive()
                    send(JSON.encode(LiveEvent(cursor: lastSentCursor)))
                    if id != nil { send(Reply.ok(id: id, resultJSON: "{\"cursor\":\(lastSentCursor),\"replayed\":\(count)}")) }
                    return
                }
                // Next page once this one has left: a long absence never floods the outbound queue.
                connection?.tcp.whenDrained { [weak self] error in
                    guard error == nil else { return }
                    self?.replayPage(after: last.cursor, replayed: count, id: id, fallback: fallback)
                }
            case .success(.expired):
                lastSentCursor = fallback
                goLive()
                reply(id: id, error: APIError(.cursorExpired, field: "cursor"))
            case .failure(let error):
                lastSentCursor = fallback
                goLive()
                reply(id: id, error: error)
            }
        })
    }
}
