import SeededRandom
import Testing
@testable import SpotterPushCrypto

@Suite("APNs: the provider token")
struct APNsTokenTests {
    let signingKey = try! APNsSigningKey(p8: Fixtures.apnsP8, keyID: "ABC123DEFG", teamID: "DEF123GHIJ")
    let issued: Int64 = 1_800_000_000

    @Test("the token is ES256 with kid = key id, claims iss = team id and iat, verified by the key's own public half")
    func token() throws {
        let jwt = try DecodedJWT(signingKey.token(issuedAt: issued))
        #expect(jwt.header as? [String: String] == ["alg": "ES256", "kid": "ABC123DEFG"])
        #expect(jwt.claims.count == 2)
        #expect(jwt.claims["iss"] as? String == "DEF123GHIJ")
        #expect(jwt.claims["iat"] as? Int == Int(issued))
        // The public key as `openssl pkey -pubout` wrote it from the .p8, not as this module derives it.
        let publicKey = try P256PublicKey(pem: Fixtures.apnsPublic)
        #expect(publicKey.isValidES256Signature(jwt.signature, for: jwt.signingInput))
    }

    @Test("key and team ids are 10 ASCII letters and digits")
    func identifiers() throws {
        let key = try P256PrivateKey(pem: Fixtures.apnsP8)
        for bad in ["", "ABC123DEF", "ABC123DEFGH", "ABC123DEF\"", "ABC 23DEFG", "ÄBC123DEFG"] {
            #expect(throws: PushCryptoError.invalidAPNsIdentifier(which: "key id")) {
                try APNsSigningKey(privateKey: key, keyID: bad, teamID: "DEF123GHIJ")
            }
            #expect(throws: PushCryptoError.invalidAPNsIdentifier(which: "team id")) {
                try APNsSigningKey(privateKey: key, keyID: "ABC123DEFG", teamID: bad)
            }
        }
    }

    @Test("one token serves every request until it is 50 minutes old; the next request then gets one issued at that moment")
    func reuseAndRenewal() throws {
        var tokens = APNsProviderToken(signingKey: signingKey)
        let first = tokens.token(now: issued)
        #expect(tokens.current?.issuedAt == issued)
        for later in [issued, issued + 1, issued + 20 * 60, issued + 50 * 60 - 1] {
            #expect(tokens.token(now: later) == first)
        }
        let second = tokens.token(now: issued + 50 * 60)
        #expect(second != first)
        #expect(try DecodedJWT(second).claims["iat"] as? Int == Int(issued + 50 * 60))
        #expect(tokens.token(now: issued + 99 * 60) == second)
        #expect(tokens.token(now: issued + 100 * 60) != second)
    }

    @Test("a token is never used past its hour, whatever the schedule of requests")
    func neverOlderThanAnHour() {
        var tokens = APNsProviderToken(signingKey: signingKey, renewAfterSeconds: 20 * 60)
        var now = issued
        var generator = SeededGenerator(seed: 7)
        var renewals: [Int64] = []
        for _ in 0..<400 {
            now += Int64(generator.next() % 900)
            let before = tokens.current?.issuedAt
            _ = tokens.token(now: now)
            let current = tokens.current!.issuedAt
            #expect(now - current < 60 * 60)
            if current != before { renewals.append(current) }
        }
        // Apple's other bound: no two renewals less than 20 minutes apart.
        for (a, b) in zip(renewals, renewals.dropFirst()) { #expect(b - a >= 20 * 60) }
    }

    @Test("a clock stepped back more than a minute behind the token's iat renews it; less does not")
    func clockStepsBack() {
        var tokens = APNsProviderToken(signingKey: signingKey)
        let first = tokens.token(now: issued)
        #expect(tokens.token(now: issued - 60) == first)
        #expect(tokens.token(now: issued - 61) != first)
    }

    @Test("a token APNs refused is replaced at the next request; a refusal of an older token changes nothing")
    func providerRejected() {
        var tokens = APNsProviderToken(signingKey: signingKey)
        let first = tokens.token(now: issued)
        tokens.providerRejected("an.older.token")
        #expect(tokens.token(now: issued + 5) == first)
        tokens.providerRejected(first)
        let second = tokens.token(now: issued + 6)
        #expect(second != first)
        #expect(tokens.current?.issuedAt == issued + 6)
    }

    @Test("the signing key prints its ids, never the key")
    func redacted() {
        let text = String(describing: signingKey)
        #expect(text.contains("ABC123DEFG") && text.contains("redacted") && !text.contains("MIGHAgEA"))
    }
}
