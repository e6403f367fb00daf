/// The stored form of a record's body: the one place where the log's columns meet the typed bodies, used by both
/// engines (SQLite's `ChatLog`, `PostgresChatLog`) and by the cluster's log stream (`LogStreamCodec`).
///
/// The `log` table holds every kind of record in the same columns: `kind` names the body and `a`, `b`, `ref`,
/// `body` hold its fields, differently per kind:
///
/// | kind           | a                            | b                    | ref                            | body                                |
/// |----------------|------------------------------|----------------------|--------------------------------|-------------------------------------|
/// | `message`      | `MessageKind`                | flags, changed at (1) | client_message_id             | text, `MealLog` or `AttachedText` JSON; '' once deleted |
/// | `receipt`      | delivered seq                | read seq             | "read" if the read seq moved   |                                     |
/// | `link`         | 1: active, 0: ended          |                      |                                |                                     |
/// | `session`      | 1 (`systemMessage`)          | 1: by a participant  | session id                     | `SessionRecordBody` JSON            |
/// | `ratingPrompt` | messages sent (0: a session) |                      | session id (none: messages)    |                                     |
/// | `tier`         |                              |                      | tier name                      |                                     |
/// | `record`       |                              |                      | item id                        | `RecordBody` JSON                   |
/// | `change`       | the changed message's seq    | flags (2)            |                                | an edit's new body; NULL for a delete or once forgotten |
/// | `erasure`      |                              |                      | the erased user's id           |                                     |
/// | `account`      | 1: sessions revoked, 2: profile | when revoked (s) | the user's id                  | family ids (JSON array) or the profile (JSON object); NULL once erased |
///
/// (1) A message's `b`: bit 0 with attachments, bit 1 edited, bit 2 deleted, and from bit 8 up the time of the
///     last edit or the delete in seconds (rows written before edits existed hold 0 or 1, and read the same).
/// (2) A change's `b`: bit 0 the message was its thread's last (the list's preview), bit 1 a delete (else an edit),
///     bit 2 the edit's body is an `AttachedText`, bits 4–5 who deleted (`MessageChangeRecord.Deleter`).
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

        /// A message's `b` flags (see the table above).
        public static let withAttachments: Int64 = 1
        public static let edited: Int64 = 2
        public static let deleted: Int64 = 4
        /// Where the time of a message's last change starts in its `b`.
        public static let changedAtShift: Int64 = 8

        /// A message's `b`: its flags and the time of its last change (clamped to 0…2^54, so the shift cannot
        /// overflow whatever time a caller passes).
        public static func messageFlags(attachments: Bool, editedAt: Int64?, deletedAt: Int64?) -> Int64 {
            var flags: Int64 = attachments ? withAttachments : 0
            if let deletedAt { return deleted | (clampedTime(deletedAt) << changedAtShift) }
            if let editedAt { flags |= edited | (clampedTime(editedAt) << changedAtShift) }
            return flags
        }

        static func clampedTime(_ time: Int64) -> Int64 { min(max(time, 0), 1 << 54) }
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
            let flags = columns.b
            let changedAt = flags >> ChatRecord.Columns.changedAtShift
            let deleted = flags & ChatRecord.Columns.deleted != 0
            self = .message(MessageRecord(
                kind: MessageKind(rawValue: columns.a) ?? .text, clientMessageID: columns.ref ?? "", body: columns.body ?? "",
                hasAttachments: !deleted && flags & ChatRecord.Columns.withAttachments != 0,
                editedAt: !deleted && flags & ChatRecord.Columns.edited != 0 ? changedAt : nil, deletedAt: deleted ? changedAt : nil))
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
        case .change:
            let flags = columns.b
            let change: MessageChangeRecord.Change = flags & 2 != 0
                ? .delete(by: MessageChangeRecord.Deleter(rawValue: (flags >> 4) & 3) ?? .sender)
                : .edit(body: columns.body, attached: flags & 4 != 0)
            self = .change(MessageChangeRecord(target: columns.a, change: change, wasLast: flags & 1 != 0))
        case .erasure:
            self = .erasure(ErasureRecord(userID: columns.ref ?? ""))
        case .account:
            // A change this version does not know (another `a`) is kept as it is, and ignored.
            self = AccountChangeRecord(columns: columns).map { .account($0) } ?? .unknown(columns)
        }
    }

    /// The columns that store this body.
    public var columns: ChatRecord.Columns {
        switch self {
        case .message(let message):
            ChatRecord.Columns(kind: ChatRecord.Kind.message.rawValue, a: message.kind.rawValue,
                               b: ChatRecord.Columns.messageFlags(attachments: message.hasAttachments, editedAt: message.editedAt,
                                                                  deletedAt: message.deletedAt),
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
        case .change(let change):
            switch change.change {
            case .edit(let body, let attached):
                ChatRecord.Columns(kind: ChatRecord.Kind.change.rawValue, a: change.target,
                                   b: (change.wasLast ? 1 : 0) | (attached ? 4 : 0), body: body)
            case .delete(let deleter):
                ChatRecord.Columns(kind: ChatRecord.Kind.change.rawValue, a: change.target,
                                   b: (change.wasLast ? 1 : 0) | 2 | (deleter.rawValue << 4))
            }
        case .erasure(let erasure):
            ChatRecord.Columns(kind: ChatRecord.Kind.erasure.rawValue, ref: erasure.userID)
        case .account(let change):
            change.columns
        case .unknown(let columns):
            columns
        }
    }
}
