import Foundation

// The client's own wire types, written from Protocol/schemas (the server's SpotterProtocol module imports
// FoundationEssentials, which Apple platforms do not have: see README.md, "Wire types"). `WireDriftTests` decodes every
// server frame of Protocol/examples with them and checks their keys against Protocol/schemas, so they cannot drift
// silently. Every type spells its wire keys; fields the schema marks optional are optional here.

/// A user as the server shows them (`UserView`).
public struct User: Codable, Sendable, Hashable {
    public var id: String
    public var role: String
    public var fullName: String?
    public var email: String?
    public var phone: String?
    public var language: String
    public var onboardingCompleted: Bool
    public var timeZone: String
    public var avatarURL: String?
    public var erasedAt: Int?

    enum CodingKeys: String, CodingKey {
        case id, role, email, phone, language
        case fullName = "full_name"
        case onboardingCompleted = "onboarding_completed"
        case timeZone = "time_zone"
        case avatarURL = "avatar_url"
        case erasedAt = "erased_at"
    }
}

/// A signed-in session: what sign-up, sign-in and refresh answer (`SessionResponse`).
public struct AuthSession: Codable, Sendable, Hashable {
    public var accessToken: String
    public var tokenType: String
    public var expiresIn: Int
    public var refreshToken: String
    public var user: User

    enum CodingKeys: String, CodingKey {
        case user
        case accessToken = "access_token"
        case tokenType = "token_type"
        case expiresIn = "expires_in"
        case refreshToken = "refresh_token"
    }

    public var tokens: Tokens { Tokens(accessToken: accessToken, refreshToken: refreshToken) }
}

/// The two tokens of a session. Keep them in the Keychain: this client never writes them to its persistence.
public struct Tokens: Sendable, Hashable {
    public var accessToken: String
    public var refreshToken: String
    public init(accessToken: String, refreshToken: String) {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
    }
}

/// A chat message (`MessageView`). `meal` and `attachments` are kept as JSON.
public struct Message: Codable, Sendable, Hashable {
    public var threadId: String
    public var seq: Int
    public var senderId: String?
    public var clientMessageId: String
    public var kind: String
    public var text: String?
    public var meal: JSONValue?
    public var createdAt: Int
    public var sessionId: String?
    public var attachments: [JSONValue]?
    public var editedAt: Int?
    public var deletedAt: Int?

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

/// What a send carries: a text, or a meal card (`MealLog`, as JSON).
public enum MessageBody: Sendable, Hashable, Codable {
    case text(String)
    case meal(JSONValue)

    var fields: [String: JSONValue] {
        switch self {
        case .text(let text): ["text": .string(text)]
        case .meal(let meal): ["kind": "meal_log", "meal": meal]
        }
    }
}

/// The first frame of every socket (`HelloEvent`).
public struct Hello: Codable, Sendable, Hashable {
    public var type: String
    public var `protocol`: String
    public var user: User
    public var expiresAt: Int
    public var cursor: Int

    enum CodingKeys: String, CodingKey {
        case type, `protocol`, user, cursor
        case expiresAt = "expires_at"
    }
}

/// A message in one of your threads, yours included (`MessageEvent`).
public struct MessageEvent: Codable, Sendable, Hashable {
    public var type: String
    public var cursor: Int
    public var message: Message
    public var unread: Int
    public var totalUnread: Int

    enum CodingKeys: String, CodingKey {
        case type, cursor, message, unread
        case totalUnread = "total_unread"
    }
}

/// The peer's positions moved: ✓ up to `deliveredSeq`, ✓✓ up to `readSeq` (`ReceiptEvent`).
public struct ReceiptEvent: Codable, Sendable, Hashable {
    public var type: String
    public var cursor: Int
    public var threadId: String
    public var userId: String
    public var deliveredSeq: Int
    public var readSeq: Int

    enum CodingKeys: String, CodingKey {
        case type, cursor
        case threadId = "thread_id"
        case userId = "user_id"
        case deliveredSeq = "delivered_seq"
        case readSeq = "read_seq"
    }
}

/// You read a thread on another device (`UnreadEvent`).
public struct UnreadEvent: Codable, Sendable, Hashable {
    public var type: String
    public var cursor: Int
    public var threadId: String
    public var unread: Int
    public var totalUnread: Int
    public var readSeq: Int

    enum CodingKeys: String, CodingKey {
        case type, cursor, unread
        case threadId = "thread_id"
        case totalUnread = "total_unread"
        case readSeq = "read_seq"
    }
}

/// A coach link was created or changed (`ThreadEvent`).
public struct ThreadEvent: Codable, Sendable, Hashable {
    public var type: String
    public var cursor: Int
    public var threadId: String
    public var peerId: String
    public var peerName: String?
    public var active: Bool

    enum CodingKeys: String, CodingKey {
        case type, cursor, active
        case threadId = "thread_id"
        case peerId = "peer_id"
        case peerName = "peer_name"
    }
}

/// A linked peer came online or went offline (`PresenceEvent`, not logged).
public struct PresenceEvent: Codable, Sendable, Hashable {
    public var type: String
    public var userId: String
    public var online: Bool
    public var lastSeenAt: Int?

    enum CodingKeys: String, CodingKey {
        case type, online
        case userId = "user_id"
        case lastSeenAt = "last_seen_at"
    }
}

/// The peer is typing (`TypingEvent`, not logged).
public struct TypingEvent: Codable, Sendable, Hashable {
    public var type: String
    public var threadId: String
    public var userId: String
    public var expiresIn: Int

    enum CodingKeys: String, CodingKey {
        case type
        case threadId = "thread_id"
        case userId = "user_id"
        case expiresIn = "expires_in"
    }
}

/// A video session changed (`SessionEvent`): the session and the thread's system message stay JSON.
public struct SessionEvent: Codable, Sendable, Hashable {
    public var type: String
    public var cursor: Int
    public var change: String
    public var session: VideoSession
    public var message: Message?
    public var unread: Int?
    public var totalUnread: Int?

    enum CodingKeys: String, CodingKey {
        case type, cursor, change, session, message, unread
        case totalUnread = "total_unread"
    }
}

/// A video session (`SessionView`): the fields an app's calendar needs (the others are not decoded).
public struct VideoSession: Codable, Sendable, Hashable {
    public var id: String
    public var threadId: String
    public var coachId: String
    public var clientId: String
    public var start: Int
    public var durationMinutes: Int
    public var purpose: String
    public var meetURL: String?
    public var status: String
    public var proposedBy: String?
    public var proposedStart: Int?

    enum CodingKeys: String, CodingKey {
        case id, start, purpose, status
        case threadId = "thread_id"
        case coachId = "coach_id"
        case clientId = "client_id"
        case durationMinutes = "duration_minutes"
        case meetURL = "meet_url"
        case proposedBy = "proposed_by"
        case proposedStart = "proposed_start"
    }
}

/// `auth.expiring`: the socket's token ends at `expiresAt`.
public struct AuthExpiringEvent: Codable, Sendable, Hashable {
    public var type: String
    public var expiresAt: Int
    public var secondsLeft: Int

    enum CodingKeys: String, CodingKey {
        case type
        case expiresAt = "expires_at"
        case secondsLeft = "seconds_left"
    }
}
