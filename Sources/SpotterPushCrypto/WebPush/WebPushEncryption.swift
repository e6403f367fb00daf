/// Web Push message encryption (RFC 8291) in the `aes128gcm` content coding (RFC 8188).
///
/// A message is one record: the body is the 86-byte header — `salt` (16) `|| rs` (4, 4096) `|| idlen` (1, 65)
/// `|| keyid` (the server's ephemeral public key, 65) — then `AES-128-GCM(plaintext || 0x02)` with its 16-byte tag.
/// The keys come from an ECDH between a fresh server key and the browser's `p256dh`, mixed with the
/// subscription's auth secret:
///
///     IKM   = HKDF(salt: auth, ikm: ECDH, info: "WebPush: info" 0x00 ua_public as_public, 32)
///     CEK   = HKDF(salt: salt, ikm: IKM, info: "Content-Encoding: aes128gcm" 0x00, 16)
///     NONCE = HKDF(salt: salt, ikm: IKM, info: "Content-Encoding: nonce" 0x00, 12)
///
/// Pure but for the fresh key and salt of `encrypt(_:to:)`; `encrypt(_:to:salt:serverKey:)` takes them from the
/// caller, which is how the RFC's example is reproduced byte for byte in the tests.
public enum WebPushEncryption {
    /// The record size written in every header. One record is all a push message needs: push services accept
    /// bodies of at least 4096 bytes (RFC 8291 §4), so the plaintext never spans two.
    public static let recordSize = 4096
    /// salt + rs + idlen + a 65-byte key id.
    public static let headerBytes = 16 + 4 + 1 + 65
    /// The largest plaintext whose body fits the 4096 bytes every push service must accept: 4096 − the header
    /// (86) − the tag (16) − the padding delimiter (1) = 3993.
    public static let maxPlaintextBytes = 4096 - headerBytes - AES128GCM.tagBytes - 1
    public static let saltBytes = 16

    /// The body of a push message carrying `plaintext` to the subscription `keys`, under a fresh ephemeral key
    /// and salt. Throws `.payloadTooLarge` past `maxPlaintextBytes`.
    public static func encrypt(_ plaintext: [UInt8], to keys: WebPushSubscriptionKeys) throws(PushCryptoError) -> [UInt8] {
        try encrypt(plaintext, to: keys, salt: PushRandom.bytes(saltBytes), serverKey: .generate())
    }

    /// The body with the given `salt` (16 bytes) and ephemeral `serverKey`. Both must be fresh for every message
    /// (RFC 8291 §3.1): this form is for tests and test vectors.
    public static func encrypt(
        _ plaintext: [UInt8], to keys: WebPushSubscriptionKeys, salt: [UInt8], serverKey: P256PrivateKey
    ) throws(PushCryptoError) -> [UInt8] {
        precondition(salt.count == saltBytes, "the salt is 16 bytes")
        guard plaintext.count <= maxPlaintextBytes else {
            throw .payloadTooLarge(bytes: plaintext.count, limit: maxPlaintextBytes)
        }
        let serverPublic = serverKey.publicKey.uncompressed
        let derived = ContentKeys(
            ecdhSecret: serverKey.sharedSecret(with: keys.p256dh), authSecret: keys.authSecret,
            receiverPublic: keys.p256dh.uncompressed, senderPublic: serverPublic, salt: salt)
        var body = salt
        body.reserveCapacity(headerBytes + plaintext.count + 1 + AES128GCM.tagBytes)
        body += bigEndian(UInt32(recordSize))
        body.append(UInt8(serverPublic.count))
        body += serverPublic
        body += AES128GCM.seal(plaintext + [lastRecordDelimiter], key: derived.contentKey, nonce: derived.nonce(record: 0))
        return body
    }

    /// RFC 8188 §2: every record's plaintext ends in a delimiter, 0x02 for the last record, 0x01 for the others,
    /// then optional zeros.
    static let lastRecordDelimiter: UInt8 = 0x02
    static let recordDelimiter: UInt8 = 0x01

    static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }
}

/// The content-encryption key and nonce base of one message (RFC 8291 §3.4, RFC 8188 §2.2–2.3).
struct ContentKeys {
    let contentKey: [UInt8]
    let nonceBase: [UInt8]

    init(ecdhSecret: [UInt8], authSecret: [UInt8], receiverPublic: [UInt8], senderPublic: [UInt8], salt: [UInt8]) {
        let keyInfo = Array("WebPush: info".utf8) + [0] + receiverPublic + senderPublic
        let ikm = HKDF.sha256(salt: authSecret, ikm: ecdhSecret, info: keyInfo, length: 32)
        let prk = HKDF.hmac(key: salt, message: ikm)
        contentKey = HKDF.expand(prk: prk, info: Array("Content-Encoding: aes128gcm".utf8) + [0], length: AES128GCM.keyBytes)
        nonceBase = HKDF.expand(prk: prk, info: Array("Content-Encoding: nonce".utf8) + [0], length: AES128GCM.nonceBytes)
    }

    /// The nonce of record `record` (counting from 0): the base XORed with the record's number as a 96-bit
    /// big-endian integer (RFC 8188 §2.3).
    func nonce(record: UInt64) -> [UInt8] {
        var nonce = nonceBase
        for index in 0..<8 {
            nonce[nonce.count - 1 - index] ^= UInt8(truncatingIfNeeded: record >> (8 * UInt64(index)))
        }
        return nonce
    }
}
