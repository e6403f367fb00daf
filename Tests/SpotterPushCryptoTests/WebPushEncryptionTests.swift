import Testing
@testable import SpotterPushCrypto

/// RFC 8291 Appendix A: fixed keys and salt, the one published message.
enum RFC8291Example {
    static let plaintext = Array("When I grow up, I want to be a watermelon".utf8)
    static let serverPrivate = b64("yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw")
    static let serverPublic = b64("BP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A8")
    static let receiverPrivate = b64("q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94")
    static let receiverPublic = b64("BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4")
    static let salt = b64("DGv6ra1nlYgDCS1FRnbzlw")
    static let authSecret = b64("BTBZMqHH6r4Tts7J_aSIgg")
    static let body = b64(
        "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN")

    static var keys: WebPushSubscriptionKeys { try! WebPushSubscriptionKeys(p256dh: receiverPublic, authSecret: authSecret) }
    static var receiverKey: P256PrivateKey { try! P256PrivateKey(rawScalar: receiverPrivate) }
}

@Suite("Web Push: RFC 8291 aes128gcm encryption")
struct WebPushEncryptionTests {
    let subscriber = try! P256PrivateKey(pem: Fixtures.subscriber)
    var keys: WebPushSubscriptionKeys {
        try! WebPushSubscriptionKeys(p256dh: subscriber.publicKey.uncompressed, authSecret: Array(1...16))
    }

    @Test("the RFC 8291 Appendix A message is reproduced byte for byte from its keys and salt")
    func rfcExampleEncrypts() throws {
        let serverKey = try P256PrivateKey(rawScalar: RFC8291Example.serverPrivate)
        #expect(serverKey.publicKey.uncompressed == RFC8291Example.serverPublic)
        let body = try WebPushEncryption.encrypt(RFC8291Example.plaintext, to: RFC8291Example.keys,
                                                 salt: RFC8291Example.salt, serverKey: serverKey)
        #expect(b64(body) == b64(RFC8291Example.body))
    }

    @Test("the RFC 8291 Appendix A message decrypts with the receiver's key to its plaintext")
    func rfcExampleDecrypts() throws {
        let receiver = RFC8291Example.receiverKey
        #expect(receiver.publicKey.uncompressed == RFC8291Example.receiverPublic)
        let plaintext = try WebPushEncryption.decrypt(RFC8291Example.body, receiverKey: receiver,
                                                      authSecret: RFC8291Example.authSecret)
        #expect(plaintext == RFC8291Example.plaintext)
    }

    @Test("a message is one record: the 86-byte header (salt, rs 4096, idlen 65, the ephemeral key), then plaintext + 17")
    func layout() throws {
        for size in [0, 1, 100, WebPushEncryption.maxPlaintextBytes] {
            let plaintext = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31) }
            let body = try WebPushEncryption.encrypt(plaintext, to: keys)
            #expect(body.count == 86 + size + 17)
            #expect(Array(body[16..<21]) == [0, 0, 0x10, 0, 65])
            #expect(body[21] == 0x04)
            #expect(try WebPushEncryption.decrypt(body, receiverKey: subscriber, authSecret: keys.authSecret) == plaintext)
        }
        #expect(WebPushEncryption.maxPlaintextBytes == 3993)
    }

    @Test("every message has its own salt and ephemeral key")
    func freshPerMessage() throws {
        let first = try WebPushEncryption.encrypt([1, 2, 3], to: keys)
        let second = try WebPushEncryption.encrypt([1, 2, 3], to: keys)
        #expect(first[0..<16] != second[0..<16])
        #expect(first[21..<86] != second[21..<86])
    }

    @Test("a plaintext past 3993 bytes is refused: its body would pass the 4096 bytes push services must accept")
    func tooLarge() {
        #expect(throws: PushCryptoError.payloadTooLarge(bytes: 3994, limit: 3993)) {
            try WebPushEncryption.encrypt([UInt8](repeating: 7, count: 3994), to: keys)
        }
    }

    @Test("a changed byte anywhere after the header, or the wrong auth secret or key, fails to authenticate")
    func tampering() throws {
        let body = try WebPushEncryption.encrypt(Array("hello".utf8), to: keys)
        for index in 86..<body.count {
            var changed = body
            changed[index] ^= 0x01
            #expect(throws: PushCryptoError.decryptionFailed) {
                try WebPushEncryption.decrypt(changed, receiverKey: subscriber, authSecret: keys.authSecret)
            }
        }
        var salted = body
        salted[0] ^= 0x80
        #expect(throws: PushCryptoError.decryptionFailed) {
            try WebPushEncryption.decrypt(salted, receiverKey: subscriber, authSecret: keys.authSecret)
        }
        #expect(throws: PushCryptoError.decryptionFailed) {
            try WebPushEncryption.decrypt(body, receiverKey: subscriber, authSecret: Array(2...17))
        }
        #expect(throws: PushCryptoError.decryptionFailed) {
            try WebPushEncryption.decrypt(body, receiverKey: .generate(), authSecret: keys.authSecret)
        }
    }

    @Test("a body cut short, with a record size below 18, a key id that is not a P-256 point, or no records is malformed")
    func malformedHeaders() throws {
        let body = try WebPushEncryption.encrypt(Array("hello".utf8), to: keys)
        func refused(_ bytes: [UInt8]) -> Bool {
            do {
                _ = try WebPushEncryption.decrypt(bytes, receiverKey: subscriber, authSecret: keys.authSecret)
                return false
            } catch .malformedMessage { return true } catch { return false }
        }
        #expect(refused(Array(body.prefix(20))))
        #expect(refused(Array(body.prefix(86))))
        var small = body
        small[16...19] = [0, 0, 0, 17]
        #expect(refused(small))
        var idlen = body
        idlen[20] = 64
        #expect(refused(idlen))
        var offCurve = body
        offCurve[85] ^= 0x01
        #expect(refused(offCurve))
    }

    @Test("record n's nonce is the base XORed with n as a 96-bit big-endian number (RFC 8188 §2.3)")
    func recordNonces() {
        let keys = ContentKeys(ecdhSecret: Array(1...32), authSecret: Array(1...16), receiverPublic: RFC8291Example.receiverPublic,
                               senderPublic: RFC8291Example.serverPublic, salt: RFC8291Example.salt)
        let base = keys.nonce(record: 0)
        #expect(base == keys.nonceBase)
        var expected = base
        expected[11] ^= 0x02
        expected[10] ^= 0x01
        expected[4] ^= 0x80
        #expect(keys.nonce(record: 0x8000_0000_0000_0102) == expected)
    }

    @Test("records of many sizes decrypt, and the delimiters of RFC 8188 are enforced: 0x01 inside, 0x02 last")
    func multipleRecords() throws {
        let salt = [UInt8](repeating: 9, count: 16)
        let sender = P256PrivateKey.generate()
        let content = ContentKeys(ecdhSecret: sender.sharedSecret(with: keys.p256dh), authSecret: keys.authSecret,
                                  receiverPublic: keys.p256dh.uncompressed, senderPublic: sender.publicKey.uncompressed,
                                  salt: salt)
        func message(recordSize: Int, records: [[UInt8]]) -> [UInt8] {
            var body = salt + WebPushEncryption.bigEndian(UInt32(recordSize)) + [65] + sender.publicKey.uncompressed
            for (number, record) in records.enumerated() {
                body += AES128GCM.seal(record, key: content.contentKey, nonce: content.nonce(record: UInt64(number)))
            }
            return body
        }
        // rs 24: 8 bytes of record data (data + delimiter + padding) and the 16-byte tag.
        let good = message(recordSize: 24, records: [Array("abcdefg".utf8) + [1], Array("hij".utf8) + [1, 0, 0, 0, 0],
                                                     Array("kl".utf8) + [2, 0]])
        #expect(try WebPushEncryption.decrypt(good, receiverKey: subscriber, authSecret: keys.authSecret) == Array("abcdefghijkl".utf8))
        let lastMarkedInner = message(recordSize: 24, records: [Array("abcdefg".utf8) + [1], Array("kl".utf8) + [1]])
        let innerMarkedLast = message(recordSize: 24, records: [Array("abcdefg".utf8) + [2], Array("kl".utf8) + [2]])
        let onlyPadding = message(recordSize: 24, records: [[0, 0, 0]])
        for bad in [lastMarkedInner, innerMarkedLast, onlyPadding] {
            #expect(throws: PushCryptoError.self) {
                try WebPushEncryption.decrypt(bad, receiverKey: self.subscriber, authSecret: self.keys.authSecret)
            }
        }
        // Padding after the last delimiter is not data.
        let padded = message(recordSize: 4096, records: [Array("x".utf8) + [2] + [UInt8](repeating: 0, count: 50)])
        #expect(try WebPushEncryption.decrypt(padded, receiverKey: subscriber, authSecret: keys.authSecret) == Array("x".utf8))
    }
}

@Suite("Web Push: subscription keys")
struct WebPushSubscriptionKeysTests {
    @Test("keys are read from PushSubscription.toJSON()'s base64url, unpadded or padded")
    func base64URL() throws {
        let unpadded = try WebPushSubscriptionKeys(p256dh: b64(RFC8291Example.receiverPublic), auth: "BTBZMqHH6r4Tts7J_aSIgg")
        let padded = try WebPushSubscriptionKeys(p256dh: b64(RFC8291Example.receiverPublic) + "=", auth: "BTBZMqHH6r4Tts7J_aSIgg==")
        #expect(unpadded == padded)
        #expect(unpadded.authSecret == RFC8291Example.authSecret)
        #expect(throws: PushCryptoError.invalidPublicKey) {
            try WebPushSubscriptionKeys(p256dh: "BCVxsr7N+eNgVRqvHtD0zTZsEc6", auth: "BTBZMqHH6r4Tts7J_aSIgg")
        }
        #expect(throws: PushCryptoError.invalidAuthSecret) {
            try WebPushSubscriptionKeys(p256dh: b64(RFC8291Example.receiverPublic), auth: "BTBZMqHH6r4Tts7J_aSI")
        }
    }

    @Test("a p256dh that is compressed, the wrong length or off the curve is refused")
    func badPoints() {
        var offCurve = RFC8291Example.receiverPublic
        offCurve[64] ^= 0x01
        var compressed = Array(RFC8291Example.receiverPublic.prefix(33))
        compressed[0] = 0x02 | (RFC8291Example.receiverPublic[64] & 1)
        var notUncompressed = RFC8291Example.receiverPublic
        notUncompressed[0] = 0x05
        for point in [offCurve, compressed, notUncompressed, Array(RFC8291Example.receiverPublic.dropLast()), [UInt8](repeating: 0, count: 65)] {
            #expect(throws: PushCryptoError.invalidPublicKey) {
                try WebPushSubscriptionKeys(p256dh: point, authSecret: RFC8291Example.authSecret)
            }
        }
    }

    @Test("the auth secret never appears in a description")
    func redacted() {
        let keys = RFC8291Example.keys
        #expect(!String(describing: keys).contains("BTBZMqHH6r4Tts7J"))
        #expect(String(describing: keys).contains("redacted"))
    }
}
