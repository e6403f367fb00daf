/// `GET /v1/push/vapid-public-key` (issue 28): the server's VAPID public key (RFC 8292), the base64url without
/// padding of the uncompressed P-256 point (65 bytes, starting 0x04) — what a browser passes to
/// `pushManager.subscribe` as `applicationServerKey`.
public struct VAPIDPublicKey: Codable, Sendable, Equatable {
    public var key: String
    public init(key: String) { self.key = key }
}
