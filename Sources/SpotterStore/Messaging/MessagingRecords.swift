import GRDB

/// A message to append to a thread; the store assigns its `seq`.
public struct NewMessage: Sendable, Equatable {
    public var threadID: String
    /// nil for system messages.
    public var senderID: String?
    /// The sender's idempotency id: a retry with the same (thread, sender, id) is a duplicate.
    public var clientMessageID: String
    /// "text", "system" or "meal_log".
    public var kind: String
    public var body: String
    public var createdAt: Int64
    /// What the conversation list shows (the server computes it).
    public var preview: String

    public init(threadID: String, senderID: String?, clientMessageID: String, kind: String, body: String,
                createdAt: Int64, preview: String) {
        self.threadID = threadID
        self.senderID = senderID
        self.clientMessageID = clientMessageID
        self.kind = kind
        self.body = body
        self.createdAt = createdAt
        self.preview = preview
    }
}

/// A message as stored, with its gapless per-thread `seq`.
public struct StoredMessage: Sendable, Equatable {
    public var threadID: String
    public var seq: Int64
    public var senderID: String?
    public var clientMessageID: String
    public var kind: String
    public var body: String
    public var createdAt: Int64

    public init(threadID: String, seq: Int64, senderID: String?, clientMessageID: String, kind: String, body: String,
                createdAt: Int64) {
        self.threadID = threadID
        self.seq = seq
        self.senderID = senderID
        self.clientMessageID = clientMessageID
        self.kind = kind
        self.body = body
        self.createdAt = createdAt
    }

    init(row: Row) {
        self.init(threadID: row["threadId"], seq: row["seq"], senderID: row["senderId"],
                  clientMessageID: row["clientMessageId"], kind: row["kind"], body: row["body"],
                  createdAt: row["createdAt"])
    }
}

/// What `Messaging.insertMessage` did.
public enum InsertOutcome: Sendable, Equatable {
    /// Appended with a new seq.
    case inserted(StoredMessage)
    /// (thread, sender, clientMessageID) existed already: nothing changed; this is the original.
    case duplicate(StoredMessage)

    /// The stored message either way.
    public var message: StoredMessage {
        switch self {
        case .inserted(let message), .duplicate(let message): return message
        }
    }
}

/// A coach–client thread with its latest activity.
public struct ThreadRecord: Sendable, Equatable {
    public var id: String
    public var coachID: String
    public var clientID: String
    public var lastSeq: Int64
    public var lastMessageAt: Int64?
    public var lastPreview: String?
    public var lastSenderID: String?

    public init(id: String, coachID: String, clientID: String, lastSeq: Int64, lastMessageAt: Int64?,
                lastPreview: String?, lastSenderID: String?) {
        self.id = id
        self.coachID = coachID
        self.clientID = clientID
        self.lastSeq = lastSeq
        self.lastMessageAt = lastMessageAt
        self.lastPreview = lastPreview
        self.lastSenderID = lastSenderID
    }

    init(row: Row) {
        self.init(id: row["id"], coachID: row["coachId"], clientID: row["clientId"], lastSeq: row["lastSeq"],
                  lastMessageAt: row["lastMessageAt"], lastPreview: row["lastPreview"],
                  lastSenderID: row["lastSenderId"])
    }
}

/// How far one user has received and read one thread.
public struct ReceiptRecord: Sendable, Equatable {
    public var threadID: String
    public var userID: String
    public var deliveredSeq: Int64
    public var readSeq: Int64

    public init(threadID: String, userID: String, deliveredSeq: Int64, readSeq: Int64) {
        self.threadID = threadID
        self.userID = userID
        self.deliveredSeq = deliveredSeq
        self.readSeq = readSeq
    }
}

/// An event to append to a user's log; the writer assigns its cursor.
public struct NewEvent: Sendable, Equatable {
    public var userID: String
    public var kind: String
    public var payload: String

    public init(userID: String, kind: String, payload: String) {
        self.userID = userID
        self.kind = kind
        self.payload = payload
    }
}

/// One entry of a user's ordered event log.
public struct UserEventRecord: Sendable, Equatable {
    public var userID: String
    public var cursor: Int64
    public var kind: String
    public var payload: String
    public var createdAt: Int64

    public init(userID: String, cursor: Int64, kind: String, payload: String, createdAt: Int64) {
        self.userID = userID
        self.cursor = cursor
        self.kind = kind
        self.payload = payload
        self.createdAt = createdAt
    }

    init(row: Row) {
        self.init(userID: row["userId"], cursor: row["cursor"], kind: row["kind"], payload: row["payload"],
                  createdAt: row["createdAt"])
    }
}

/// One line of a user's conversation list.
public struct ThreadSummary: Sendable, Equatable {
    public var thread: ThreadRecord
    public var peerID: String
    public var peerName: String?
    public var peerLastSeenAt: Int64?
    /// The asking user's receipt in this thread.
    public var readSeq: Int64
    public var deliveredSeq: Int64
    /// The peer's receipt in this thread.
    public var peerReadSeq: Int64
    public var peerDeliveredSeq: Int64
    /// `thread.lastSeq - readSeq`, floored at 0.
    public var unread: Int64

    public init(thread: ThreadRecord, peerID: String, peerName: String?, peerLastSeenAt: Int64?, readSeq: Int64,
                deliveredSeq: Int64, peerReadSeq: Int64, peerDeliveredSeq: Int64, unread: Int64) {
        self.thread = thread
        self.peerID = peerID
        self.peerName = peerName
        self.peerLastSeenAt = peerLastSeenAt
        self.readSeq = readSeq
        self.deliveredSeq = deliveredSeq
        self.peerReadSeq = peerReadSeq
        self.peerDeliveredSeq = peerDeliveredSeq
        self.unread = unread
    }
}

/// A page of a user's event log.
public enum EventPage: Sendable, Equatable {
    /// Events with cursor > after, ascending, at most `limit`.
    case events([UserEventRecord])
    /// `after` is older than what is retained (after < oldest retained cursor - 1): the client must resync.
    case expired(oldestAvailable: Int64)
}

/// Refusals from `Messaging`.
public enum MessagingError: Error, Equatable, Sendable {
    /// No thread has this id.
    case threadNotFound(String)
}
