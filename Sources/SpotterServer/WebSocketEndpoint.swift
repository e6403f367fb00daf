import WebSocket

/// What a WebSocket path does with its connection. Loop thread only.
/// Shared endpoints (echo) serve every connection; per-connection ones
/// (`AppSocket`) carry that connection's session.
protocol WebSocketEndpoint: AnyObject {
    /// The upgrade completed; the connection can send.
    func opened(on connection: Connection)
    /// A complete message (text or binary) from the client.
    func handle(_ event: WebSocketEvent, on connection: Connection)
    /// Called about once a second while the connection is open.
    func tick(on connection: Connection)
    /// The socket is gone (closed, failed or dropped); the last call.
    func closed(on connection: Connection)
}

extension WebSocketEndpoint {
    func opened(on connection: Connection) {}
    func tick(on connection: Connection) {}
    func closed(on connection: Connection) {}
}

/// `/echo`: sends every text and binary message straight back, for the
/// Autobahn conformance suite and the echo benchmark. Off unless `--echo`.
final class EchoEndpoint: WebSocketEndpoint {
    func handle(_ event: WebSocketEvent, on connection: Connection) {
        switch event {
        case .text(let payload):
            payload.withUnsafeBytes { _ = connection.sendMessage(.text, $0) }
        case .binary(let payload):
            payload.withUnsafeBytes { _ = connection.sendMessage(.binary, $0) }
        default:
            break  // control frames are the session's business
        }
    }
}
