/// Which participant of a thread.
public enum Side: Int64, Sendable, Equatable {
    case coach = 0
    case client = 1

    public var other: Side { self == .coach ? .client : .coach }
}

/// The kinds of message a thread holds, as stored.
public enum MessageKind: Int64, Sendable, Equatable {
    case text = 0
    case mealLog = 1
    case system = 2

    public init?(wire: String) {
        switch wire {
        case "text": self = .text
        case "meal_log": self = .mealLog
        case "system": self = .system
        default: return nil
        }
    }

    public var wire: String {
        switch self {
        case .text: return "text"
        case .mealLog: return "meal_log"
        case .system: return "system"
        }
    }
}

/// One record of the log: a change a user must see, written once.
///
/// Every record belongs to one thread and names the participant who made it
/// by `side`, so a row holds no user ids. `seq` is the message's own seq for a
/// message and the thread's last seq when the record was made otherwise, so
/// within a thread `seq` never decreases as `pos` grows (the store's thread
/// index relies on it). `pos` is the record's position in the log, given by
/// the store when it is appended (0 before).
public struct ChatRecord: Sendable, Equatable {
    public enum Kind: Int64, Sendable, Equatable {
        /// `a`: `MessageKind`; `ref`: client_message_id; `body`: the text or the meal card's JSON, or with `b` = 1
        /// a text with attachments (`AttachedText` JSON).
        case message = 0
        /// `a`: delivered seq, `b`: read seq, of `side`, after the change.
        case receipt = 1
        /// `a`: 1 if the thread became writable, 0 if it stopped being writable. `side` is the client.
        case link = 2
        /// A video session changed: `ref` the session id, `body` a `SessionRecordBody` (the session as it now
        /// stands, the change, who made it and what it was before), `side` the actor's side and `b` 1 when a
        /// participant made the change (`b` 0, `side` coach: the server did). With `a` = 1 (`systemMessage`) the record is also the thread's system message about the
        /// change, with its own `seq`; records written before system messages took a seq have `a` = 0 and the
        /// thread's last seq.
        case session = 3
        /// Ask the client to rate their coach (`--ratings`): `side` the client, `seq` the thread's last seq (not
        /// a message), `a` the client's messages sent so far for a prompt after every 10th, `ref` the session id
        /// for a prompt after a completed session.
        case ratingPrompt = 4
        /// An admin changed the client's tier (`--tiers`): `side` the client, `seq` the thread's last seq, `ref`
        /// the new tier. Logged on the client's current thread, so `resume` replays it.
        case tier = 5
        /// The client's coaching record changed (a challenge, a check-in, a measurement, a goal): `side` the actor,
        /// `seq` the thread's last seq (not a message), `a` 0, `ref` the item's id, `body` a `RecordBody` (the
        /// change and the item as it now stands). Logged on the client's current thread.
        case record = 6
    }

    /// `a` of a `session` record that is a system message in its thread.
    public static let systemMessage: Int64 = 1

    /// Whether the record is a message of its thread (a person's, or the server's about a session): it has its
    /// own seq, `history` lists it and it counts as unread.
    public var isThreadMessage: Bool { kind == .message || (kind == .session && a == ChatRecord.systemMessage) }

    public var pos: Int64
    public var kind: Kind
    public var threadNo: Int64
    public var side: Side
    public var seq: Int64
    public var a: Int64
    public var b: Int64
    public var ref: String?
    public var body: String?
    public var at: Int64

    public init(pos: Int64 = 0, kind: Kind, threadNo: Int64, side: Side, seq: Int64, a: Int64 = 0, b: Int64 = 0,
                ref: String? = nil, body: String? = nil, at: Int64) {
        self.pos = pos
        self.kind = kind
        self.threadNo = threadNo
        self.side = side
        self.seq = seq
        self.a = a
        self.b = b
        self.ref = ref
        self.body = body
        self.at = at
    }
}
