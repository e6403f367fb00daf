import WebSocket

/// What a WebSocket path does with the messages it receives. Loop thread only.
protocol WebSocketEndpoint: AnyObject {
    func handle(_ event: WebSocketEvent, on connection: Connection)
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
