import Foundation
import Testing
@testable import SpotterPushCrypto

/// A service-account key file as Google issues it, with this test's RSA key.
func serviceAccountJSON(_ fields: [String: String?] = [:]) -> [UInt8] {
    var file: [String: String] = [
        "type": "service_account", "project_id": "spotter-test", "private_key_id": "0123abcd",
        "private_key": Fixtures.serviceAccountKey, "client_email": "push@spotter-test.iam.gserviceaccount.com",
        "client_id": "1234567890", "auth_uri": "https://accounts.google.com/o/oauth2/auth",
        "token_uri": "https://oauth2.googleapis.com/token",
    ]
    for (name, value) in fields { file[name] = value }
    return Array(try! JSONSerialization.data(withJSONObject: file))
}

@Suite("FCM: the service account and its grant")
struct FCMServiceAccountTests {
    let account = try! FCMServiceAccount(json: serviceAccountJSON())
    let now: Int64 = 1_800_000_000

    @Test("the key file's fields are read, and the private key is an RSA key")
    func reads() throws {
        #expect(account.clientEmail == "push@spotter-test.iam.gserviceaccount.com")
        #expect(account.projectID == "spotter-test")
        #expect(account.tokenURI == "https://oauth2.googleapis.com/token")
        #expect(account.privateKeyID == "0123abcd")
        #expect(try FCMServiceAccount(json: serviceAccountJSON(["type": nil, "private_key_id": nil])).privateKeyID == nil)
    }

    @Test("a key file without a field, with an empty one, of another type or not JSON names what is wrong")
    func refusals() {
        for field in ["client_email", "project_id", "token_uri", "private_key"] {
            #expect(throws: PushCryptoError.invalidServiceAccount(field: field)) {
                try FCMServiceAccount(json: serviceAccountJSON([field: nil]))
            }
            #expect(throws: PushCryptoError.invalidServiceAccount(field: field)) {
                try FCMServiceAccount(json: serviceAccountJSON([field: ""]))
            }
        }
        #expect(throws: PushCryptoError.invalidServiceAccount(field: "type")) {
            try FCMServiceAccount(json: serviceAccountJSON(["type": "authorized_user"]))
        }
        #expect(throws: PushCryptoError.invalidServiceAccount(field: "token_uri")) {
            try FCMServiceAccount(json: serviceAccountJSON(["token_uri": "oauth2.googleapis.com/token"]))
        }
        #expect(throws: PushCryptoError.invalidServiceAccount(field: "JSON object")) { try FCMServiceAccount(json: Array("[1]".utf8)) }
        #expect(throws: PushCryptoError.wrongKeyType(expected: "an RSA key of at least 2048 bits")) {
            try FCMServiceAccount(json: serviceAccountJSON(["private_key": Fixtures.vapid]))
        }
    }

    @Test("the assertion is RS256 over iss, scope, aud = token_uri, iat and exp = iat + 3600, with the key id")
    func assertion() throws {
        let token = account.assertion(now: now)
        let jwt = try DecodedJWT(token)
        #expect(jwt.header as? [String: String] == ["alg": "RS256", "kid": "0123abcd", "typ": "JWT"])
        #expect(jwt.claims["iss"] as? String == "push@spotter-test.iam.gserviceaccount.com")
        #expect(jwt.claims["scope"] as? String == "https://www.googleapis.com/auth/firebase.messaging")
        #expect(jwt.claims["aud"] as? String == "https://oauth2.googleapis.com/token")
        #expect(jwt.claims["iat"] as? Int == Int(now))
        #expect(jwt.claims["exp"] as? Int == Int(now + 3600))
        #expect(jwt.claims.count == 5)
        #expect(jwt.signature.count == 256)
        #expect(account.privateKey.isValidRS256Signature(jwt.signature, for: jwt.signingInput))
        #expect(account.assertion(now: now) == token)   // RS256 is deterministic
        #expect(account.assertion(now: now + 1) != token)
    }

    @Test("the grant's body is form-encoded: the JWT-bearer grant type and the assertion")
    func grantBody() {
        #expect(account.grantRequestBody(now: now)
                == "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=" + account.assertion(now: now))
        #expect(FormEncoding.escape("a b+c/d=é*-._~") == "a+b%2Bc%2Fd%3D%C3%A9*-._%7E")
    }

    @Test("the account prints its email and project, never the key")
    func redacted() {
        let text = String(describing: account)
        #expect(text.contains("spotter-test") && text.contains("redacted"))
        #expect(!text.contains("PRIVATE") && !text.contains("MII"))
    }
}

@Suite("FCM: the access token")
struct FCMAccessTokenTests {
    let now: Int64 = 1_800_000_000

    func answer(_ json: String) throws(PushCryptoError) -> FCMAccessToken {
        try FCMAccessToken(tokenResponse: Array(json.utf8), receivedAt: now)
    }

    @Test("the token endpoint's answer gives the token, its expiry and a refresh a minute before")
    func parses() throws {
        let token = try answer(#"{"access_token":"ya29.c.abc","expires_in":3599,"token_type":"Bearer"}"#)
        #expect(token.value == "ya29.c.abc")
        #expect(token.expiresAt == now + 3599)
        #expect(token.refreshAt == now + 3599 - 60)
        #expect(try answer(#"{"access_token":"t","expires_in":30}"#).refreshAt == now + 15)
        for bad in [#"{"expires_in":3599}"#, #"{"access_token":"","expires_in":3599}"#, #"{"access_token":"t"}"#,
                    #"{"access_token":"t","expires_in":0}"#, #"{"access_token":"t","expires_in":86401}"#,
                    #"{"access_token":"t","expires_in":3599,"token_type":"mac"}"#, "not json",
                    #"{"error":"invalid_grant","error_description":"Invalid JWT Signature."}"#] {
            #expect(throws: PushCryptoError.invalidTokenResponse) { try answer(bad) }
        }
        #expect(!String(describing: token).contains("ya29"))
    }

    @Test("the first push requests a token and the next ones wait; then every push sends with it")
    func oneGrantAtATime() throws {
        var cache = FCMAccessTokenCache()
        #expect(cache.next(now: now) == .requestToken)
        #expect(cache.next(now: now) == .waitForToken)
        #expect(cache.next(now: now + 29) == .waitForToken)
        let token = try answer(#"{"access_token":"one","expires_in":3600}"#)
        cache.received(token)
        #expect(cache.next(now: now + 1) == .send(token))
        #expect(cache.next(now: now + 3600 - 61) == .send(token))
        // A minute before expiry: one grant, the others wait for it.
        #expect(cache.next(now: now + 3600 - 60) == .requestToken)
        #expect(cache.next(now: now + 3600 - 59) == .waitForToken)
    }

    @Test("a grant with no answer for 30 s, or a failed one, lets the next push start another")
    func lostGrants() {
        var cache = FCMAccessTokenCache()
        #expect(cache.next(now: now) == .requestToken)
        #expect(cache.next(now: now + 30) == .requestToken)
        #expect(cache.next(now: now + 31) == .waitForToken)
        cache.grantFailed()
        #expect(cache.next(now: now + 32) == .requestToken)
        // A clock stepped back behind the grant's start does not wait forever.
        #expect(cache.next(now: now) == .requestToken)
    }

    @Test("a token FCM refused (401) is dropped; a refusal of an older one changes nothing")
    func providerRejected() throws {
        var cache = FCMAccessTokenCache()
        _ = cache.next(now: now)
        let old = try answer(#"{"access_token":"old","expires_in":3600}"#)
        let current = try answer(#"{"access_token":"current","expires_in":3600}"#)
        cache.received(current)
        cache.providerRejected(old)
        #expect(cache.next(now: now + 1) == .send(current))
        cache.providerRejected(current)
        #expect(cache.token == nil)
        #expect(cache.next(now: now + 2) == .requestToken)
    }
}
