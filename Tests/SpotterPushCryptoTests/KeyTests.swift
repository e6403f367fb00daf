import Testing
@testable import SpotterPushCrypto

@Suite("Keys: P-256 and RSA over OpenSSL")
struct KeyTests {
    @Test("a P-256 key reads from PKCS#8 and SEC1 PEM alike, and its public half matches OpenSSL's own")
    func pemForms() throws {
        let pkcs8 = try P256PrivateKey(pem: Fixtures.vapid)
        let sec1 = try P256PrivateKey(pem: Fixtures.vapidSEC1)
        #expect(pkcs8.publicKey == sec1.publicKey)
        #expect(pkcs8.publicKey.uncompressed.count == 65)
        #expect(try P256PrivateKey(pem: Fixtures.apnsP8).publicKey == P256PublicKey(pem: Fixtures.apnsPublic))
        #expect(pkcs8.publicKey.base64URL.count == 87)
    }

    @Test("keys of other kinds, garbage and encrypted PEM are refused, the wrong kind by name")
    func refusals() {
        for other in [Fixtures.p384, Fixtures.ed25519, Fixtures.serviceAccountKey] {
            #expect(throws: PushCryptoError.wrongKeyType(expected: "a P-256 key")) { try P256PrivateKey(pem: other) }
        }
        for unreadable in ["", "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n", Fixtures.apnsPublic,
                           Fixtures.encryptedVAPID] {
            #expect(throws: PushCryptoError.unreadablePrivateKey) { try P256PrivateKey(pem: unreadable) }
        }
        for other in [Fixtures.vapid, Fixtures.p384] {
            #expect(throws: PushCryptoError.wrongKeyType(expected: "an RSA key of at least 2048 bits")) {
                try RSAPrivateKey(pem: other)
            }
        }
        #expect(throws: PushCryptoError.wrongKeyType(expected: "a P-256 key")) { try P256PublicKey(pem: Fixtures.serviceAccountPublic) }
        #expect(throws: PushCryptoError.invalidPublicKey) { try P256PublicKey(pem: Fixtures.vapid) }
    }

    @Test("a raw scalar must be 32 bytes, not zero, and below the curve's order")
    func rawScalars() throws {
        let order = b64("_____wAAAAD__________7zm-q2nF56E87nKwvxjJVE")
        var belowOrder = order
        belowOrder[31] -= 1
        #expect(throws: PushCryptoError.self) { try P256PrivateKey(rawScalar: [UInt8](repeating: 0, count: 32)) }
        #expect(throws: PushCryptoError.self) { try P256PrivateKey(rawScalar: order) }
        #expect(throws: PushCryptoError.self) { try P256PrivateKey(rawScalar: [1] + [UInt8](repeating: 0, count: 31) + [1]) }
        _ = try P256PrivateKey(rawScalar: belowOrder)
        _ = try P256PrivateKey(rawScalar: [UInt8](repeating: 0, count: 31) + [1])
    }

    @Test("ES256 signatures are JOSE r||s (64 bytes) and verify; a changed bit, another message or DER does not")
    func es256() throws {
        let key = try P256PrivateKey(pem: Fixtures.vapid)
        let message = Array("header.claims".utf8)
        let signature = key.signES256(message)
        #expect(signature.count == 64)
        #expect(key.publicKey.isValidES256Signature(signature, for: message))
        #expect(!key.publicKey.isValidES256Signature(signature, for: Array("header.claimz".utf8)))
        for bit in [0, 255, 256, 511] {
            var changed = signature
            changed[bit / 8] ^= 1 << UInt8(bit % 8)
            #expect(!key.publicKey.isValidES256Signature(changed, for: message))
        }
        let der = try #require(ECDSASignature.der(fromJOSE: signature))
        #expect(der.first == 0x30 && der.count != 64)
        #expect(ECDSASignature.jose(fromDER: der) == signature)
        #expect(!key.publicKey.isValidES256Signature(der, for: message))
        #expect(!P256PrivateKey.generate().publicKey.isValidES256Signature(signature, for: message))
    }

    @Test("short r and s are left-padded to 32 bytes each")
    func shortComponents() throws {
        // DER of r = 1, s = 2.
        #expect(ECDSASignature.jose(fromDER: [0x30, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01, 0x02])
                == [UInt8](repeating: 0, count: 31) + [1] + [UInt8](repeating: 0, count: 31) + [2])
        #expect(ECDSASignature.der(fromJOSE: [UInt8](repeating: 0, count: 31) + [1] + [UInt8](repeating: 0, count: 31) + [2])
                == [0x30, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01, 0x02])
        #expect(ECDSASignature.der(fromJOSE: [UInt8](repeating: 1, count: 63)) == nil)
        #expect(ECDSASignature.jose(fromDER: [0x30, 0x00]) == nil)
    }

    @Test("ECDH agrees from both sides")
    func ecdh() {
        let a = P256PrivateKey.generate(), b = P256PrivateKey.generate()
        #expect(a.sharedSecret(with: b.publicKey) == b.sharedSecret(with: a.publicKey))
        #expect(a.sharedSecret(with: b.publicKey).count == 32)
        #expect(a.publicKey != b.publicKey)
    }

    @Test("RS256 is deterministic, as long as the modulus, and verifies only for its message")
    func rs256() throws {
        let key = try RSAPrivateKey(pem: Fixtures.serviceAccountKey)
        #expect(key.bits == 2048)
        let signature = key.signRS256(Array("a.b".utf8))
        #expect(signature.count == 256)
        #expect(signature == key.signRS256(Array("a.b".utf8)))
        #expect(key.isValidRS256Signature(signature, for: Array("a.b".utf8)))
        #expect(!key.isValidRS256Signature(signature, for: Array("a.c".utf8)))
    }

    @Test("private keys print, debug-print and dump their public half only")
    func redacted() throws {
        let key = try P256PrivateKey(rawScalar: RFC8291Example.serverPrivate)
        let rsa = try RSAPrivateKey(pem: Fixtures.serviceAccountKey)
        let secretForms = [b64(RFC8291Example.serverPrivate), hex(RFC8291Example.serverPrivate)]
        for text in [String(describing: key), String(reflecting: key), dumped(key), "\(key)"] {
            #expect(text.contains("redacted") || text.contains(key.publicKey.base64URL))
            for secret in secretForms { #expect(!text.contains(secret)) }
        }
        for text in [String(describing: rsa), String(reflecting: rsa), dumped(rsa)] {
            #expect(!text.contains("MII") && !text.contains("PRIVATE"))
        }
        // The mirror has no pointer or buffer to follow: only the public key (or the size).
        #expect(Mirror(reflecting: key).children.map(\.label) == ["publicKey"])
        #expect(Mirror(reflecting: rsa).children.map(\.label) == ["bits"])
    }

    private func dumped(_ value: Any) -> String {
        var out = ""
        dump(value, to: &out)
        return out
    }

    private func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
    }
}
