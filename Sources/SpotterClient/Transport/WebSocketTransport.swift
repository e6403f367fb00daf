import Foundation

/// What a socket reports, in order; `.closed` is always the last.
public enum TransportEvent: Sendable, Hashable {
    /// The server answered the upgrade with 101.
    case opened
    /// A text message.
    case text(String)
    /// The server answered the upgrade with something other than 101 (its status, and its body when the transport
    /// can read it: a JSON error).
    case refused(status: Int, body: Data)
    /// The connection ended: the server's close code and reason, or 1006 when no close frame came.
    case closed(code: Int, reason: String)
}

/// One WebSocket connection. `send` never blocks the caller.
public protocol WebSocketConnection: AnyObject, Sendable {
    var events: AsyncStream<TransportEvent> { get }
    func send(_ text: String)
    /// Sends a close frame and lets the connection go; no event after this is needed by the caller.
    func close(code: Int, reason: String)
}

/// Opens WebSocket connections: `URLSessionWebSocketTask` on Apple platforms; on Linux, where
/// swift-corelibs-foundation's needs a libcurl built with WebSockets (Debian 12's is not), a socket of this package's
/// own (`POSIXWebSocketTransport`: ws://, and wss:// through OpenSSL).
public protocol WebSocketTransport: Sendable {
    func connect(url: URL, headers: [String: String], subprotocols: [String]) -> any WebSocketConnection
}

/// The platform's transport.
#if canImport(Darwin)
public typealias DefaultWebSocketTransport = URLSessionWebSocketTransport
#else
public typealias DefaultWebSocketTransport = POSIXWebSocketTransport
#endif
