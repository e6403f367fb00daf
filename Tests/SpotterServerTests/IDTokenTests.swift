import Foundation
import SpotterCore
import Testing
import TestSupport

/// The ID token's checks without sockets (`IDToken`, `IDTokenVerifier`, `RSAPublicKey`, `JSONWebKeySet`): every
/// way a token can be wrong, at the edges.
@Suite("ID tokens (Sign in with Apple and Google), pure")
struct IDTokenTests {
    static let forge = IDTokenForge()
    static let other = IDTokenForge(kid: "other")
    static let now: Int64 = 1_800_000_000
    static let apple = IDTokenVerifier(provider: .apple, audiences: ["com.example.app"])
    static let google = IDTokenVerifier(provider: .google, audiences: ["123.apps.googleusercontent.com", "web-client"])
    static var key: RSAPublicKey { RSAPublicKey(modulus: forge.modulus, exponent: forge.exponent)! }

    static func appleClaims(_ change: (inout [String: Any]) -> Void = { _ in }) -> [String: Any] {
        var claims = IDTokenForge.claims(issuer: "https://appleid.apple.com", audience: "com.example.app", subject: "001.apple",
                                         now: now, email: "Rana@Example.com", emailVerified: "true")
        change(&claims)
        return claims
    }

    static func check(_ token: String, _ verifier: IDTokenVerifier = apple, nonce: String? = nil,
                      key: RSAPublicKey = key) throws(IDTokenRefusal) -> VerifiedIdentity {
        try verifier.check(try IDToken(parsing: token), key: key, now: now, nonce: nonce)
    }

    static func refusal(_ token: String, _ verifier: IDTokenVerifier = apple, nonce: String? = nil,
                        key: RSAPublicKey = key) -> IDTokenRefusal? {
        do {
            _ = try check(token, verifier, nonce: nonce, key: key)
            return nil
        } catch {
            return error
        }
    }

    @Test func aValidAppleTokenSaysWhoAndTheVerifiedEmailNormalized() throws {
        let identity = try Self.check(Self.forge.token(Self.appleClaims()))
        #expect(identity == VerifiedIdentity(provider: .apple, subject: "001.apple", verifiedEmail: "rana@example.com", name: nil))
        #expect(try IDToken(parsing: Self.forge.token(Self.appleClaims())).keyID == "test-key-1")
    }

    @Test func googleBothIssuerFormsABooleanEmailFlagAndAnAudienceList() throws {
        for issuer in ["https://accounts.google.com", "accounts.google.com"] {
            var claims = IDTokenForge.claims(issuer: issuer, audience: "x", subject: "1099", now: Self.now,
                                             email: "g@example.com", emailVerified: true)
            claims["aud"] = ["someone-else", "web-client"]
            claims["name"] = "Ghada G"
            let identity = try Self.check(Self.forge.token(claims), Self.google)
            #expect(identity.verifiedEmail == "g@example.com")
            #expect(identity.name == "Ghada G")
        }
        // Apple's issuer is not Google's, and the reverse.
        let apple = Self.forge.token(Self.appleClaims { $0["aud"] = "web-client" })
        #expect(Self.refusal(apple, Self.google) == .issuer)
    }

    @Test func emailIsVerifiedOnlyByTrueOrTheStringTrue() throws {
        let flags: [(Any, Bool)] = [("true", true), (true, true), ("false", false), (false, false), ("TRUE", false),
                                    (1, false), ("yes", false)]
        for (flag, verified) in flags {
            let identity = try Self.check(Self.forge.token(Self.appleClaims { $0["email_verified"] = flag }))
            #expect((identity.verifiedEmail != nil) == verified, "\(flag)")
        }
    }

    @Test func noEmailFlagOrAnUnusableEmailIsNoVerifiedEmail() throws {
        #expect(try Self.check(Self.forge.token(Self.appleClaims { $0["email_verified"] = nil })).verifiedEmail == nil)
        #expect(try Self.check(Self.forge.token(Self.appleClaims { $0["email"] = "not an email" })).verifiedEmail == nil)
        #expect(try Self.check(Self.forge.token(Self.appleClaims { $0["email"] = nil })).verifiedEmail == nil)
    }

    @Test func algorithmsOtherThanRS256AreRefusedBeforeAnyKeyIsUsed() throws {
        let payload = IDTokenForge.base64url(IDTokenForge.json(Self.appleClaims()))
        for alg in ["none", "HS256", "RS384", "ES256", "PS256", "rs256", ""] {
            let header = IDTokenForge.base64url(IDTokenForge.json(["alg": alg, "kid": "test-key-1"]))
            #expect(Self.refusal("\(header).\(payload).c2ln") == .algorithm, "\(alg)")
        }
        // alg none with the empty signature the RFC gives it: not even three non-empty parts.
        let none = IDTokenForge.base64url(IDTokenForge.json(["alg": "none"]))
        #expect(Self.refusal("\(none).\(payload).") == .malformed)
        // The HS256 confusion: an HMAC keyed with the public modulus, signed by hand.
        let hs = IDTokenForge.base64url(IDTokenForge.json(["alg": "HS256", "kid": "test-key-1"]))
        #expect(Self.refusal("\(hs).\(payload).\(IDTokenForge.base64url(Self.forge.modulus))") == .algorithm)
    }

    @Test func aTamperedPayloadHeaderOrSignatureAndAnotherSignerFail() throws {
        let token = Self.forge.token(Self.appleClaims())
        let parts = token.split(separator: ".").map(String.init)
        let forged = IDTokenForge.base64url(IDTokenForge.json(Self.appleClaims { $0["sub"] = "001.someone-else" }))
        #expect(Self.refusal("\(parts[0]).\(forged).\(parts[2])") == .signature)
        let header = IDTokenForge.base64url(IDTokenForge.json(["alg": "RS256", "kid": "test-key-1", "typ": "JOSE"]))
        #expect(Self.refusal("\(header).\(parts[1]).\(parts[2])") == .signature)
        var signature = Array(Data(base64Encoded: Self.standard(parts[2]))!)
        signature[signature.count - 1] ^= 1
        #expect(Self.refusal("\(parts[0]).\(parts[1]).\(IDTokenForge.base64url(signature))") == .signature)
        // A shorter signature (one byte off) never reaches OpenSSL.
        #expect(Self.refusal("\(parts[0]).\(parts[1]).\(IDTokenForge.base64url(Array(signature.dropLast())))") == .signature)
        // Signed by another key: the set's key does not verify it.
        #expect(Self.refusal(Self.other.token(Self.appleClaims(), header: ["alg": "RS256", "kid": "test-key-1"])) == .signature)
    }

    @Test func badBase64urlWrongPartCountsAndNonJSONAreMalformed() {
        let token = Self.forge.token(Self.appleClaims())
        let parts = token.split(separator: ".").map(String.init)
        for bad in [
            "", ".", "..", "a.b", "\(token).x", "\(parts[0]).\(parts[1])", "\(parts[0])=.\(parts[1]).\(parts[2])",
            "\(parts[0]).\(parts[1]).\(parts[2])==", "\(parts[0].replacingOccurrences(of: "e", with: "+")).\(parts[1]).\(parts[2])",
            "\(parts[0]).\(parts[1]).\(parts[2]) ", "\(parts[0]).\(parts[1])\n.\(parts[2])",
            "\(IDTokenForge.base64url(Array("not json".utf8))).\(parts[1]).\(parts[2])",
            "\(parts[0]).\(IDTokenForge.base64url(Array("[1,2]".utf8))).\(parts[2])",
        ] {
            #expect(Self.refusal(bad) == .malformed, "\(bad.prefix(40))")
        }
    }

    @Test func missingOrOutOfRangeClaimsAreMalformed() {
        for change: (inout [String: Any]) -> Void in [
            { $0["sub"] = nil }, { $0["sub"] = "" }, { $0["sub"] = String(repeating: "s", count: 256) }, { $0["iss"] = nil },
            { $0["aud"] = nil }, { $0["aud"] = [String]() }, { $0["aud"] = 5 }, { $0["exp"] = nil }, { $0["exp"] = "soon" },
            { $0["iat"] = nil },
        ] {
            #expect(Self.refusal(Self.forge.token(Self.appleClaims(change))) == .malformed)
        }
        // Times beyond Int64 or not whole: not a time.
        let header = IDTokenForge.base64url(IDTokenForge.json(["alg": "RS256", "kid": "test-key-1"]))
        for exp in ["9223372036854775808", "-9223372036854775809", "null", "1800000000.5"] {
            let payload = #"{"iss":"https://appleid.apple.com","aud":"com.example.app","sub":"1","iat":1799999990,"exp":"#
                + exp + "}"
            let input = header + "." + IDTokenForge.base64url(Array(payload.utf8))
            #expect(Self.refusal(input + "." + IDTokenForge.base64url(Self.forge.sign(Array(input.utf8)))) == .malformed, "\(exp)")
        }
        // A critical extension this reader cannot understand, whatever its value; a key URL in the header is ignored.
        for crit in [["exp"], [String](), "b64"] as [Any] {
            #expect(Self.refusal(Self.forge.token(Self.appleClaims(), header: ["alg": "RS256", "kid": "test-key-1", "crit": crit])) == .malformed)
        }
        #expect(Self.refusal(Self.forge.token(Self.appleClaims(), header: ["alg": "RS256", "kid": "test-key-1",
                                                                            "jku": "https://evil.example/keys"])) == nil)
        // A kid is required, and bounded.
        #expect(Self.refusal(Self.forge.token(Self.appleClaims(), header: ["alg": "RS256"])) == .malformed)
        #expect(Self.refusal(Self.forge.token(Self.appleClaims(), header: ["alg": "RS256", "kid": String(repeating: "k", count: 256)]))
                == .malformed)
        // The longest subject allowed passes.
        #expect(Self.refusal(Self.forge.token(Self.appleClaims { $0["sub"] = String(repeating: "s", count: 255) })) == nil)
    }

    @Test func aTokenOver8KiBIsRefusedBeforeParsing() {
        let padded = Self.forge.token(Self.appleClaims { $0["pad"] = String(repeating: "x", count: 9000) })
        #expect(Self.refusal(padded) == .tooLarge)
        #expect(Self.refusal(String(repeating: "a", count: IDToken.maxBytes + 1)) == .tooLarge)
        #expect(Self.refusal(String(repeating: "a", count: IDToken.maxBytes)) == .malformed)
    }

    @Test func issuerAndAudienceMustBeTheProvidersAndThisApps() {
        #expect(Self.refusal(Self.forge.token(Self.appleClaims { $0["iss"] = "https://appleid.apple.com/" })) == .issuer)
        #expect(Self.refusal(Self.forge.token(Self.appleClaims { $0["iss"] = "appleid.apple.com" })) == .issuer)
        #expect(Self.refusal(Self.forge.token(Self.appleClaims { $0["aud"] = "com.example.other" })) == .audience)
        #expect(Self.refusal(Self.forge.token(Self.appleClaims { $0["aud"] = ["a", "b"] })) == .audience)
        #expect(Self.refusal(Self.forge.token(Self.appleClaims { $0["aud"] = ["a", "com.example.app"] })) == nil)
    }

    @Test func expiryAndIssueTimeAtTheSkewsEdges() {
        let now = Self.now
        #expect(Self.refusal(Self.forge.token(Self.appleClaims { $0["exp"] = now - 59; $0["iat"] = now - 600 })) == nil)
        #expect(Self.refusal(Self.forge.token(Self.appleClaims { $0["exp"] = now - 60; $0["iat"] = now - 600 })) == .expired)
        #expect(Self.refusal(Self.forge.token(Self.appleClaims { $0["exp"] = Int64.min; $0["iat"] = Int64.min })) == .expired)
        #expect(Self.refusal(Self.forge.token(Self.appleClaims { $0["iat"] = now + 60 })) == nil)
        #expect(Self.refusal(Self.forge.token(Self.appleClaims { $0["iat"] = now + 61; $0["exp"] = now + 600 })) == .issuedInFuture)
        #expect(Self.refusal(Self.forge.token(Self.appleClaims { $0["iat"] = now; $0["exp"] = Int64.max })) == nil)
        #expect(Self.refusal(Self.forge.token(Self.appleClaims { $0["iat"] = Int64.max; $0["exp"] = Int64.max })) == .issuedInFuture)
        // Issued after it expires: refused even inside the window.
        #expect(Self.refusal(Self.forge.token(Self.appleClaims { $0["iat"] = now + 30; $0["exp"] = now + 10 })) == .issuedInFuture)
        // No skew at all.
        let strict = IDTokenVerifier(provider: .apple, audiences: ["com.example.app"], skewSeconds: 0)
        #expect(Self.refusal(Self.forge.token(Self.appleClaims { $0["exp"] = now }), strict) == .expired)
        #expect(Self.refusal(Self.forge.token(Self.appleClaims { $0["exp"] = now + 1 }), strict) == nil)
    }

    @Test func theNonceIsTheRawOneOrItsSHA256InHex() {
        let raw = "n-0S6_WzA2Mj"
        let hashed = Digest.sha256Hex(raw)
        #expect(Self.refusal(Self.forge.token(Self.appleClaims { $0["nonce"] = raw }), nonce: raw) == nil)
        #expect(Self.refusal(Self.forge.token(Self.appleClaims { $0["nonce"] = hashed }), nonce: raw) == nil)
        #expect(Self.refusal(Self.forge.token(Self.appleClaims { $0["nonce"] = hashed }), nonce: hashed + "0") == .nonce)
        #expect(Self.refusal(Self.forge.token(Self.appleClaims { $0["nonce"] = raw }), nonce: "n-0S6_WzA2MJ") == .nonce)
        #expect(Self.refusal(Self.forge.token(Self.appleClaims()), nonce: raw) == .nonce)
        // A token with a nonce and a request without one: the request did not ask.
        #expect(Self.refusal(Self.forge.token(Self.appleClaims { $0["nonce"] = raw })) == nil)
    }

    @Test func rsaKeysAtTheEdges() {
        let n = Self.forge.modulus, e = Self.forge.exponent
        #expect(RSAPublicKey(modulus: [0, 0] + n, exponent: [0] + e)?.modulusBytes == 256)
        #expect(RSAPublicKey(modulus: [], exponent: e) == nil)
        #expect(RSAPublicKey(modulus: n, exponent: []) == nil)
        #expect(RSAPublicKey(modulus: n, exponent: [1]) == nil)
        #expect(RSAPublicKey(modulus: n, exponent: [0x01, 0x00, 0x00]) == nil)  // even
        #expect(RSAPublicKey(modulus: n, exponent: [1, 0, 0, 0, 1]) == nil)  // over 4 bytes
        #expect(RSAPublicKey(modulus: Array(n.dropFirst()), exponent: e) == nil)  // 2040 bits
        var even = n
        even[even.count - 1] &= 0xFE
        #expect(RSAPublicKey(modulus: even, exponent: e) == nil)
        #expect(RSAPublicKey(modulus: [UInt8](repeating: 0xFF, count: 1025), exponent: e) == nil)  // 8200 bits
        let weak = IDTokenForge(kid: "weak", bits: 1024)
        #expect(RSAPublicKey(modulus: weak.modulus, exponent: weak.exponent) == nil)
        let key = Self.key
        #expect(!key.verify(signature: [], of: Array("x".utf8)))
        #expect(!key.verify(signature: [UInt8](repeating: 0, count: 256), of: Array("x".utf8)))
        #expect(key.verify(signature: Self.forge.sign(Array("x".utf8)), of: Array("x".utf8)))
        #expect(!key.verify(signature: Self.forge.sign(Array("x".utf8)), of: Array("y".utf8)))
    }

    @Test func keySetsKeepOnlyRSASigningKeys() throws {
        let forge = Self.forge
        var encryption = forge.jwk(kid: "enc")
        encryption["use"] = "enc"
        var ps = forge.jwk(kid: "ps")
        ps["alg"] = "PS256"
        var broken = forge.jwk(kid: "broken")
        broken["n"] = "not+base64url"
        let ec: [String: Any] = ["kty": "EC", "kid": "ec", "crv": "P-256", "x": "AA", "y": "AA"]
        var noUse = forge.jwk(kid: "plain")
        noUse["use"] = nil
        noUse["alg"] = nil
        let set = try JSONWebKeySet(parsing: Array(forge.jwks([encryption, ps, broken, ec, forge.jwk(), noUse, forge.jwk(kid: "")])))
        #expect(Set(set.keys.keys) == ["test-key-1", "plain"])

        #expect(throws: JSONWebKeySet.Failure.empty) { try JSONWebKeySet(parsing: Array(forge.jwks([ec]))) }
        #expect(throws: JSONWebKeySet.Failure.empty) { try JSONWebKeySet(parsing: Array(#"{"keys":[]}"#.utf8)) }
        #expect(throws: JSONWebKeySet.Failure.malformed) { try JSONWebKeySet(parsing: Array(#"{"keys":{}}"#.utf8)) }
        #expect(throws: JSONWebKeySet.Failure.malformed) { try JSONWebKeySet(parsing: Array("<html>".utf8)) }
        #expect(throws: JSONWebKeySet.Failure.malformed) { try JSONWebKeySet(parsing: []) }
        let huge = Array(#"{"keys":[],"pad":""#.utf8) + [UInt8](repeating: 0x61, count: JSONWebKeySet.maxBytes) + Array(#""}"#.utf8)
        #expect(throws: JSONWebKeySet.Failure.tooLarge) { try JSONWebKeySet(parsing: huge) }
        // At most 32 keys are kept.
        let many = (0..<40).map { forge.jwk(kid: "k\($0)") }
        #expect(try JSONWebKeySet(parsing: Array(forge.jwks(many))).keys.count == JSONWebKeySet.maxKeys)
    }

    @Test func freshnessFollowsMaxAgeWithinBounds() {
        #expect(JSONWebKeySet.freshness(cacheControl: "public, max-age=21600, must-revalidate, no-transform") == 21600)
        #expect(JSONWebKeySet.freshness(cacheControl: "max-age=5") == 60)
        #expect(JSONWebKeySet.freshness(cacheControl: "max-age=999999999") == 86400)
        #expect(JSONWebKeySet.freshness(cacheControl: "max-age=99999999999999999999") == 3600)
        #expect(JSONWebKeySet.freshness(cacheControl: "max-age=-5") == 3600)
        #expect(JSONWebKeySet.freshness(cacheControl: "max-age=") == 3600)
        #expect(JSONWebKeySet.freshness(cacheControl: "no-store") == 60)
        #expect(JSONWebKeySet.freshness(cacheControl: "private") == 3600)
        #expect(JSONWebKeySet.freshness(cacheControl: nil) == 3600)
    }

    static func standard(_ url: String) -> String {
        var text = url.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while text.count % 4 != 0 { text += "=" }
        return text
    }
}
