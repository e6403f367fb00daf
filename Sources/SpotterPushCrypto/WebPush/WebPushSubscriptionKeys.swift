import Base64Codec

/// The keys of a browser's push subscription (`PushSubscription.toJSON().keys`): what a Web Push message is
/// encrypted to.
///
/// The auth secret is a secret shared by the browser and this server only (RFC 8291 §3.2): `description` leaves
/// it out.
public struct WebPushSubscriptionKeys: Sendable, Equatable, CustomStringConvertible {
    /// The browser's ECDH public key (`p256dh`).
    public let p256dh: P256PublicKey
    /// The 16-byte authentication secret (`auth`).
    public let authSecret: [UInt8]

    public static let authSecretBytes = 16

    /// Throws `.invalidPublicKey` unless `p256dh` is an uncompressed point on P-256, `.invalidAuthSecret` unless
    /// `authSecret` is 16 bytes.
    public init(p256dh: [UInt8], authSecret: [UInt8]) throws(PushCryptoError) {
        guard authSecret.count == Self.authSecretBytes else { throw .invalidAuthSecret }
        self.p256dh = try P256PublicKey(uncompressed: p256dh)
        self.authSecret = authSecret
    }

    /// The keys as `PushSubscription.toJSON()` spells them: base64url, unpadded (as browsers write it) or padded
    /// (as some libraries do). Anything else is `.invalidPublicKey` or `.invalidAuthSecret`.
    public init(p256dh: String, auth: String) throws(PushCryptoError) {
        guard let point = Self.decodeBase64URL(p256dh) else { throw .invalidPublicKey }
        guard let secret = Self.decodeBase64URL(auth) else { throw .invalidAuthSecret }
        try self.init(p256dh: point, authSecret: secret)
    }

    static func decodeBase64URL(_ text: String) -> [UInt8]? {
        Base64.decode(Substring(text), alphabet: .url) ?? Base64.decode(Substring(text), alphabet: .url, padded: true)
    }

    public var description: String { "WebPushSubscriptionKeys(p256dh: \(p256dh.base64URL), auth: redacted)" }
}
