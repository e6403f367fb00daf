import FoundationEssentials
import GRDB
import SpotterCore
import SpotterProtocol
import SpotterStore

/// An event appended to one user's log, ready to push: `frame` is the JSON
/// text frame with its cursor.
struct LoggedEvent: Sendable {
    let userID: String
    let cursor: Int64
    let frame: String

    /// `{"cursor":N,…payload…}`: the payload is stored without its cursor;
    /// the frame is built once per user, not once per connection.
    init(userID: String, cursor: Int64, payload: String) {
        self.userID = userID
        self.cursor = cursor
        self.frame = "{\"cursor\":\(cursor)," + payload.dropFirst()
    }
}

struct SendOutcome: Sendable {
    let message: MessageView
    let events: [LoggedEvent]
}

/// What a link change did: the `thread` events logged, and each user's
/// new view of each thread (for sockets already open).
struct LinkChanges: Sendable {
    struct Thread: Sendable {
        let userID: String
        let threadID: String
        let peerID: String
        let active: Bool
    }
    let events: [LoggedEvent]
    let threads: [Thread]
}

struct ReceiptOutcome: Sendable {
    let result: ReceiptResult
    let events: [LoggedEvent]
}

/// The write side of messaging: functions that run on the store's writer
/// thread inside a group-commit transaction. Every change a user must see
/// is appended to their event log in the same transaction, so a commit
/// makes the change and its notification durable together.
enum MessagingJobs {
    /// The thread if `userID` takes part in it; `forbidden` otherwise, so
    /// outsiders cannot tell a foreign thread from a missing one.
    static func participantThread(_ db: Database, threadID: String, userID: String) throws -> ThreadRecord {
        try participant(Messaging.thread(db, id: threadID), userID: userID)
    }

    static func participant(_ thread: ThreadRecord?, userID: String) throws -> ThreadRecord {
        guard let thread, thread.coachID == userID || thread.clientID == userID else {
            throw APIError(.forbidden, field: "thread_id")
        }
        return thread
    }

    static func messageView(_ stored: StoredMessage) -> MessageView {
        let meal = stored.kind == "meal_log" ? try? JSONDecoder().decode(MealLog.self, from: Data(stored.body.utf8)) : nil
        return MessageView(
            threadId: stored.threadID, seq: stored.seq, senderId: stored.senderID, clientMessageId: stored.clientMessageID,
            kind: stored.kind, text: stored.kind == "meal_log" ? nil : stored.body, meal: meal, createdAt: stored.createdAt)
    }

    static func send(_ db: Database, _ state: MessagingWriter, senderID: String, threadID: String, clientMessageID: String, kind: String,
                     text: String?, meal: MealLog?, now: Int64) throws -> SendOutcome {
        let thread = try participant(state.thread(db, id: threadID), userID: senderID)
        guard try Messaging.isActive(db, thread: thread) else { throw APIError(.threadInactive, field: "thread_id") }
        let body = meal.map { JSON.encode($0) } ?? text ?? ""
        let peerID = thread.coachID == senderID ? thread.clientID : thread.coachID
        let senderBefore = try state.receipt(db, threadID: threadID, userID: senderID)
        let outcome = try state.insertMessage(db, NewMessage(
            threadID: threadID, senderID: senderID, clientMessageID: clientMessageID, kind: kind, body: body, createdAt: now,
            preview: MessageRules.preview(text: text, meal: meal)))
        guard case .inserted(let stored) = outcome else {
            if case .duplicate(let original) = outcome {
                // A retry returns the original; the same key with other content is a client bug, not a retry.
                guard original.kind == kind, original.body == body else {
                    throw APIError(.idempotencyConflict, field: "client_message_id")
                }
                return SendOutcome(message: messageView(original), events: [])
            }
            throw APIError(.internalError)
        }
        let view = messageView(stored)
        let payload = MessageEvent(message: view).jsonText
        var events = [NewEvent(userID: peerID, kind: "message", payload: payload),
                      NewEvent(userID: senderID, kind: "message", payload: payload)]
        // The peer has one more unread message.
        events.append(try unreadEvent(db, state, userID: peerID, threadID: threadID, lastSeq: stored.seq))
        // Writing marks the thread read for the sender. If they had unread
        // messages from the peer, their badge and the peer's ✓✓ move too.
        if senderBefore.readSeq < stored.seq - 1 {
            let senderAfter = try state.receipt(db, threadID: threadID, userID: senderID)
            events.append(try unreadEvent(db, state, userID: senderID, threadID: threadID, lastSeq: stored.seq))
            events.append(receiptEvent(to: peerID, senderAfter))
        }
        return SendOutcome(message: view, events: try append(db, state, events, now))
    }

    /// Delivered and/or read up to a seq. Positions only move forward; the
    /// peer learns of a change, and the reader's other devices of a read.
    static func receipt(_ db: Database, _ state: MessagingWriter, userID: String, threadID: String, delivered: Int64?, read: Int64?, now: Int64) throws -> ReceiptOutcome {
        let thread = try participant(state.thread(db, id: threadID), userID: userID)
        let before = try state.receipt(db, threadID: threadID, userID: userID)
        let (after, changed) = try state.updateReceipt(db, threadID: threadID, userID: userID, deliveredSeq: delivered, readSeq: read)
        var events: [NewEvent] = []
        let current = try state.thread(db, id: threadID) ?? thread
        if changed {
            let peerID = thread.coachID == userID ? thread.clientID : thread.coachID
            events.append(receiptEvent(to: peerID, after))
            if after.readSeq != before.readSeq {
                events.append(try unreadEvent(db, state, userID: userID, threadID: threadID, lastSeq: current.lastSeq))
            }
        }
        let unread = max(0, current.lastSeq - after.readSeq)
        let result = ReceiptResult(
            threadId: threadID, deliveredSeq: after.deliveredSeq, readSeq: after.readSeq, unread: unread,
            totalUnread: try state.totalUnread(db, userID: userID))
        return ReceiptOutcome(result: result, events: try append(db, state, events, now))
    }

    private static func unreadEvent(_ db: Database, _ state: MessagingWriter, userID: String, threadID: String,
                                    lastSeq: Int64) throws -> NewEvent {
        let receipt = try state.receipt(db, threadID: threadID, userID: userID)
        let event = UnreadEvent(
            threadId: threadID, unread: max(0, lastSeq - receipt.readSeq),
            totalUnread: try state.totalUnread(db, userID: userID), readSeq: receipt.readSeq)
        return NewEvent(userID: userID, kind: "unread", payload: event.jsonText)
    }

    private static func receiptEvent(to peerID: String, _ receipt: ReceiptRecord) -> NewEvent {
        let event = ReceiptEvent(
            threadId: receipt.threadID, userId: receipt.userID, deliveredSeq: receipt.deliveredSeq, readSeq: receipt.readSeq)
        return NewEvent(userID: peerID, kind: "receipt", payload: event.jsonText)
    }

    // MARK: - Links

    /// A client picked their first coach: the link, its thread, and a
    /// `thread` event for both of them, in one transaction.
    static func createLink(_ db: Database, _ state: MessagingWriter, clientID: String, coachID: String, threadID: String,
                           now: Int64) throws -> (link: LinkRecord, changes: LinkChanges) {
        let link = try AccountStore.createLink(db, clientID: clientID, coachID: coachID, threadID: threadID, now: now)
        return (link, try threadEvents(db, state, clientID: clientID, coaches: [coachID], now: now))
    }

    /// An admin decided a coach change. Approved, the client, the old coach
    /// and the new coach each get a `thread` event for the threads whose state
    /// changed (the old one inactive, the new one active), so open sockets
    /// stop treating the old thread as writable.
    static func decideChange(_ db: Database, _ state: MessagingWriter, requestID: String, approve: Bool, adminID: String,
                             threadID: String, now: Int64) throws -> (request: ChangeRequestRecord, changes: LinkChanges) {
        let (request, previous) = try AccountStore.decideChangeRequest(
            db, id: requestID, approve: approve, adminID: adminID, threadID: threadID, now: now)
        guard approve else { return (request, LinkChanges(events: [], threads: [])) }
        let coaches = [previous, request.toCoachId].compactMap { $0 }
        return (request, try threadEvents(db, state, clientID: request.clientId, coaches: Set(coaches), now: now))
    }

    /// `thread` events for every thread between the client and one of `coaches`, to both participants.
    private static func threadEvents(_ db: Database, _ state: MessagingWriter, clientID: String, coaches: Set<String>,
                                     now: Int64) throws -> LinkChanges {
        var threads: [LinkChanges.Thread] = []
        for thread in try Messaging.threads(db, userID: clientID) where thread.clientID == clientID && coaches.contains(thread.coachID) {
            let active = try Messaging.isActive(db, thread: thread)
            threads.append(.init(userID: clientID, threadID: thread.id, peerID: thread.coachID, active: active))
            threads.append(.init(userID: thread.coachID, threadID: thread.id, peerID: clientID, active: active))
        }
        var names: [String: String?] = [:]
        for peer in Set(threads.map(\.peerID)) { names[peer] = try AccountStore.user(db, id: peer)?.fullName }
        let events = threads.map { change in
            NewEvent(userID: change.userID, kind: "thread", payload: JSON.encode(ThreadEvent(
                threadId: change.threadID, peerId: change.peerID, peerName: names[change.peerID] ?? nil, active: change.active)))
        }
        return LinkChanges(events: try append(db, state, events, now), threads: threads)
    }

    /// Appends the events in one statement and returns them ready to push.
    private static func append(_ db: Database, _ state: MessagingWriter, _ events: [NewEvent], _ now: Int64) throws -> [LoggedEvent] {
        let cursors = try state.appendEvents(db, events, now: now)
        return zip(events, cursors).map { LoggedEvent(userID: $0.userID, cursor: $1, payload: $0.payload) }
    }
}
