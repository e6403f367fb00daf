#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// Taking a message back (Protocol/README "Editing and deleting messages"): `message.edit` and `message.delete`
// on the socket, and the `message.edited` / `message.deleted` events both participants' devices get.

/// `message.edit` (the sender, within `--edit-window`): the text of their message `seq` becomes `text`.
public struct MessageEditCommand: Codable, Sendable, Equatable, KnownFields {
    public init(threadId: String? = nil, seq: Int64? = nil, text: String? = nil) {
        self.threadId = threadId
        self.seq = seq
        self.text = text
    }
    public var threadId: String?
    public var seq: Int64?
    public var text: String?
    enum CodingKeys: String, CodingKey, CaseIterable {
        case seq, text
        case threadId = "thread_id"
    }
    public static let fieldNames = Set(CodingKeys.allCases.map(\.stringValue))
}

/// `message.delete` (the sender, at any time): their message `seq` becomes a tombstone; its files go with it.
public struct MessageDeleteCommand: Codable, Sendable, Equatable, KnownFields {
    public init(threadId: String? = nil, seq: Int64? = nil) {
        self.threadId = threadId
        self.seq = seq
    }
    public var threadId: String?
    public var seq: Int64?
    enum CodingKeys: String, CodingKey, CaseIterable {
        case seq
        case threadId = "thread_id"
    }
    public static let fieldNames = Set(CodingKeys.allCases.map(\.stringValue))
}

extension MessageEditCommand: SocketCommandBody {
    public static let type = "message.edit"
    public func checkRanges() throws(APIError) {
        try WireRange.check(seq, in: WireRange.position, field: "seq")
    }
}

extension MessageDeleteCommand: SocketCommandBody {
    public static let type = "message.delete"
    public func checkRanges() throws(APIError) {
        try WireRange.check(seq, in: WireRange.position, field: "seq")
    }
}

/// `message.edited` (logged; to both participants): the message `seq` now reads `text` (and keeps its
/// `attachments`).
public struct MessageEditedEvent: Codable, Sendable, Equatable {
    public var type = "message.edited"
    public var threadId: String
    public var seq: Int64
    public var text: String
    public var attachments: [AttachmentView]?
    public var editedAt: Int64
    public init(threadId: String, seq: Int64, text: String, attachments: [AttachmentView]?, editedAt: Int64) {
        self.threadId = threadId
        self.seq = seq
        self.text = text
        self.attachments = attachments
        self.editedAt = editedAt
    }
    enum CodingKeys: String, CodingKey {
        case type, seq, text, attachments
        case threadId = "thread_id"
        case editedAt = "edited_at"
    }
}

/// `message.deleted` (logged; to both participants): the message `seq` is a tombstone. `by`: `sender`, `admin`
/// (moderation) or `erasure` (the sender's account was erased).
public struct MessageDeletedEvent: Codable, Sendable, Equatable {
    public var type = "message.deleted"
    public var threadId: String
    public var seq: Int64
    public var by: String
    public var deletedAt: Int64
    public init(threadId: String, seq: Int64, by: String, deletedAt: Int64) {
        self.threadId = threadId
        self.seq = seq
        self.by = by
        self.deletedAt = deletedAt
    }
    enum CodingKeys: String, CodingKey {
        case type, seq, by
        case threadId = "thread_id"
        case deletedAt = "deleted_at"
    }
}

/// `user.erased` (logged; to the other participant of each thread): the peer's account was erased. Their messages
/// read as tombstones (`deleted_at`), their name is gone (the thread's `peer_name` is absent); the thread, its seqs
/// and your own messages stay.
public struct UserErasedEvent: Codable, Sendable, Equatable {
    public var type = "user.erased"
    public var threadId: String
    public var userId: String
    public init(threadId: String, userId: String) {
        self.threadId = threadId
        self.userId = userId
    }
    enum CodingKeys: String, CodingKey {
        case type
        case threadId = "thread_id"
        case userId = "user_id"
    }

    public var jsonText: String { JSONText.encoder.encodeToString(self) }
}
