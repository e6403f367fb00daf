// Commands, results and events of messaging on the live socket
// (Protocol/spotter.asyncapi.yaml, Protocol/schemas/).

/// A meal card (seed 002 §6, shown in chat).
public struct MealLog: Codable, Sendable, Equatable {
    public var name: String
    public var ingredients: [String]
    public var calories: Double
    public var proteinG: Double
    public var carbsG: Double
    public var fatsG: Double
    /// `breakfast`, `lunch`, `dinner` or `snack`.
    public var mealType: String
    public var photoRef: String?

    public init(name: String, ingredients: [String], calories: Double, proteinG: Double, carbsG: Double, fatsG: Double,
                mealType: String, photoRef: String?) {
        self.name = name
        self.ingredients = ingredients
        self.calories = calories
        self.proteinG = proteinG
        self.carbsG = carbsG
        self.fatsG = fatsG
        self.mealType = mealType
        self.photoRef = photoRef
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case name, ingredients, calories
        case proteinG = "protein_g"
        case carbsG = "carbs_g"
        case fatsG = "fats_g"
        case mealType = "meal_type"
        case photoRef = "photo_ref"
    }
}

/// `message.send`
public struct SendMessageCommand: Codable, Sendable, Equatable {
    public var threadId: String?
    /// The client's idempotency key: the same id again returns the original message.
    public var clientMessageId: String?
    /// `text` (default) or `meal_log`.
    public var kind: String?
    public var text: String?
    public var meal: MealLog?
    /// Ids of files uploaded to this thread (`POST /v1/threads/{id}/attachments`), at most 10; `text` may then be
    /// empty.
    public var attachments: [String]?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case kind, text, meal, attachments
        case threadId = "thread_id"
        case clientMessageId = "client_message_id"
    }
}

/// An uploaded attachment (`POST /v1/threads/{id}/attachments`): its id (the file's SHA-256), type and size, and
/// where its thumbnail is read when it has one (a JPEG or PNG that could be read: a JPEG of at most 256 × 256).
public struct AttachmentView: Codable, Sendable, Equatable {
    public var id: String
    public var type: String
    public var bytes: Int
    public var thumbnailURL: String?
    public init(id: String, type: String, bytes: Int, thumbnailURL: String? = nil) {
        self.id = id
        self.type = type
        self.bytes = bytes
        self.thumbnailURL = thumbnailURL
    }

    /// The thumbnail's path of attachment `id` of `threadID`.
    public static func thumbnailURL(threadID: String, id: String) -> String {
        "/v1/threads/\(threadID)/attachments/\(id)/thumbnail"
    }

    enum CodingKeys: String, CodingKey {
        case id, type, bytes
        case thumbnailURL = "thumbnail_url"
    }
}

/// A text message with attachments, as its log record keeps it (`MessageRecord.hasAttachments`).
public struct AttachedText: Codable, Sendable, Equatable {
    public var text: String
    public var attachments: [AttachmentView]
    public init(text: String, attachments: [AttachmentView]) {
        self.text = text
        self.attachments = attachments
    }
}

/// A message as every participant sees it.
public struct MessageView: Codable, Sendable, Equatable {
    public var threadId: String
    public var seq: Int64
    /// nil for system messages.
    public var senderId: String?
    public var clientMessageId: String
    public var kind: String
    public var text: String?
    public var meal: MealLog?
    public var createdAt: Int64
    /// A system message about a video session: the session's id.
    public var sessionId: String?
    /// Files sent with a text message (download: `GET /v1/threads/{thread_id}/attachments/{id}`).
    public var attachments: [AttachmentView]?
    /// When the sender last edited it (absent: never).
    public var editedAt: Int64?
    /// When it was deleted: a tombstone, with no `text`, `meal` or `attachments` (absent: it stands).
    public var deletedAt: Int64?

    public init(threadId: String, seq: Int64, senderId: String?, clientMessageId: String, kind: String, text: String?,
                meal: MealLog?, createdAt: Int64, sessionId: String? = nil, attachments: [AttachmentView]? = nil,
                editedAt: Int64? = nil, deletedAt: Int64? = nil) {
        self.threadId = threadId
        self.seq = seq
        self.senderId = senderId
        self.clientMessageId = clientMessageId
        self.kind = kind
        self.text = text
        self.meal = meal
        self.createdAt = createdAt
        self.sessionId = sessionId
        self.attachments = attachments
        self.editedAt = editedAt
        self.deletedAt = deletedAt
    }

    enum CodingKeys: String, CodingKey {
        case seq, kind, text, meal, attachments
        case threadId = "thread_id"
        case senderId = "sender_id"
        case clientMessageId = "client_message_id"
        case createdAt = "created_at"
        case sessionId = "session_id"
        case editedAt = "edited_at"
        case deletedAt = "deleted_at"
    }
}

/// Which receipt a `ReceiptCommand` carries: its command `type`.
public protocol ReceiptMark: Sendable {
    static var type: String { get }
}

/// `receipt.delivered`
public enum Delivered: ReceiptMark {
    public static let type = "receipt.delivered"
}

/// `thread.read`
public enum Read: ReceiptMark {
    public static let type = "thread.read"
}

/// `receipt.delivered` and `thread.read`: up to which `seq`.
public struct ReceiptCommand<Mark: ReceiptMark>: Codable, Sendable, Equatable {
    public var threadId: String?
    public var seq: Int64?
    enum CodingKeys: String, CodingKey, CaseIterable {
        case seq
        case threadId = "thread_id"
    }
}

/// `history`: page backwards from `before_seq` (newest first), at most 100.
public struct HistoryCommand: Codable, Sendable, Equatable {
    public var threadId: String?
    public var beforeSeq: Int64?
    public var limit: Int?
    enum CodingKeys: String, CodingKey, CaseIterable {
        case limit
        case threadId = "thread_id"
        case beforeSeq = "before_seq"
    }
}

/// `typing` (ephemeral): only names the thread.
public struct TypingCommand: Codable, Sendable, Equatable {
    public var threadId: String?
    enum CodingKeys: String, CodingKey, CaseIterable { case threadId = "thread_id" }
}

/// `resume`: everything after `cursor`, then `live`.
public struct ResumeCommand: Codable, Sendable, Equatable {
    public var cursor: Int64?
    enum CodingKeys: String, CodingKey, CaseIterable { case cursor }
}

public struct HistoryResult: Codable, Sendable, Equatable {
    public var messages: [MessageView]
    public var hasMore: Bool
    public init(messages: [MessageView], hasMore: Bool) {
        self.messages = messages
        self.hasMore = hasMore
    }
    enum CodingKeys: String, CodingKey {
        case messages
        case hasMore = "has_more"
    }
}

/// One conversation in `threads`.
public struct ThreadView: Codable, Sendable, Equatable {
    public var threadId: String
    public var peerId: String
    public var peerName: String?
    /// The peer erased their account: `peer_name` is null and the app shows its own words for a deleted account.
    public var peerErased: Bool
    public var peerOnline: Bool
    public var peerLastSeenAt: Int64?
    public var lastSeq: Int64
    public var lastMessageAt: Int64?
    public var lastPreview: String?
    public var lastSenderId: String?
    /// Your receipts: draw the "NEW messages" separator after `read_seq`.
    public var readSeq: Int64
    public var deliveredSeq: Int64
    /// The peer's receipts: ✓ delivered, ✓✓ read.
    public var peerReadSeq: Int64
    public var peerDeliveredSeq: Int64
    public var unread: Int64
    /// False for a client's thread with a former coach: readable, not writable.
    public var active: Bool

    public init(threadId: String, peerId: String, peerName: String?, peerOnline: Bool, peerLastSeenAt: Int64?, lastSeq: Int64,
                lastMessageAt: Int64?, lastPreview: String?, lastSenderId: String?, readSeq: Int64, deliveredSeq: Int64,
                peerReadSeq: Int64, peerDeliveredSeq: Int64, unread: Int64, active: Bool, peerErased: Bool = false) {
        self.threadId = threadId
        self.peerId = peerId
        self.peerName = peerName
        self.peerErased = peerErased
        self.peerOnline = peerOnline
        self.peerLastSeenAt = peerLastSeenAt
        self.lastSeq = lastSeq
        self.lastMessageAt = lastMessageAt
        self.lastPreview = lastPreview
        self.lastSenderId = lastSenderId
        self.readSeq = readSeq
        self.deliveredSeq = deliveredSeq
        self.peerReadSeq = peerReadSeq
        self.peerDeliveredSeq = peerDeliveredSeq
        self.unread = unread
        self.active = active
    }

    enum CodingKeys: String, CodingKey {
        case unread, active
        case threadId = "thread_id"
        case peerId = "peer_id"
        case peerName = "peer_name"
        case peerErased = "peer_erased"
        case peerOnline = "peer_online"
        case peerLastSeenAt = "peer_last_seen_at"
        case lastSeq = "last_seq"
        case lastMessageAt = "last_message_at"
        case lastPreview = "last_preview"
        case lastSenderId = "last_sender_id"
        case readSeq = "read_seq"
        case deliveredSeq = "delivered_seq"
        case peerReadSeq = "peer_read_seq"
        case peerDeliveredSeq = "peer_delivered_seq"
    }
}

public struct ThreadsResult: Codable, Sendable, Equatable {
    public var threads: [ThreadView]
    public var totalUnread: Int64
    /// Your latest event cursor: resume from here after reconnecting.
    public var cursor: Int64
    public init(threads: [ThreadView], totalUnread: Int64, cursor: Int64) {
        self.threads = threads
        self.totalUnread = totalUnread
        self.cursor = cursor
    }
    enum CodingKeys: String, CodingKey {
        case threads, cursor
        case totalUnread = "total_unread"
    }
}

/// Result of `thread.read` and `receipt.delivered`.
public struct ReceiptResult: Codable, Sendable, Equatable {
    public var threadId: String
    public var deliveredSeq: Int64
    public var readSeq: Int64
    public var unread: Int64
    public var totalUnread: Int64
    public init(threadId: String, deliveredSeq: Int64, readSeq: Int64, unread: Int64, totalUnread: Int64) {
        self.threadId = threadId
        self.deliveredSeq = deliveredSeq
        self.readSeq = readSeq
        self.unread = unread
        self.totalUnread = totalUnread
    }
    enum CodingKeys: String, CodingKey {
        case unread
        case threadId = "thread_id"
        case deliveredSeq = "delivered_seq"
        case readSeq = "read_seq"
        case totalUnread = "total_unread"
    }
}

// MARK: - Events in the per-user log (each carries its `cursor` when pushed)

/// `message`: a new message in one of your threads (yours included, for your other devices), with your
/// unread count in that thread and in total when the event was sent (a message you wrote marks the
/// thread read for you: 0). A message from the peer also means they have received and read the thread
/// up to its seq.
public struct MessageEvent: Codable, Sendable, Equatable {
    public var type = "message"
    public var message: MessageView
    public var unread: Int64?
    public var totalUnread: Int64?
    public init(message: MessageView, unread: Int64? = nil, totalUnread: Int64? = nil) {
        self.message = message
        self.unread = unread
        self.totalUnread = totalUnread
    }
    enum CodingKeys: String, CodingKey {
        case type, message, unread
        case totalUnread = "total_unread"
    }
}

/// `receipt`: the peer's delivered/read position in a thread moved.
public struct ReceiptEvent: Codable, Sendable, Equatable {
    public var type = "receipt"
    public var threadId: String
    public var userId: String
    public var deliveredSeq: Int64
    public var readSeq: Int64
    public init(threadId: String, userId: String, deliveredSeq: Int64, readSeq: Int64) {
        self.threadId = threadId
        self.userId = userId
        self.deliveredSeq = deliveredSeq
        self.readSeq = readSeq
    }
    enum CodingKeys: String, CodingKey {
        case type
        case threadId = "thread_id"
        case userId = "user_id"
        case deliveredSeq = "delivered_seq"
        case readSeq = "read_seq"
    }
}

/// `unread`: your unread count in a thread and in total changed (tab badge).
public struct UnreadEvent: Codable, Sendable, Equatable {
    public var type = "unread"
    public var threadId: String
    public var unread: Int64
    public var totalUnread: Int64
    public var readSeq: Int64
    public init(threadId: String, unread: Int64, totalUnread: Int64, readSeq: Int64) {
        self.threadId = threadId
        self.unread = unread
        self.totalUnread = totalUnread
        self.readSeq = readSeq
    }
    enum CodingKeys: String, CodingKey {
        case type, unread
        case threadId = "thread_id"
        case totalUnread = "total_unread"
        case readSeq = "read_seq"
    }
}

/// `thread`: a conversation appeared or its state changed (a coach was
/// picked, or a coach change was approved). Logged. `active` false means the
/// thread stays readable but takes no new messages or typing.
public struct ThreadEvent: Codable, Sendable, Equatable {
    public var type = "thread"
    public var threadId: String
    public var peerId: String
    public var peerName: String?
    public var active: Bool
    public init(threadId: String, peerId: String, peerName: String?, active: Bool) {
        self.threadId = threadId
        self.peerId = peerId
        self.peerName = peerName
        self.active = active
    }
    enum CodingKeys: String, CodingKey {
        case type, active
        case threadId = "thread_id"
        case peerId = "peer_id"
        case peerName = "peer_name"
    }
    /// Encodes `peer_name` as null when there is none: every field is always present.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(type, forKey: .type)
        try container.encode(threadId, forKey: .threadId)
        try container.encode(peerId, forKey: .peerId)
        try container.encode(peerName, forKey: .peerName)
        try container.encode(active, forKey: .active)
    }
}

// MARK: - Ephemeral events (not logged, no cursor)

/// `presence`: a linked peer came online or went offline.
public struct PresenceEvent: Codable, Sendable, Equatable {
    public var type = "presence"
    public var userId: String
    public var online: Bool
    public var lastSeenAt: Int64?
    public init(userId: String, online: Bool, lastSeenAt: Int64?) {
        self.userId = userId
        self.online = online
        self.lastSeenAt = lastSeenAt
    }
    enum CodingKeys: String, CodingKey {
        case type, online
        case userId = "user_id"
        case lastSeenAt = "last_seen_at"
    }
}

/// `typing`: the peer is typing in a thread; hide it after `expires_in` seconds unless renewed.
public struct TypingEvent: Codable, Sendable, Equatable {
    public var type = "typing"
    public var threadId: String
    public var userId: String
    public var expiresIn: Int
    public init(threadId: String, userId: String, expiresIn: Int) {
        self.threadId = threadId
        self.userId = userId
        self.expiresIn = expiresIn
    }
    enum CodingKeys: String, CodingKey {
        case type
        case threadId = "thread_id"
        case userId = "user_id"
        case expiresIn = "expires_in"
    }
}

/// `live`: the replay after `resume` is complete; what follows is live.
public struct LiveEvent: Codable, Sendable, Equatable {
    public var type = "live"
    public var cursor: Int64
    public init(cursor: Int64) { self.cursor = cursor }
}
