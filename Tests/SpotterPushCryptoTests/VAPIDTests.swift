import Testing
@testable import SpotterPushCrypto

@Suite("Web Push: VAPID (RFC 8292)")
struct VAPIDTests {
    let vapid = try! VAPIDKey(pem: Fixtures.vapid, subject: "mailto:ops@spotter.example")
    let endpoint = "https://push.example.net:8443/wpush/v2/gAAAAABk?x=1"
    let now: Int64 = 1_800_000_000

    @Test("an endpoint's origin is its scheme, host and non-default port, lower-cased")
    func origins() throws {
        let cases: [(String, String)] = [
            ("https://fcm.googleapis.com/fcm/send/abc:def", "https://fcm.googleapis.com"),
            ("https://Updates.Push.Services.Mozilla.com/wpush/v2/x", "https://updates.push.services.mozilla.com"),
            ("HTTPS://web.push.apple.com:443/QGq", "https://web.push.apple.com"),
            ("https://push.example.net:8443", "https://push.example.net:8443"),
            ("http://127.0.0.1:9000/push?id=1", "http://127.0.0.1:9000"),
            ("http://localhost:80#frag", "http://localhost"),
            ("https://[::1]:8443/p", "https://[::1]:8443"),
            ("https://[2001:DB8::1]/p", "https://[2001:db8::1]"),
        ]
        for (endpoint, origin) in cases { #expect(try PushOrigin.of(endpoint: endpoint) == origin) }
        for bad in ["push.example.net/x", "ftp://push.example.net/x", "https:///x", "https://user@host/x",
                    "https://host:0/x", "https://host:65536/x", "https://host:/x", "https://host:8o/x",
                    "https://[::1/x", "https://[::1]x/x", "https://ho st/x", "https://hôst/x"] {
            #expect(throws: PushCryptoError.invalidEndpoint) { try PushOrigin.of(endpoint: bad) }
        }
    }

    @Test("the header is `vapid t=<JWT>, k=<public key>`; the JWT is ES256 over aud, exp and sub, and verifies under k")
    func authorization() throws {
        let header = try vapid.authorization(endpoint: endpoint, now: now)
        let prefix = "vapid t="
        #expect(header.hasPrefix(prefix))
        let parts = header.dropFirst(prefix.count).components(separatedBy: ", k=")
        #expect(parts.count == 2)
        #expect(parts[1] == vapid.publicKeyBase64URL)
        #expect(parts[1] == b64(vapid.privateKey.publicKey.uncompressed))
        let jwt = try DecodedJWT(parts[0])
        #expect(jwt.header as? [String: String] == ["alg": "ES256", "typ": "JWT"])
        #expect(jwt.claims["aud"] as? String == "https://push.example.net:8443")
        #expect(jwt.claims["exp"] as? Int == Int(now + VAPIDKey.defaultLifetimeSeconds))
        #expect(jwt.claims["sub"] as? String == "mailto:ops@spotter.example")
        #expect(jwt.signature.count == 64)
        #expect(vapid.privateKey.publicKey.isValidES256Signature(jwt.signature, for: jwt.signingInput))

        let (claims, key) = try VAPIDAuthorization.verify(header, endpoint: "https://PUSH.example.net:8443/other", now: now)
        #expect(key == vapid.privateKey.publicKey)
        #expect(claims == VAPIDClaims(aud: "https://push.example.net:8443", exp: now + 12 * 3600, sub: "mailto:ops@spotter.example"))
    }

    @Test("a token for another origin, expired, more than 24 h ahead, forged or with another algorithm is refused")
    func verifierRefuses() throws {
        let header = try vapid.authorization(endpoint: endpoint, now: now, lifetimeSeconds: 60)
        #expect(throws: PushCryptoError.claimsRejected("aud is not the endpoint's origin")) {
            try VAPIDAuthorization.verify(header, endpoint: "https://push.example.net/x", now: now)
        }
        #expect(throws: PushCryptoError.claimsRejected("exp has passed")) {
            try VAPIDAuthorization.verify(header, endpoint: endpoint, now: now + 60)
        }
        let far = "vapid t=\(vapid.token(audience: "https://push.example.net:8443", expiresAt: now + 24 * 3600 + 1)), k=\(vapid.publicKeyBase64URL)"
        #expect(throws: PushCryptoError.claimsRejected("exp is more than 24 hours ahead")) {
            try VAPIDAuthorization.verify(far, endpoint: endpoint, now: now)
        }
        let token = String(header.dropFirst("vapid t=".count).prefix { $0 != "," })
        let forged = replacingClaims(of: token, with: #"{"aud":"https://push.example.net:8443","exp":1900000000,"sub":"mailto:x@y"}"#)
        #expect(throws: PushCryptoError.badSignature) {
            try VAPIDAuthorization.verify("vapid t=\(forged), k=\(vapid.publicKeyBase64URL)", endpoint: endpoint, now: now)
        }
        let other = P256PrivateKey.generate().publicKey.base64URL
        #expect(throws: PushCryptoError.badSignature) {
            try VAPIDAuthorization.verify("vapid t=\(token), k=\(other)", endpoint: endpoint, now: now)
        }
        let parts = token.split(separator: ".")
        let none = "\(b64(Array(#"{"alg":"none","typ":"JWT"}"#.utf8))).\(parts[1]).\(parts[2])"
        for malformed in ["vapid t=\(none), k=\(vapid.publicKeyBase64URL)", "Bearer \(token)",
                          "vapid k=\(vapid.publicKeyBase64URL)", "vapid t=a.b, k=\(vapid.publicKeyBase64URL)"] {
            #expect(throws: PushCryptoError.malformedToken) {
                try VAPIDAuthorization.verify(malformed, endpoint: endpoint, now: now)
            }
        }
    }

    @Test("the subject must be a mailto: address or an https: URL")
    func subjects() throws {
        let key = try P256PrivateKey(pem: Fixtures.vapid)
        for good in ["mailto:ops@spotter.example", "MAILTO:a@b", "https://spotter.example/contact"] {
            #expect(try VAPIDKey(privateKey: key, subject: good).subject == good)
        }
        for bad in ["", "ops@spotter.example", "mailto:", "mailto:nobody", "http://spotter.example", "https://",
                    "mailto:a@b\", k=evil", "mailto:a@b c"] {
            #expect(throws: PushCryptoError.invalidSubject) { try VAPIDKey(privateKey: key, subject: bad) }
        }
    }

    @Test("the VAPID key prints its public half and subject, never the private key")
    func redacted() throws {
        let text = String(describing: vapid)
        #expect(text.contains(vapid.publicKeyBase64URL) && text.contains("redacted"))
        #expect(!text.contains("MIGHAgEA"))
    }
}
