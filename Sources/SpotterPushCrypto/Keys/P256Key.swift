import Base64Codec
import COpenSSL

/// A public key on NIST P-256 (secp256r1, "prime256v1"): a browser's `p256dh`, the VAPID key's public half, the
/// public half of an APNs `.p8` key.
public struct P256PublicKey: Sendable, Equatable, CustomStringConvertible {
    /// The point uncompressed, `0x04 || x || y`: 65 bytes, as Web Push carries it (`p256dh`, VAPID's `k=`).
    public let uncompressed: [UInt8]
    let key: OpenSSLKey

    /// DER `SubjectPublicKeyInfo` up to the point: algorithm id-ecPublicKey, curve prime256v1, a 66-byte bit string.
    private static let spkiPrefix: [UInt8] = [
        0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01,
        0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00,
    ]

    /// The key whose uncompressed point is `uncompressed`. Throws `.invalidPublicKey` for any other length, a
    /// compressed point, or a point not on the curve (OpenSSL checks it: an ECDH with an off-curve point could
    /// leak the private key).
    public init(uncompressed: [UInt8]) throws(PushCryptoError) {
        guard uncompressed.count == 65, uncompressed[0] == 0x04,
              let key = OpenSSLKey.readDER(Self.spkiPrefix + uncompressed, { d2i_PUBKEY(nil, $0, $1) }),
              key.publicCheck()
        else { throw .invalidPublicKey }
        self.uncompressed = uncompressed
        self.key = key
    }

    /// The key in a `PUBLIC KEY` PEM (SubjectPublicKeyInfo), as `openssl pkey -pubout` writes it.
    /// A point OpenSSL itself produced, with the key it came from (a key just generated): nothing to check.
    init(point: [UInt8], key: OpenSSLKey) {
        uncompressed = point
        self.key = key
    }

    public init(pem: String) throws(PushCryptoError) {
        defer { ERR_clear_error() }
        let bytes = Array(pem.utf8)
        let read: OpaquePointer? = bytes.withUnsafeBytes { raw in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
            defer { BIO_free(bio) }
            return PEM_read_bio_PUBKEY(bio, nil, nil, nil)
        }
        guard let read else { throw .invalidPublicKey }
        try self.init(uncompressed: P256PublicKey.uncompressedPoint(of: OpenSSLKey(taking: read)))
    }

    /// `uncompressed` in base64url without padding (87 characters): VAPID's `k=` and what
    /// `GET /v1/push/vapid-public-key` answers.
    public var base64URL: String { Base64.encode(uncompressed, alphabet: .url) }

    /// Whether `signature` is a JOSE ES256 signature (`r || s`, 32 bytes each, RFC 7518 §3.4) of `message`
    /// under this key. Any other length is simply not valid.
    public func isValidES256Signature(_ signature: [UInt8], for message: [UInt8]) -> Bool {
        guard let der = ECDSASignature.der(fromJOSE: signature) else { return false }
        return key.verifySHA256(der, of: message)
    }

    public static func == (a: P256PublicKey, b: P256PublicKey) -> Bool { a.uncompressed == b.uncompressed }

    public var description: String { "P256PublicKey(\(base64URL))" }

    /// The uncompressed point of an EC key; throws unless it is on P-256.
    static func uncompressedPoint(of key: OpenSSLKey) throws(PushCryptoError) -> [UInt8] {
        guard key.baseID == EVP_PKEY_EC, key.curveName == "prime256v1" else { throw .wrongKeyType(expected: "a P-256 key") }
        var point = [UInt8](repeating: 0, count: 65)
        var length = 0
        let ok = EVP_PKEY_get_octet_string_param(key.pointer, "encoded-pub-key", &point, point.count, &length)
        ERR_clear_error()
        guard ok == 1, length == 65, point[0] == 0x04 else { throw .wrongKeyType(expected: "a P-256 key") }
        return point
    }
}

/// A private key on P-256: the VAPID key, an APNs `.p8` key, a Web Push message's ephemeral key, or (in tests and
/// the local push-service stand-in) a browser's subscription key.
///
/// Its `description`, `debugDescription` and mirror name the public half only: a key can be logged or dumped by
/// mistake without leaking it.
public struct P256PrivateKey: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public let publicKey: P256PublicKey
    let key: OpenSSLKey

    /// The key in `pem`: PKCS#8 (`BEGIN PRIVATE KEY`, what `openssl genpkey` writes and Apple's `.p8` files hold)
    /// or SEC1 (`BEGIN EC PRIVATE KEY`). Throws `.unreadablePrivateKey` for anything OpenSSL cannot read without a
    /// passphrase, `.wrongKeyType` for a key that is not on P-256.
    public init(pem: String) throws(PushCryptoError) {
        try self.init(checking: OpenSSLKey.readPrivate(pem: pem))
    }

    /// The key whose private scalar is `rawScalar` (32 bytes, big-endian): the form the RFC 8291 examples and some
    /// VAPID tools use. Throws `.wrongKeyType` unless 1 ≤ scalar < the curve's order.
    public init(rawScalar: [UInt8]) throws(PushCryptoError) {
        guard rawScalar.count == 32 else { throw .wrongKeyType(expected: "a 32-byte P-256 scalar") }
        // SEC1 ECPrivateKey { version 1, privateKey, [0] prime256v1 }; OpenSSL computes the public point.
        let der: [UInt8] = [0x30, 0x31, 0x02, 0x01, 0x01, 0x04, 0x20] + rawScalar
            + [0xA0, 0x0A, 0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07]
        guard let key = OpenSSLKey.readDER(der, { d2i_PrivateKey(EVP_PKEY_EC, nil, $0, $1) }) else {
            throw .wrongKeyType(expected: "a valid P-256 scalar")
        }
        try self.init(checking: key)
    }

    private init(checking key: OpenSSLKey) throws(PushCryptoError) {
        let point = try P256PublicKey.uncompressedPoint(of: key)
        guard key.pairCheck() else { throw .wrongKeyType(expected: "a valid P-256 key pair") }
        self.key = key
        publicKey = try P256PublicKey(uncompressed: point)
    }

    /// A fresh key from OpenSSL's CSPRNG: one per Web Push message (RFC 8291 §3.1). Traps if OpenSSL cannot
    /// make one: sending under a predictable key would be worse than stopping.
    public static func generate() -> P256PrivateKey {
        defer { ERR_clear_error() }
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else { preconditionFailure("OpenSSL EC context failed") }
        defer { EVP_PKEY_CTX_free(context) }
        var generated: OpaquePointer?
        precondition(EVP_PKEY_keygen_init(context) == 1 && EVP_PKEY_CTX_set_group_name(context, "P-256") == 1
                     && EVP_PKEY_keygen(context, &generated) == 1, "OpenSSL P-256 key generation failed")
        guard let generated else { preconditionFailure("OpenSSL P-256 key generation failed") }
        // OpenSSL made it: not checked again (the pair check and decoding the public half once more were a fifth of
        // a push's CPU under load), only its point read out.
        let key = OpenSSLKey(taking: generated)
        do { return P256PrivateKey(key: key, point: try P256PublicKey.uncompressedPoint(of: key)) } catch {
            preconditionFailure("OpenSSL generated an unusable P-256 key: \(error)")
        }
    }

    private init(key: OpenSSLKey, point: [UInt8]) {
        self.key = key
        publicKey = P256PublicKey(point: point, key: key)
    }

    /// The ECDH shared secret with `peer` (the x coordinate of the shared point, 32 bytes; SEC 1 §3.3.1).
    public func sharedSecret(with peer: P256PublicKey) -> [UInt8] {
        defer { ERR_clear_error() }
        guard let context = EVP_PKEY_CTX_new(key.pointer, nil) else { preconditionFailure("OpenSSL ECDH context failed") }
        defer { EVP_PKEY_CTX_free(context) }
        var length = 0
        precondition(EVP_PKEY_derive_init(context) == 1 && EVP_PKEY_derive_set_peer(context, peer.key.pointer) == 1
                     && EVP_PKEY_derive(context, nil, &length) == 1 && length == 32, "OpenSSL ECDH failed")
        var secret = [UInt8](repeating: 0, count: length)
        precondition(EVP_PKEY_derive(context, &secret, &length) == 1 && length == 32, "OpenSSL ECDH failed")
        return secret
    }

    /// The ES256 signature of `message` in JOSE form (RFC 7518 §3.4): `r || s`, 32 bytes each, not the DER
    /// `SEQUENCE` OpenSSL produces. Randomized (OpenSSL's nonce), so two signatures of one message differ.
    public func signES256(_ message: [UInt8]) -> [UInt8] {
        guard let jose = ECDSASignature.jose(fromDER: key.signSHA256(message)) else {
            preconditionFailure("OpenSSL produced an ECDSA signature that is not a DER pair of 32-byte integers")
        }
        return jose
    }

    public var description: String { "P256PrivateKey(public: \(publicKey.base64URL), private: redacted)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["publicKey": publicKey]) }
}

extension OpenSSLKey {
    /// OpenSSL's check of a public key alone (the point is on the curve and not at infinity).
    func publicCheck() -> Bool { check(EVP_PKEY_public_check) }

    /// OpenSSL's check of a key pair (the scalar is in range and the point is its multiple of the generator).
    func pairCheck() -> Bool { check(EVP_PKEY_check) }

    private func check(_ test: (OpaquePointer?) -> Int32) -> Bool {
        defer { ERR_clear_error() }
        guard let context = EVP_PKEY_CTX_new(pointer, nil) else { return false }
        defer { EVP_PKEY_CTX_free(context) }
        return test(context) == 1
    }
}
