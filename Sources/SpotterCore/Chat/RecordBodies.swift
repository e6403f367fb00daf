import FoundationEssentials

// The body of each kind of log record, as the rules read and make it. `ChatRecord.Content` is the union of them;
// how each is stored in the log's columns is written once, in `ChatRecord+Columns.swift`.

/// A message of a person or a service (`ChatRecord.Kind.message`): it takes its thread's next seq.
public struct MessageRecord: Sendable, Equatable {
    public var kind: MessageKind
    /// The sender's idempotency key: a retry with the same one is the same message.
    public var clientMessageID: String
    /// The text; a meal log's card as JSON (`MealLog`); with `hasAttachments`, an `AttachedText` JSON.
    public var body: String
    public var hasAttachments: Bool
    /// When the sender last edited it (seconds); nil if never. Set on the stored row by the edit's append
    /// (`MessageForgetting`), so `history` and `resume` read the edited text.
    public var editedAt: Int64?
    /// When it was deleted (seconds): the body is empty and the attachments gone; nil while it stands.
    public var deletedAt: Int64?

    public init(kind: MessageKind = .text, clientMessageID: String, body: String, hasAttachments: Bool = false,
                editedAt: Int64? = nil, deletedAt: Int64? = nil) {
        self.kind = kind
        self.clientMessageID = clientMessageID
        self.body = body
        self.hasAttachments = hasAttachments
        self.editedAt = editedAt
        self.deletedAt = deletedAt
    }

    public var isDeleted: Bool { deletedAt != nil }
}

/// A message was edited or deleted (`ChatRecord.Kind.change`): `message.edit` / `message.delete`, an admin's
/// moderation, or an erased account's messages. The record's `side` is the message's sender's; its `seq` the
/// thread's last seq when it was made (it is not a message).
///
/// The record says what happened; the message's own row is rewritten in the same transaction (the edited text,
/// or emptied for a delete: `MessageForgetting`), so every later read of the thread shows it as it now stands,
/// and an older change record of the same message loses its text then too.
public struct MessageChangeRecord: Sendable, Equatable {
    public enum Change: Sendable, Equatable {
        /// The new body, stored as the message's (a text, or an `AttachedText` JSON with `attached`); nil once a
        /// later change of the same message made it forgotten.
        case edit(body: String?, attached: Bool)
        case delete(by: Deleter)
    }

    public enum Deleter: Int64, Sendable, Equatable {
        case sender = 0
        case admin = 1
        /// The sender's account was erased.
        case erasure = 2

        public var wire: String {
            switch self {
            case .sender: "sender"
            case .admin: "admin"
            case .erasure: "erasure"
            }
        }
    }

    /// The changed message's seq.
    public var target: Int64
    public var change: Change
    /// The message was the one the thread's list shows (its preview changes with it).
    public var wasLast: Bool

    public init(target: Int64, change: Change, wasLast: Bool) {
        self.target = target
        self.change = change
        self.wasLast = wasLast
    }

    public var isDelete: Bool { if case .delete = change { true } else { false } }
}

/// A participant's delivered and read positions after they moved (`ChatRecord.Kind.receipt`); the participant
/// is the record's `side`.
public struct ReceiptRecord: Sendable, Equatable {
    public var delivered: Int64
    public var read: Int64
    /// The read position moved (not only the delivered one): the reader's other devices hear of it.
    public var readMoved: Bool

    public init(delivered: Int64, read: Int64, readMoved: Bool) {
        self.delivered = delivered
        self.read = read
        self.readMoved = readMoved
    }
}

/// A thread became writable or stopped being writable (`ChatRecord.Kind.link`): its client picked a coach, or a
/// coach change was decided. The record's `side` is the client.
public struct LinkChangeRecord: Sendable, Equatable {
    public var active: Bool

    public init(active: Bool) {
        self.active = active
    }
}

/// A video session changed (`ChatRecord.Kind.session`). The record's `side` is the side of the participant who
/// made the change, or the coach's when the server did (`byParticipant` false).
public struct SessionRecord: Sendable, Equatable {
    public var sessionID: String
    /// The record is also its thread's system message about the change, with its own seq. Records written
    /// before system messages took a seq are not, and carry the thread's last seq.
    public var isSystemMessage: Bool
    /// A participant made the change (and has read the system message); false: the server did.
    public var byParticipant: Bool
    /// A `SessionRecordBody` as JSON: the session as it now stands, the change, who made it and what it was
    /// before (`SessionRecordBody.init?(_:)` reads it).
    public var json: String

    public init(sessionID: String, isSystemMessage: Bool = true, byParticipant: Bool, json: String) {
        self.sessionID = sessionID
        self.isSystemMessage = isSystemMessage
        self.byParticipant = byParticipant
        self.json = json
    }
}

/// Asks the client to rate their coach (`ChatRecord.Kind.ratingPrompt`, `--ratings`). The record's `side` is the
/// client and its `seq` the thread's last seq (it is not a message).
public enum RatingPromptRecord: Sendable, Equatable {
    /// After the client's `sent`-th message (every 10th).
    case afterMessages(sent: Int64)
    /// After the session `sessionID` completed.
    case afterSession(sessionID: String)
}

/// An admin changed the client's tier (`ChatRecord.Kind.tier`, `--tiers`), logged on the client's current thread
/// so that `resume` replays it. The record's `side` is the client.
public struct TierRecord: Sendable, Equatable {
    /// The new tier's name as stored (`Tier(stored:)` reads it).
    public var tier: String

    public init(tier: String) {
        self.tier = tier
    }
}

/// The client's coaching record changed: a challenge, a check-in, a measurement or a goal (`ChatRecord.Kind.record`),
/// logged on the client's current thread. The record's `side` is the actor's, its `seq` the thread's last seq.
public struct CoachingChangeRecord: Sendable, Equatable {
    /// The changed item's id.
    public var itemID: String?
    /// A `RecordBody` as JSON: the change and the item as it now stands (`RecordBody.init?(_:)` reads it).
    public var json: String

    public init(itemID: String?, json: String) {
        self.itemID = itemID
        self.json = json
    }
}

/// A user's account was erased (`ChatRecord.Kind.erasure`): logged once, on no thread (thread number 0, side coach,
/// seq 0), naming the user. Every thread of theirs keeps its seqs and its other participant's messages; the
/// engines rewrite the user's own messages as deleted, forget their edits' texts, empty a client's coaching record
/// and take their files off the threads in the same transaction (`MessageForgetting`); the purge then takes the
/// bytes off the disk.
public struct ErasureRecord: Sendable, Equatable {
    public var userID: String

    public init(userID: String) {
        self.userID = userID
    }
}
