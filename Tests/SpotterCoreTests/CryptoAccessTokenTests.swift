import Foundation
import Testing
@testable import SpotterCore

@Suite("Crypto: AccessTokenSigner")
struct CryptoAccessTokenTests {
    let secret = [UInt8](repeating: 0x42, count: 32)
    let claims = AccessClaims(subject: "user-1", role: .coach, sessionID: "family-1", issuedAt: 1_000, expiresAt: 1_900)

    var signer: AccessTokenSigner { AccessTokenSigner(secret: secret) }

    @Test("sign then verify returns the claims")
    func roundTrip() throws {
        let token = signer.sign(claims)
        #expect(token.split(separator: ".").count == 3)
        #expect(try signer.verify(token, now: 1_000) == claims)
        #expect(try signer.verify(token, now: 1_899) == claims)
        let admin = AccessClaims(subject: "ü/+é", role: .admin, sessionID: "s", issuedAt: 0, expiresAt: Int64.max)
        #expect(try signer.verify(signer.sign(admin), now: 5) == admin)
    }

    @Test("the one-pass claims reader agrees with JSONDecoder, and leaves anything else to it")
    func flatClaims() throws {
        let payloads = [
            #"{"exp":1900,"iat":1000,"role":"coach","sid":"family-1","sub":"user-1"}"#,
            #" {"sub":"u","sid":"s","role":"admin","iat":-3,"exp":9223372036854775807,"extra":"x"} "#,
            #"{"exp":1900,"iat":1000,"role":"coach","sid":"family-1","sub":"a\"b"}"#,   // an escape (read in one pass too)
            #"{"exp":1900.5,"iat":1000,"role":"coach","sid":"f","sub":"u"}"#,           // a float
            #"{"exp":1900,"iat":1000,"role":"emperor","sid":"f","sub":"u"}"#,          // no such role
            #"{"exp":1900,"iat":1000,"role":"coach","sid":"f"}"#,                       // no subject
            #"{"exp":"1900","iat":1000,"role":"coach","sid":"f","sub":"u"}"#,          // a string
        ]
        var flat = 0
        for payload in payloads {
            let bytes = Array(payload.utf8)
            let decoded = try? JSONDecoder().decode(AccessClaims.self, from: Data(bytes))
            if let fast = AccessClaims(flat: bytes) {
                flat += 1
                #expect(fast == decoded, "\(payload)")
            }
        }
        #expect(flat == 3)
        // Through verify: a subject with escapes still verifies.
        let quoted = AccessClaims(subject: #"a"b\c"#, role: .client, sessionID: "s", issuedAt: 0, expiresAt: 10)
        #expect(try signer.verify(signer.sign(quoted), now: 5) == quoted)
    }

    @Test("a token built independently (header, claims, HMAC) matches and verifies")
    func knownToken() throws {
        let header = #"{"alg":"HS256","typ":"JWT"}"#
        let payload = #"{"exp":1900,"iat":1000,"role":"coach","sid":"family-1","sub":"user-1"}"#
        let signingInput = CryptoFixtures.base64URL(header) + "." + CryptoFixtures.base64URL(payload)
        let mac = Digest.hmacSHA256(key: secret, message: Array(signingInput.utf8))
        let expected = signingInput + "." + CryptoFixtures.base64URL(mac)
        #expect(signer.sign(claims) == expected)
        #expect(try signer.verify(expected, now: 1_500) == claims)
    }

    @Test("the header is exactly {\"alg\":\"HS256\",\"typ\":\"JWT\"} and the claims use sub/role/sid/iat/exp")
    func wireShape() throws {
        let parts = signer.sign(claims).split(separator: ".")
        let header = try #require(CryptoFixtures.fromBase64URL(parts[0]))
        #expect(String(decoding: header, as: UTF8.self) == #"{"alg":"HS256","typ":"JWT"}"#)
        let payload = try #require(CryptoFixtures.fromBase64URL(parts[1]))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any])
        #expect(Set(object.keys) == ["sub", "role", "sid", "iat", "exp"])
        #expect(object["sub"] as? String == "user-1")
        #expect(object["role"] as? String == "coach")
        #expect((object["exp"] as? NSNumber)?.int64Value == 1_900)
        #expect(!parts.joined().contains("="))
    }

    @Test("a changed payload is refused as badSignature")
    func tamperedPayload() {
        let original = signer.sign(claims).split(separator: ".")
        var escalated = claims
        escalated.role = .admin
        let forged = signer.sign(escalated).split(separator: ".")
        let token = "\(original[0]).\(forged[1]).\(original[2])"
        #expect(throws: AccessTokenError.badSignature) { try signer.verify(token, now: 1_000) }
    }

    @Test("a changed signature is refused as badSignature")
    func tamperedSignature() {
        let parts = signer.sign(claims).split(separator: ".")
        let signature = String(parts[2])
        let first = signature.first!
        let changed = String(first == "A" ? "B" : "A") + signature.dropFirst()
        #expect(throws: AccessTokenError.badSignature) { try signer.verify("\(parts[0]).\(parts[1]).\(changed)", now: 1_000) }
    }

    @Test("a token signed with another secret is refused as badSignature")
    func otherSecret() {
        let token = AccessTokenSigner(secret: [UInt8](repeating: 0x43, count: 32)).sign(claims)
        #expect(throws: AccessTokenError.badSignature) { try signer.verify(token, now: 1_000) }
    }

    @Test("expired at exactly exp and after")
    func expiry() {
        let token = signer.sign(claims)
        #expect(throws: AccessTokenError.expired) { try signer.verify(token, now: 1_900) }
        #expect(throws: AccessTokenError.expired) { try signer.verify(token, now: 10_000) }
    }

    @Test("another encoding of an HS256 header (keys swapped, spaces, no typ) still verifies; a bad typ does not",
          arguments: [(#"{"typ":"JWT","alg":"HS256"}"#, true), (#"{ "alg": "HS256" }"#, true),
                      (#"{"alg":"HS256","typ":"JWS"}"#, false)])
    func otherHeaderEncodings(header: String, valid: Bool) throws {
        let payload = #"{"exp":1900,"iat":1000,"role":"coach","sid":"family-1","sub":"user-1"}"#
        let input = CryptoFixtures.base64URL(header) + "." + CryptoFixtures.base64URL(payload)
        let token = input + "." + CryptoFixtures.base64URL(Digest.hmacSHA256(key: secret, message: Array(input.utf8)))
        if valid {
            #expect(try signer.verify(token, now: 1_500) == claims)
        } else {
            #expect(throws: AccessTokenError.malformed) { try signer.verify(token, now: 1_500) }
        }
    }

    @Test("alg none and other algorithms are refused")
    func otherAlgorithms() {
        let payload = CryptoFixtures.base64URL(#"{"exp":1900,"iat":1000,"role":"admin","sid":"f","sub":"u"}"#)
        let none = CryptoFixtures.base64URL(#"{"alg":"none","typ":"JWT"}"#) + "." + payload + "."
        #expect(throws: AccessTokenError.malformed) { try signer.verify(none, now: 1_000) }
        // HS512 header with an HS256 signature over it: the header, not the signature, decides.
        let input = CryptoFixtures.base64URL(#"{"alg":"HS512","typ":"JWT"}"#) + "." + payload
        let mac = CryptoFixtures.base64URL(Digest.hmacSHA256(key: secret, message: Array(input.utf8)))
        #expect(throws: AccessTokenError.malformed) { try signer.verify(input + "." + mac, now: 1_000) }
    }

    @Test("garbage is malformed", arguments: [
        "", "abc", "a.b", "a.b.c.d", "!!!.###.$$$", "..", "eyJhbGciOiJIUzI1NiJ9..",
    ])
    func garbage(token: String) {
        #expect(throws: AccessTokenError.malformed) { try signer.verify(token, now: 1_000) }
    }

    @Test("authentic token with unreadable claims is malformed")
    func badClaims() {
        let input = CryptoFixtures.base64URL(#"{"alg":"HS256","typ":"JWT"}"#) + "."
            + CryptoFixtures.base64URL(#"{"sub":"u","role":"superuser","sid":"f","iat":1,"exp":9999}"#)
        let mac = CryptoFixtures.base64URL(Digest.hmacSHA256(key: secret, message: Array(input.utf8)))
        #expect(throws: AccessTokenError.malformed) { try signer.verify(input + "." + mac, now: 1_000) }
    }
}
