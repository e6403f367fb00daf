#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// The WebSocket envelope: JSON text frames. A client command carries an `id`
// that the reply echoes; events carry no id.

/// A reply: `{"type":"reply","id":"c1","ok":true,"result":{…}}` or with `"ok":false,"error":{…}`.
public enum Reply {
    /// The success reply, with `result` already encoded as a JSON value (object, array, …).
    public static func ok(id: String?, resultJSON: String) -> String {
        "{\"type\":\"reply\",\"id\":\(jsonStringOrNull(id)),\"ok\":true,\"result\":\(resultJSON)}"
    }

    /// The error reply; `errorJSON` is the `{"code":…,"message":…}` object.
    public static func error(id: String?, errorJSON: String) -> String {
        "{\"type\":\"reply\",\"id\":\(jsonStringOrNull(id)),\"ok\":false,\"error\":\(errorJSON)}"
    }
}

/// `auth.expiring`: sent once, shortly before the connection's access token expires.
public struct AuthExpiringEvent: Codable, Sendable, Equatable {
    public var type = "auth.expiring"
    public var expiresAt: Int64
    public var secondsLeft: Int
    public init(expiresAt: Int64, secondsLeft: Int) {
        self.expiresAt = expiresAt
        self.secondsLeft = secondsLeft
    }
    enum CodingKeys: String, CodingKey {
        case type
        case expiresAt = "expires_at"
        case secondsLeft = "seconds_left"
    }
}

/// `hello`: the first frame on `/v1/ws`, telling the client who it is and until when.
public struct HelloEvent: Codable, Sendable, Equatable {
    public var type = "hello"
    public var protocolVersion = "spotter.v1"
    public var user: UserView
    public var expiresAt: Int64
    /// Your latest event cursor when the socket opened: events after it
    /// arrive live; to catch up from an older one, send `resume`.
    public var cursor: Int64
    public init(user: UserView, expiresAt: Int64, cursor: Int64) {
        self.user = user
        self.expiresAt = expiresAt
        self.cursor = cursor
    }
    enum CodingKeys: String, CodingKey {
        case type, user, cursor
        case protocolVersion = "protocol"
        case expiresAt = "expires_at"
    }
}

/// Result of `auth.refresh` on a socket: the new tokens, and the socket's new expiry.
public struct SocketRefreshResult: Codable, Sendable, Equatable {
    public var session: SessionResponse
    public var expiresAt: Int64
    public init(session: SessionResponse, expiresAt: Int64) {
        self.session = session
        self.expiresAt = expiresAt
    }
    enum CodingKeys: String, CodingKey {
        case session
        case expiresAt = "expires_at"
    }
}

/// WebSocket close codes Spotter defines (4000–4999 belong to applications).
public enum SpotterCloseCode {
    /// The access token expired and was not refreshed: sign in or refresh, then reconnect.
    public static let tokenExpired: UInt16 = 4001
    /// The session was revoked (signed out elsewhere, or a refresh token was reused).
    public static let sessionRevoked: UInt16 = 4003
    /// The account was erased (`DELETE /v1/me`, or an admin's `DELETE /v1/admin/users/{id}`): do not reconnect;
    /// forget the account's local data.
    public static let accountErased: UInt16 = 4004
}

/// A JSON string literal, or `null`.
func jsonStringOrNull(_ text: String?) -> String {
    guard let text else { return "null" }
    return JSONText.string(text)
}
