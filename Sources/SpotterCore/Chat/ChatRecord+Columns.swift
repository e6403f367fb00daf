/// The stored form of a record's body: the one place where the log's columns meet the typed bodies, used by both
/// engines (SQLite's `ChatLog`, `PostgresChatLog`) and by the cluster's log stream (`LogStreamCodec`).
///
/// The `log` table holds every kind of record in the same columns: `kind` names the body and `a`, `b`, `ref`,
/// `body` hold its fields, differently per kind:
///
/// | kind           | a                            | b                    | ref                            | body                                |
/// |----------------|------------------------------|----------------------|--------------------------------|-------------------------------------|
/// | `message`      | `MessageKind`                | 1: with attachments  | client_message_id              | text, `MealLog` or `AttachedText` JSON |
/// | `receipt`      | delivered seq                | read seq             | "read" if the read seq moved   |                                     |
/// | `link`         | 1: active, 0: ended          |                      |                                |                                     |
/// | `session`      | 1 (`systemMessage`)          | 1: by a participant  | session id                     | `SessionRecordBody` JSON            |
/// | `ratingPrompt` | messages sent (0: a session) |                      | session id (none: messages)    |                                     |
/// | `tier`         |                              |                      | tier name                      |                                     |
/// | `record`       |                              |                      | item id                        | `RecordBody` JSON                   |
///
/// Empty cells are 0 or NULL. Every database written since the log began holds rows of this form
/// (`LogFixtureTests` reads one written by main at ceb039e), so the stored form cannot change without a
/// migration of the rows; `LogSQL` writes its conditions on `kind` and `a` from the same definitions.
extension ChatRecord {
    /// The kind-dependent columns of a record as stored.
    public struct Columns: Sendable, Equatable {
        public var kind: Int64
        public var a: Int64
        public var b: Int64
        public var ref: String?
        public var body: String?

        public init(kind: Int64, a: Int64 = 0, b: Int64 = 0, ref: String? = nil, body: String? = nil) {
            self.kind = kind
            self.a = a
            self.b = b
            self.ref = ref
            self.body = body
        }

        /// `a` of a session record that is its thread's system message (records written before system messages
        /// took a seq have 0).
        public static let systemMessage: Int64 = 1
    }

    /// A record read back from its stored columns. Never fails: a value the row should not hold reads as a
    /// defined fallback (a side other than 0 or 1 as the client; see `Content.init(columns:)` for the bodies).
    public init(pos: Int64, threadNo: Int64, side: Int64, seq: Int64, at: Int64, columns: Columns) {
        self.init(pos: pos, threadNo: threadNo, side: Side(rawValue: side) ?? .client, seq: seq, at: at,
                  Content(columns: columns))
    }
}

extension ChatRecord.Content {
    /// The body a row holds. What a row should not hold reads as:
    /// - a `kind` this version does not know: `unknown`, with the columns as they are;
    /// - a message's unknown `MessageKind`: a text; a missing client_message_id or body: empty;
    /// - a flag (`b` of a message or a session, `a` of a link or a session) other than 1: not set;
    /// - a receipt's `ref` other than "read": the read position did not move;
    /// - a tier record without a tier: freemium; a session record without its id or body: empty, a coaching record
    ///   without its body: `{}` (neither decodes, and the rules skip them).
    public init(columns: ChatRecord.Columns) {
        guard let kind = ChatRecord.Kind(rawValue: columns.kind) else {
            self = .unknown(columns)
            return
        }
        switch kind {
        case .message:
            self = .message(MessageRecord(kind: MessageKind(rawValue: columns.a) ?? .text, clientMessageID: columns.ref ?? "",
                                          body: columns.body ?? "", hasAttachments: columns.b == 1))
        case .receipt:
            self = .receipt(ReceiptRecord(delivered: columns.a, read: columns.b, readMoved: columns.ref == "read"))
        case .link:
            self = .link(LinkChangeRecord(active: columns.a == 1))
        case .session:
            self = .session(SessionRecord(sessionID: columns.ref ?? "", isSystemMessage: columns.a == ChatRecord.Columns.systemMessage,
                                          byParticipant: columns.b == 1, json: columns.body ?? ""))
        case .ratingPrompt:
            self = .ratingPrompt(columns.ref.map { .afterSession(sessionID: $0) } ?? .afterMessages(sent: columns.a))
        case .tier:
            self = .tier(TierRecord(tier: columns.ref ?? Tier.freemium.rawValue))
        case .record:
            self = .coaching(CoachingChangeRecord(itemID: columns.ref, json: columns.body ?? "{}"))
        }
    }

    /// The columns that store this body.
    public var columns: ChatRecord.Columns {
        switch self {
        case .message(let message):
            ChatRecord.Columns(kind: ChatRecord.Kind.message.rawValue, a: message.kind.rawValue, b: message.hasAttachments ? 1 : 0,
                               ref: message.clientMessageID, body: message.body)
        case .receipt(let receipt):
            ChatRecord.Columns(kind: ChatRecord.Kind.receipt.rawValue, a: receipt.delivered, b: receipt.read,
                               ref: receipt.readMoved ? "read" : nil)
        case .link(let link):
            ChatRecord.Columns(kind: ChatRecord.Kind.link.rawValue, a: link.active ? 1 : 0)
        case .session(let session):
            ChatRecord.Columns(kind: ChatRecord.Kind.session.rawValue, a: session.isSystemMessage ? ChatRecord.Columns.systemMessage : 0,
                               b: session.byParticipant ? 1 : 0, ref: session.sessionID, body: session.json)
        case .ratingPrompt(.afterMessages(let sent)):
            ChatRecord.Columns(kind: ChatRecord.Kind.ratingPrompt.rawValue, a: sent)
        case .ratingPrompt(.afterSession(let sessionID)):
            ChatRecord.Columns(kind: ChatRecord.Kind.ratingPrompt.rawValue, ref: sessionID)
        case .tier(let tier):
            ChatRecord.Columns(kind: ChatRecord.Kind.tier.rawValue, ref: tier.tier)
        case .coaching(let change):
            ChatRecord.Columns(kind: ChatRecord.Kind.record.rawValue, ref: change.itemID, body: change.json)
        case .unknown(let columns):
            columns
        }
    }
}
