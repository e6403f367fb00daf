import Foundation

// Typed results of the commands an app needs for chat and sessions (Protocol/schemas/*Reply.json, `result`).

/// One thread in the conversation list (`ThreadView`).
public struct ThreadSummary: Codable, Sendable, Hashable {
    public var threadId: String
    public var peerId: String?
    public var peerName: String?
    public var peerOnline: Bool?
    public var lastSeq: Int?
    public var lastPreview: String?
    public var lastMessageAt: Int?
    public var readSeq: Int?
    public var unread: Int?
    public var active: Bool?

    enum CodingKeys: String, CodingKey {
        case unread, active
        case threadId = "thread_id"
        case peerId = "peer_id"
        case peerName = "peer_name"
        case peerOnline = "peer_online"
        case lastSeq = "last_seq"
        case lastPreview = "last_preview"
        case lastMessageAt = "last_message_at"
        case readSeq = "read_seq"
    }
}

/// `threads`: every thread, most recent first, with the badge and your current cursor.
public struct ThreadList: Codable, Sendable, Hashable {
    public var threads: [ThreadSummary]
    public var totalUnread: Int
    public var cursor: Int

    enum CodingKeys: String, CodingKey {
        case threads, cursor
        case totalUnread = "total_unread"
    }
}

/// `history`: one page of messages, newest first.
public struct HistoryPage: Codable, Sendable, Hashable {
    public var messages: [Message]
    public var hasMore: Bool

    enum CodingKeys: String, CodingKey {
        case messages
        case hasMore = "has_more"
    }
}

/// `receipt.delivered` and `thread.read`: the positions and badges after the receipt.
public struct ReceiptResult: Codable, Sendable, Hashable {
    public var threadId: String
    public var deliveredSeq: Int
    public var readSeq: Int
    public var unread: Int
    public var totalUnread: Int

    enum CodingKeys: String, CodingKey {
        case unread
        case threadId = "thread_id"
        case deliveredSeq = "delivered_seq"
        case readSeq = "read_seq"
        case totalUnread = "total_unread"
    }
}

/// `sessions`: one page of video sessions by start.
public struct SessionPage: Codable, Sendable, Hashable {
    public var sessions: [VideoSession]
    public var pendingResolutions: Int
    public var nextCursor: String?

    enum CodingKeys: String, CodingKey {
        case sessions
        case pendingResolutions = "pending_resolutions"
        case nextCursor = "next_cursor"
    }
}

/// `auth.refresh` on the socket: new tokens, and the socket's new end.
public struct AuthRefreshResult: Codable, Sendable, Hashable {
    public var session: AuthSession
    public var expiresAt: Int

    enum CodingKeys: String, CodingKey {
        case session
        case expiresAt = "expires_at"
    }
}

/// `resume`: how many events were replayed, up to which cursor.
public struct ResumeResult: Codable, Sendable, Hashable {
    public var cursor: Int
    public var replayed: Int
}

/// A push device (`DeviceView`).
public struct Device: Codable, Sendable, Hashable {
    public var id: String
    public var platform: String
    public var topic: String?
    public var environment: String?
    public var createdAt: Int
    public var registeredAt: Int

    enum CodingKeys: String, CodingKey {
        case id, platform, topic, environment
        case createdAt = "created_at"
        case registeredAt = "registered_at"
    }
}

/// `GET /v1/me/devices`.
public struct DeviceList: Codable, Sendable, Hashable {
    public var devices: [Device]
}

/// What `POST /v1/me/devices` registers (Protocol/README "Devices").
public enum DeviceRegistration: Sendable, Hashable {
    /// An APNs token in hex, the app's bundle id, and `production` or `sandbox`.
    case apns(token: String, topic: String, environment: String)
    /// A Firebase Cloud Messaging registration token.
    case fcm(token: String)

    var body: JSONValue {
        switch self {
        case .apns(let token, let topic, let environment):
            ["platform": "apns", "token": .string(token), "topic": .string(topic), "environment": .string(environment)]
        case .fcm(let token):
            ["platform": "fcm", "token": .string(token)]
        }
    }
}

/// `POST /v1/me/coach`: the link a client made, with its thread.
public struct CoachLink: Codable, Sendable, Hashable {
    public var clientId: String
    public var coachId: String
    public var threadId: String

    enum CodingKeys: String, CodingKey {
        case clientId = "client_id"
        case coachId = "coach_id"
        case threadId = "thread_id"
    }
}

/// A reply frame: `result` when `ok`, else `error`.
struct ReplyFrame<Result: Decodable>: Decodable {
    var type: String
    var id: String?
    var ok: Bool
    var result: Result?
    var error: SpotterError?
}

/// What every server frame has in common: its type, and a cursor when it is logged, an id when it is a reply.
struct FrameHead: Decodable {
    var type: String
    var id: String?
    var ok: Bool?
    var cursor: Int?
}
