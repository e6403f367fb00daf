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
/// the store when it is appended (0 before). What changed is the typed `content`;
/// how it is stored is `ChatRecord+Columns.swift`'s alone.
public struct ChatRecord: Sendable, Equatable {
    /// The kinds of record, as the log's `kind` column stores them (`StoredKindTests` pins the numbers).
    public enum Kind: Int64, Sendable, Equatable {
        /// `MessageRecord`
        case message = 0
        /// `ReceiptRecord`
        case receipt = 1
        /// `LinkChangeRecord`
        case link = 2
        /// `SessionRecord`
        case session = 3
        /// `RatingPromptRecord`
        case ratingPrompt = 4
        /// `TierRecord`
        case tier = 5
        /// `CoachingChangeRecord`
        case record = 6
        /// `MessageChangeRecord`
        case change = 7
        /// `ErasureRecord`
        case erasure = 8
        /// `AccountChangeRecord`
        case account = 9
    }

    /// What a record says, one typed body per kind.
    public enum Content: Sendable, Equatable {
        case message(MessageRecord)
        case receipt(ReceiptRecord)
        case link(LinkChangeRecord)
        case session(SessionRecord)
        case ratingPrompt(RatingPromptRecord)
        case tier(TierRecord)
        case coaching(CoachingChangeRecord)
        case change(MessageChangeRecord)
        case erasure(ErasureRecord)
        case account(AccountChangeRecord)
        /// A row of a kind this version does not know (a newer server wrote it): kept as stored, so that its
        /// position is accounted for; every rule ignores it.
        case unknown(Columns)

        /// The kind; nil for `unknown`.
        public var kind: Kind? {
            switch self {
            case .message: .message
            case .receipt: .receipt
            case .link: .link
            case .session: .session
            case .ratingPrompt: .ratingPrompt
            case .tier: .tier
            case .coaching: .record
            case .change: .change
            case .erasure: .erasure
            case .account: .account
            case .unknown: nil
            }
        }

        public var message: MessageRecord? { if case .message(let body) = self { body } else { nil } }
        public var receipt: ReceiptRecord? { if case .receipt(let body) = self { body } else { nil } }
        public var link: LinkChangeRecord? { if case .link(let body) = self { body } else { nil } }
        public var session: SessionRecord? { if case .session(let body) = self { body } else { nil } }
        public var ratingPrompt: RatingPromptRecord? { if case .ratingPrompt(let body) = self { body } else { nil } }
        public var tier: TierRecord? { if case .tier(let body) = self { body } else { nil } }
        public var coaching: CoachingChangeRecord? { if case .coaching(let body) = self { body } else { nil } }
        public var change: MessageChangeRecord? { if case .change(let body) = self { body } else { nil } }
        public var erasure: ErasureRecord? { if case .erasure(let body) = self { body } else { nil } }
        public var account: AccountChangeRecord? { if case .account(let body) = self { body } else { nil } }
    }

    /// Whether the record is a message of its thread (a person's, or the server's about a session): it has its
    /// own seq, `history` lists it and it counts as unread.
    public var isThreadMessage: Bool {
        switch content {
        case .message: true
        case .session(let session): session.isSystemMessage
        default: false
        }
    }

    public var pos: Int64
    public var threadNo: Int64
    public var side: Side
    public var seq: Int64
    public var at: Int64
    public var content: Content

    /// The kind of `content`; nil for a kind this version does not know.
    public var kind: Kind? { content.kind }

    public init(pos: Int64 = 0, threadNo: Int64, side: Side, seq: Int64, at: Int64, _ content: Content) {
        self.pos = pos
        self.threadNo = threadNo
        self.side = side
        self.seq = seq
        self.at = at
        self.content = content
    }
}
