import COpenSSL

/// An RSA private key: a Google service account's `private_key`, which signs the RS256 assertion of the FCM
/// token grant.
///
/// Its `description`, `debugDescription` and mirror say only its size: a key can be logged or dumped by mistake
/// without leaking it.
public struct RSAPrivateKey: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// Smaller moduli are refused: RFC 7518 §3.3 requires 2048 bits for RS256, and Google issues 2048.
    public static let minimumBits: Int32 = 2048

    let key: OpenSSLKey

    /// The key in `pem`: PKCS#8 (`BEGIN PRIVATE KEY`, as in a service-account JSON) or PKCS#1 (`BEGIN RSA
    /// PRIVATE KEY`). Throws `.unreadablePrivateKey` for anything OpenSSL cannot read without a passphrase,
    /// `.wrongKeyType` for a key that is not RSA or is shorter than `minimumBits`.
    public init(pem: String) throws(PushCryptoError) {
        let key = try OpenSSLKey.readPrivate(pem: pem)
        guard key.baseID == EVP_PKEY_RSA, key.bits >= Self.minimumBits else {
            throw .wrongKeyType(expected: "an RSA key of at least \(Self.minimumBits) bits")
        }
        self.key = key
    }

    /// The key's modulus size in bits.
    public var bits: Int { Int(key.bits) }

    /// The RS256 signature of `message` (RSASSA-PKCS1-v1_5 with SHA-256, RFC 7518 §3.3): deterministic, as
    /// long as the modulus.
    public func signRS256(_ message: [UInt8]) -> [UInt8] { key.signSHA256(message) }

    /// Whether `signature` is this key's RS256 signature of `message` (checked with the key's public half).
    public func isValidRS256Signature(_ signature: [UInt8], for message: [UInt8]) -> Bool {
        key.verifySHA256(signature, of: message)
    }

    public var description: String { "RSAPrivateKey(\(bits) bits, redacted)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["bits": bits]) }
}
