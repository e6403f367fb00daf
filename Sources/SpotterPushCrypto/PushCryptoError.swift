/// Why a key, a subscription, a message or a provider's answer was refused.
///
/// Descriptions name what was wrong, never the bytes: a key, an auth secret or a token never appears in one, so an
/// error can be logged as it is.
public enum PushCryptoError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The PEM text holds no private key OpenSSL can read (or it is encrypted: keys are read without a passphrase).
    case unreadablePrivateKey
    /// A key of the wrong kind: `expected` says what was wanted ("a P-256 key", "an RSA key of at least 2048 bits").
    case wrongKeyType(expected: String)
    /// Not a 65-byte uncompressed point on P-256 (`0x04 || x || y`).
    case invalidPublicKey
    /// A subscription's auth secret that is not 16 bytes.
    case invalidAuthSecret
    /// A plaintext longer than one Web Push record can carry (`WebPushEncryption.maxPlaintextBytes`).
    case payloadTooLarge(bytes: Int, limit: Int)
    /// An `aes128gcm` body that is cut short, names a record size or key id Web Push does not use, or whose
    /// records are not padded as RFC 8188 says.
    case malformedMessage(String)
    /// A record that does not authenticate under the derived key: the wrong receiver key or auth secret, or
    /// bytes changed on the way.
    case decryptionFailed
    /// A push endpoint whose origin cannot be read: not `http(s)://host[:port]…`.
    case invalidEndpoint
    /// A VAPID subject that is neither a `mailto:` nor an `https:` URI.
    case invalidSubject
    /// An APNs key id or team id that is not 10 ASCII letters and digits, as Apple issues them; `which` names it.
    case invalidAPNsIdentifier(which: String)
    /// A service-account JSON without one of its fields (`field`), or not JSON at all.
    case invalidServiceAccount(field: String)
    /// A token endpoint's answer without a usable `access_token` and `expires_in`.
    case invalidTokenResponse
    /// A compact JWS that is not three base64url parts with a JSON header naming the expected algorithm.
    case malformedToken
    /// A JWS whose signature does not verify under the key.
    case badSignature
    /// A signed token whose claims do not hold: `why` names the claim (an audience for another origin, an expiry
    /// passed or too far ahead).
    case claimsRejected(String)

    public var description: String {
        switch self {
        case .unreadablePrivateKey: "no readable, unencrypted private key in the PEM text"
        case .wrongKeyType(let expected): "the key is not \(expected)"
        case .invalidPublicKey: "not an uncompressed P-256 public key (65 bytes, a point on the curve)"
        case .invalidAuthSecret: "the auth secret is not 16 bytes"
        case .payloadTooLarge(let bytes, let limit): "the payload is \(bytes) bytes, more than \(limit)"
        case .malformedMessage(let why): "not an aes128gcm Web Push message: \(why)"
        case .decryptionFailed: "a record did not authenticate"
        case .invalidEndpoint: "the push endpoint is not an http(s) URL with a host"
        case .invalidSubject: "the VAPID subject is neither mailto: nor https:"
        case .invalidAPNsIdentifier(let which): "the APNs \(which) is not 10 letters and digits"
        case .invalidServiceAccount(let field): "the service-account JSON has no usable \(field)"
        case .invalidTokenResponse: "the token endpoint's answer has no usable access_token and expires_in"
        case .malformedToken: "not a compact JWS with the expected algorithm"
        case .badSignature: "the signature does not verify"
        case .claimsRejected(let why): "the token's claims do not hold: \(why)"
        }
    }
}
