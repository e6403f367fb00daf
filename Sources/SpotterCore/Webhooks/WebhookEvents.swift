import FoundationEssentials
import SpotterProtocol

/// The events an outbound webhook can subscribe to (Protocol/README.md, "Webhooks").
public enum WebhookEventType: String, Sendable, CaseIterable, Equatable {
    case messageCreated = "message.created"
    case messageDeleted = "message.deleted"
    case sessionScheduled = "session.scheduled"
    case sessionCancelled = "session.cancelled"
    case sessionRescheduled = "session.rescheduled"
    case sessionNeedsResolution = "session.needs_resolution"
    case sessionCompleted = "session.completed"
    case tierChanged = "tier.changed"
    case checkInCreated = "check_in.created"
    case measurementCreated = "measurement.created"
    case userErased = "user.erased"

    /// A message event carries (or carried) a message's text: a purge blanks its payload.
    public var isMessageEvent: Bool { self == .messageCreated || self == .messageDeleted }
}

/// The thread a record belongs to, as the webhooks need it: its id and its two participants.
public struct WebhookThread: Sendable, Equatable {
    public var id: String
    public var coachID: String
    public var clientID: String

    public init(id: String, coachID: String, clientID: String) {
        self.id = id
        self.coachID = coachID
        self.clientID = clientID
    }

    func userID(_ side: Side) -> String { side == .coach ? coachID : clientID }
}

/// One event made from one committed record: what every endpoint subscribed to its type gets, byte for byte.
public struct WebhookEvent: Sendable, Equatable {
    /// `evt_<position>_<type>`: the same every time the record is handed over, by any process, and no other
    /// event's (positions are never reused; one record makes at most one event of a type).
    public var id: String
    public var type: WebhookEventType
    /// The record's position in the log: deliveries to one endpoint go in this order.
    public var pos: Int64
    /// The thread and the message's seq, for a message event (what a purge finds the delivery by).
    public var threadID: String
    public var seq: Int64?
    /// The message's sender, for `message.created` (what an erasure finds the delivery by).
    public var senderID: String?
    /// The record's time (seconds): the payload's `created_at`.
    public var createdAt: Int64
    /// The whole body sent: `{"created_at":…,"data":{…},"id":…,"type":…}`.
    public var payload: String
}

/// Committed log records → webhook events. Pure: the record and its thread in, the events out; no clock, no
/// store. Names, emails and phone numbers never appear: people are named by id.
public enum WebhookEvents {
    public static func eventID(pos: Int64, _ type: WebhookEventType) -> String { "evt_\(pos)_\(type.rawValue)" }

    /// What a record makes the outbox forget: a message's text taken back (an edit or a delete: its thread and
    /// seq), or every message of an erased user. Events queued before it still go, under their ids, without the text.
    public enum Forgetting: Sendable, Equatable {
        case message(threadID: String, seq: Int64)
        case sender(userID: String)
    }

    public static func forgetting(_ record: ChatRecord, thread: WebhookThread?) -> Forgetting? {
        switch record.content {
        case .change(let change): thread.map { .message(threadID: $0.id, seq: change.target) }
        case .erasure(let erasure): .sender(userID: erasure.userID)
        default: nil
        }
    }

    /// Whether `record` is about a thread (all but an erasure, logged on no thread): its events need the thread.
    public static func needsThread(_ record: ChatRecord) -> Bool {
        if case .erasure = record.content { false } else { true }
    }

    /// The events `record` makes (none for most kinds: receipts, links, rating prompts, unknown rows). `thread`:
    /// the record's thread; nil makes nothing but for a record on no thread (`needsThread` false).
    public static func events(for record: ChatRecord, thread: WebhookThread?) -> [WebhookEvent] {
        if case .erasure(let erasure) = record.content {
            var data = JSONText()
            data.field("user_id", erasure.userID)
            return [event(.userErased, record, WebhookThread(id: "", coachID: "", clientID: ""), seq: nil, data: data.finish())]
        }
        guard let thread else { return [] }
        switch record.content {
        case .message(let message):
            return [event(.messageCreated, record, thread, seq: record.seq, data: messageData(record, message, thread))]
        case .session:
            guard let body = SessionRecordBody(record), let type = sessionEventType(body) else { return [] }
            return [event(type, record, thread, seq: nil, data: sessionData(record, body, thread))]
        case .tier(let tier):
            var data = JSONText()
            data.field("client_id", thread.clientID)
            data.field("coach_id", thread.coachID)
            data.field("thread_id", thread.id)
            data.field("tier", tier.tier)
            return [event(.tierChanged, record, thread, seq: nil, data: data.finish())]
        case .coaching(let change):
            guard let body = try? JSONDecoder().decode(RecordBody.self, from: Data(change.json.utf8)) else { return [] }
            let type: WebhookEventType
            switch body.change {
            case "check_in.created": type = .checkInCreated
            case "measurement.created": type = .measurementCreated
            default: return []
            }
            var data = JSONText()
            data.field("actor_id", thread.userID(record.side))
            data.field("client_id", thread.clientID)
            data.field("coach_id", thread.coachID)
            data.field("item_id", change.itemID ?? body.checkIn?.id ?? body.measurement?.id)
            data.field("thread_id", thread.id)
            return [event(type, record, thread, seq: nil, data: data.finish())]
        case .change(let change):
            // A deletion (by its sender, an admin, or the sender's erasure); an edit makes no event.
            guard case .delete(let deleter) = change.change else { return [] }
            var data = JSONText()
            data.field("by", deleter.wire)
            data.field("client_id", thread.clientID)
            data.field("coach_id", thread.coachID)
            data.field("sender_id", thread.userID(record.side))
            data.field("seq", change.target)
            data.field("thread_id", thread.id)
            return [event(.messageDeleted, record, thread, seq: change.target, data: data.finish())]
        case .receipt, .link, .ratingPrompt, .erasure, .account, .unknown:
            return []
        }
    }

    /// Which event a session change is, from the status it had and has: the first time it is `scheduled`
    /// (accepted, or a held one let through), a new start while scheduled (a reschedule accepted), and entering
    /// `cancelled`, `needs_resolution` or `completed`. Other changes (an invite, a proposal, a join) make none.
    public static func sessionEventType(_ body: SessionRecordBody) -> WebhookEventType? {
        let now = body.session.status
        let before = body.previousStatus
        guard now != before || now == SessionStatus.scheduled.rawValue else { return nil }
        switch SessionStatus(rawValue: now) {
        case .scheduled:
            if before == SessionStatus.scheduled.rawValue || before == SessionStatus.rescheduleRequested.rawValue {
                guard let previousStart = body.previousStart, previousStart != body.session.start else { return nil }
                return .sessionRescheduled
            }
            return .sessionScheduled
        case .cancelled: return .sessionCancelled
        case .needsResolution: return .sessionNeedsResolution
        case .completed: return .sessionCompleted
        default: return nil
        }
    }

    private static func event(_ type: WebhookEventType, _ record: ChatRecord, _ thread: WebhookThread, seq: Int64?,
                              data: String) -> WebhookEvent {
        let id = eventID(pos: record.pos, type)
        var json = JSONText()
        json.field("created_at", record.at)
        json.field("data", json: data)
        json.field("id", id)
        json.field("type", type.rawValue)
        let sender = type == .messageCreated ? thread.userID(record.side) : nil
        return WebhookEvent(id: id, type: type, pos: record.pos, threadID: thread.id, seq: seq, senderID: sender,
                            createdAt: record.at, payload: json.finish())
    }

    private static func messageData(_ record: ChatRecord, _ message: MessageRecord, _ thread: WebhookThread) -> String {
        var text: String?
        var attachments: [String] = []
        var meal: String?
        if message.isDeleted {
            // Deleted before this event was made: it goes, without what was deleted.
        } else if message.hasAttachments, let attached = try? JSONDecoder().decode(AttachedText.self, from: Data(message.body.utf8)) {
            text = attached.text
            attachments = attached.attachments.map(\.id)
        } else if message.kind == .mealLog {
            meal = message.body
        } else {
            text = message.body
        }
        var data = JSONText()
        if !attachments.isEmpty { data.field("attachment_ids", json: "[" + attachments.map(JSONText.string).joined(separator: ",") + "]") }
        data.field("client_id", thread.clientID)
        data.field("client_message_id", message.clientMessageID)
        data.field("coach_id", thread.coachID)
        if message.isDeleted { data.field("deleted", true) }
        data.field("kind", message.kind.wire)
        if let meal { data.field("meal", json: meal) }
        data.field("sender_id", message.kind == .system ? nil : thread.userID(record.side))
        data.field("seq", record.seq)
        data.field("text", text)
        data.field("thread_id", thread.id)
        return data.finish()
    }

    private static func sessionData(_ record: ChatRecord, _ body: SessionRecordBody, _ thread: WebhookThread) -> String {
        let session = body.session
        var data = JSONText()
        data.field("action", body.action)
        data.field("actor", body.actor)
        data.field("client_id", thread.clientID)
        data.field("coach_id", thread.coachID)
        data.field("duration_minutes", Int64(session.durationMinutes))
        data.field("previous_start", body.previousStart)
        data.field("previous_status", body.previousStatus)
        data.field("session_id", session.id)
        data.field("start", session.start)
        data.field("status", session.status)
        data.field("thread_id", thread.id)
        return data.finish()
    }
}
