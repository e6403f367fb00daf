import Foundation

/// A typed error: the server's (`code` is stable, act on it; `message` is for people, in the language the client
/// asked for — `SpotterConfiguration.language` — else the user's saved one), or one of this client's own:
/// `connection_lost`, `closed`, `timeout`, `revoked`, `signed_out`, `bad_response`, `tls_failed` (wss://: the server's
/// certificate was not accepted, or its handshake did not finish; the message says why).
public struct SpotterError: Error, Sendable, Hashable, Codable, LocalizedError, CustomStringConvertible {
    /// The stable code (Protocol/errors.md).
    public var code: String
    /// For people: English or Arabic, as the server wrote it.
    public var message: String
    /// The request field at fault (a dotted path when nested), when there is one.
    public var field: String?
    /// Seconds to wait before trying again (`rate_limited`, `server_busy`, `unavailable`).
    public var retryAfter: Int?
    /// The HTTP status, for errors of HTTP calls (nil on the socket).
    public var status: Int?

    public init(code: String, message: String, field: String? = nil, retryAfter: Int? = nil, status: Int? = nil) {
        self.code = code
        self.message = message
        self.field = field
        self.retryAfter = retryAfter
        self.status = status
    }

    enum CodingKeys: String, CodingKey {
        case code, message, field
        case retryAfter = "retry_after"
        case status
    }

    /// Codes worth trying again (with the same `client_message_id` for a send) after `retryAfter` seconds.
    public static let retryableCodes: Set<String> = ["rate_limited", "server_busy", "unavailable", "internal_error"]

    /// The server's code as the server's own `ErrorCode` (nil for this client's own codes: `connection_lost`, …).
    public var errorCode: ErrorCode? { ErrorCode(rawValue: code) }

    /// Trying again later may succeed; `retryAfter` says when.
    public var isRetryable: Bool { Self.retryableCodes.contains(code) }

    public var errorDescription: String? { message }
    public var description: String { field.map { "\(code) (\($0)): \(message)" } ?? "\(code): \(message)" }

    static let connectionLost = SpotterError(code: "connection_lost", message: "The connection was lost before the reply.")
    static let closed = SpotterError(code: "closed", message: "The client was closed.")
    static let timeout = SpotterError(code: "timeout", message: "No reply in time.")
    static func badResponse(_ what: String) -> SpotterError { SpotterError(code: "bad_response", message: what) }
}

/// `{"error": {…}}`, the body of every refused HTTP request.
struct ErrorBody: Decodable {
    var error: SpotterError
}
