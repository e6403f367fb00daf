import Foundation
import SpotterProtocol

// The wire types the client shares with the server: SpotterProtocol's own `Codable` types, the ones the server
// encodes every frame and body with (README.md, "Wire types"). The names below are what an app sees; each is the
// server's type, or (for the logged events) the server's type with the `cursor` the server adds to each frame.

/// A user as the server shows them (`UserView`).
public typealias User = UserView
/// A signed-in session: what sign-up, sign-in and refresh answer (`SessionResponse`).
public typealias AuthSession = SessionResponse
/// A chat message (`MessageView`): `seq` and times are `Int64`, as on the server.
public typealias Message = MessageView
/// The first frame of every socket (`HelloEvent`).
public typealias Hello = HelloEvent
/// A video session (`SessionView`).
public typealias VideoSession = SessionView
/// One thread in the conversation list (`ThreadView`).
public typealias ThreadSummary = ThreadView
/// `threads`: every thread, most recent first, with the badge and your current cursor (`ThreadsResult`).
public typealias ThreadList = ThreadsResult
/// `history`: one page of messages, newest first (`HistoryResult`).
public typealias HistoryPage = HistoryResult
/// `sessions`: one page of video sessions by start (`SessionsResult`).
public typealias SessionPage = SessionsResult
/// `auth.refresh` on the socket: new tokens, and the socket's new end (`SocketRefreshResult`).
public typealias AuthRefreshResult = SocketRefreshResult
/// A push device (`DeviceView`).
public typealias Device = DeviceView
/// `POST /v1/me/coach`: the link a client made, with its thread (`LinkView`).
public typealias CoachLink = LinkView
/// `GET /v1/me/devices`.
public typealias DeviceList = SpotterProtocol.DeviceList
/// `receipt.delivered` and `thread.read`: the positions and badges after the receipt.
public typealias ReceiptResult = SpotterProtocol.ReceiptResult
/// A meal card (`MealLog`), as a message's `meal`.
public typealias MealLog = SpotterProtocol.MealLog
/// A file sent with a message (`AttachmentView`).
public typealias AttachmentView = SpotterProtocol.AttachmentView
/// The server's error codes (Protocol/errors.md): `SpotterError.errorCode`.
public typealias ErrorCode = SpotterProtocol.ErrorCode

/// A linked peer came online or went offline (not logged).
public typealias PresenceEvent = SpotterProtocol.PresenceEvent
/// The peer is typing (not logged).
public typealias TypingEvent = SpotterProtocol.TypingEvent
/// `auth.expiring`: the socket's token ends at `expiresAt`.
public typealias AuthExpiringEvent = SpotterProtocol.AuthExpiringEvent

/// A message in one of your threads, yours included, with its cursor.
public typealias MessageEvent = Logged<SpotterProtocol.MessageEvent>
/// The peer's positions moved: ✓ up to `deliveredSeq`, ✓✓ up to `readSeq`.
public typealias ReceiptEvent = Logged<SpotterProtocol.ReceiptEvent>
/// You read a thread on another device.
public typealias UnreadEvent = Logged<SpotterProtocol.UnreadEvent>
/// A coach link was created or changed.
public typealias ThreadEvent = Logged<SpotterProtocol.ThreadEvent>
/// A video session changed.
public typealias SessionEvent = Logged<SpotterProtocol.SessionEvent>

/// An event of the user's log as it arrives: the server's event type, and the `cursor` the server frames it with
/// (the server's types leave the cursor out: one event is logged once and framed with each reader's position).
/// Its fields read as the event's own (`event.message.seq`, `receipt.readSeq`).
@dynamicMemberLookup
public struct Logged<Event> {
    /// The event's position in the user's log.
    public var cursor: Int
    public var event: Event

    public init(cursor: Int, event: Event) {
        self.cursor = cursor
        self.event = event
    }

    public subscript<Value>(dynamicMember keyPath: KeyPath<Event, Value>) -> Value {
        event[keyPath: keyPath]
    }

    enum CodingKeys: String, CodingKey { case cursor }
}

extension Logged: Sendable where Event: Sendable {}
extension Logged: Equatable where Event: Equatable {}

extension Logged: Decodable where Event: Decodable {
    /// The event's fields and `cursor`, from the one frame.
    public init(from decoder: any Decoder) throws {
        event = try Event(from: decoder)
        cursor = try decoder.container(keyedBy: CodingKeys.self).decode(Int.self, forKey: .cursor)
    }
}

extension Logged: Encodable where Event: Encodable {
    /// One object, as the server frames it: the event's fields and `cursor`.
    public func encode(to encoder: any Encoder) throws {
        try event.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(cursor, forKey: .cursor)
    }
}

extension SessionResponse {
    /// The two tokens of the session (keep them in the Keychain).
    public var tokens: Tokens { Tokens(accessToken: accessToken, refreshToken: refreshToken) }
}
