import Foundation
import SpotterCore
import SpotterPush
import SpotterServer
import Synchronization
import Testing
import TestSupport

/// Sign in with Apple and Google over a real server (issue 30 item 11, seed 001 "Platform"): sign-up, sign-in,
/// linking by a verified email only, the typed refusals, the key set's cache (a file and a URL), erasure.
@Suite("Sign in with Apple and Google", .serialized)
struct IdentitySignInTests {
    static let appleAudience = "com.example.spotter"
    static let googleAudience = "123-abc.apps.googleusercontent.com"

    /// A key set file holding `forges`' keys, in a fresh temporary folder.
    static func keySetFile(_ forges: [IDTokenForge]) throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("spotter-jwks-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let file = folder.appendingPathComponent("keys.json")
        try forges[0].jwks(forges.map { $0.jwk() }).write(to: file)
        return file.path
    }

    static func apple(_ forge: IDTokenForge, subject: String, now: Int64, email: String? = nil, verified: Any? = nil,
                      change: (inout [String: Any]) -> Void = { _ in }) -> String {
        var claims = IDTokenForge.claims(issuer: "https://appleid.apple.com", audience: appleAudience, subject: subject, now: now,
                                         email: email, emailVerified: verified)
        change(&claims)
        return forge.token(claims)
    }

    static func google(_ forge: IDTokenForge, subject: String, now: Int64, email: String?, verified: Any?) -> String {
        forge.token(IDTokenForge.claims(issuer: "https://accounts.google.com", audience: googleAudience, subject: subject,
                                        now: now, email: email, emailVerified: verified))
    }

    @Test func signsUpThenInAndJoinsAnAccountOnlyByAVerifiedEmail() throws {
        let forge = IDTokenForge()
        let keys = try Self.keySetFile([forge])
        let clock = TestClock()
        let fixture = try CoachingFixture { config in
            config.clock = clock
            config.identity.apple = IdentitySettings.Provider(keys: keys, audiences: [Self.appleAudience])
            config.identity.google = IdentitySettings.Provider(keys: keys, audiences: ["other", Self.googleAudience])
        }
        defer { fixture.server.stop() }
        let api = fixture.api
        let now = clock.now

        // A new person: a client account, the verified email kept, the app's name used.
        let first = try api.call("POST", "/v1/auth/apple", [
            "id_token": Self.apple(forge, subject: "001.rana", now: now, email: "Rana@Example.com", verified: "true"),
            "full_name": "Rana", "time_zone": "Asia/Riyadh"])
        #expect(first.status == 201)
        let user = try #require(first.object("user"))
        #expect(user["role"] as? String == "client")
        #expect(user["email"] as? String == "rana@example.com")
        #expect(user["full_name"] as? String == "Rana")
        #expect(user["time_zone"] as? String == "Asia/Riyadh")
        let ranaID = try #require(user["id"] as? String)
        // The same subject again (no email this time): the same account, 200.
        let again = try api.call("POST", "/v1/auth/apple", ["id_token": Self.apple(forge, subject: "001.rana", now: now)])
        #expect(again.status == 200)
        #expect(again.object("user")?["id"] as? String == ranaID)
        // The session is an ordinary one: /v1/me and a refresh work.
        #expect(try api.call("GET", "/v1/me", token: again.string("access_token")).string("id") == ranaID)
        #expect(try api.call("POST", "/v1/auth/refresh", ["refresh_token": again.string("refresh_token")!]).status == 200)

        // Google, with the verified email of an existing password account: that account, linked from now on.
        let clientA = try #require(try api.call("GET", "/v1/me", token: fixture.clientA.access).string("email"))
        let joined = try api.call("POST", "/v1/auth/google", [
            "id_token": Self.google(forge, subject: "g-1", now: now, email: clientA.uppercased(), verified: true)])
        #expect(joined.status == 200)
        #expect(joined.object("user")?["id"] as? String == fixture.clientA.id)
        #expect(try fixture.server.accounts.identityLinks(userID: fixture.clientA.id).map(\.subject) == ["g-1"])
        // The export lists the link beside the sessions.
        let export = try ExportDownload.fetch(port: fixture.server.port, token: joined.string("access_token"))
        let identities = try #require(export.json("sign-ins.json")["identities"] as? [[String: Any]])
        #expect(identities.map { "\($0["provider"] ?? "")/\($0["subject"] ?? "")" } == ["google/g-1"])
        #expect(identities.first?["linked_at"] as? Int == Int(now))
        // Once linked, the subject signs in even when the email changed at the provider.
        let moved = try api.call("POST", "/v1/auth/google", [
            "id_token": Self.google(forge, subject: "g-1", now: now, email: "new@example.com", verified: true)])
        #expect(moved.object("user")?["id"] as? String == fixture.clientA.id)

        // An unverified email never joins an account, and is not stored: a new account without one.
        let clientB = try #require(try api.call("GET", "/v1/me", token: fixture.clientB.access).string("email"))
        for (index, flag) in ([false, "false", "True", 1] as [Any]).enumerated() {
            let unverified = try api.call("POST", "/v1/auth/google", [
                "id_token": Self.google(forge, subject: "g-unverified-\(index)", now: now, email: clientB, verified: flag)])
            #expect(unverified.status == 201)
            #expect(unverified.object("user")?["id"] as? String != fixture.clientB.id)
            #expect(unverified.object("user")?["email"] == nil)
        }
        // An admin's email is never joined to a provider account.
        let admin = try api.call("POST", "/v1/auth/google", [
            "id_token": Self.google(forge, subject: "g-admin", now: now, email: "admin@spotter.test", verified: true)])
        #expect(admin.status == 403)
        #expect(admin.errorCode == "forbidden")
        #expect(try fixture.server.accounts.identityLinks(userID: fixture.admin.id).isEmpty)
        // A coach's verified email joins the coach's account (role kept).
        let coachEmail = try #require(try api.call("GET", "/v1/me", token: fixture.coachX.access).string("email"))
        let coach = try api.call("POST", "/v1/auth/apple", [
            "id_token": Self.apple(forge, subject: "001.coach", now: now, email: coachEmail, verified: true)])
        #expect(coach.status == 200)
        #expect(coach.object("user")?["role"] as? String == "coach")

        // A provider-only account erases itself with a fresh ID token of its own provider account, not another's.
        let solo = try api.call("POST", "/v1/auth/apple", ["id_token": Self.apple(forge, subject: "001.solo", now: now)])
        let soloAccess = try #require(solo.string("access_token"))
        #expect(try api.call("DELETE", "/v1/me", [:], token: soloAccess).errorCode == "forbidden")
        let foreign = try api.call("DELETE", "/v1/me", ["id_token": Self.apple(forge, subject: "001.rana", now: now)], token: soloAccess)
        #expect(foreign.status == 401)
        #expect(foreign.errorCode == "invalid_credentials")
        #expect(foreign.errorField == "id_token")
        #expect(try api.call("DELETE", "/v1/me", ["id_token": "a.b.c"], token: soloAccess).errorCode == "invalid_id_token")
        let expiredOwn = Self.apple(forge, subject: "001.solo", now: now - 7200)
        #expect(try api.call("DELETE", "/v1/me", ["id_token": expiredOwn], token: soloAccess).errorCode == "id_token_expired")
        let erased = try api.call("DELETE", "/v1/me", ["id_token": Self.apple(forge, subject: "001.solo", now: now)], token: soloAccess)
        #expect(erased.status / 100 == 2, "\(erased.text)")
        #expect(try api.call("GET", "/v1/me", token: soloAccess).status == 401)

        // A new account may be a coach's, as sign-up allows; never an admin's; an existing account keeps its role.
        let newCoach = try api.call("POST", "/v1/auth/google", [
            "id_token": Self.google(forge, subject: "g-coach", now: now, email: nil, verified: nil), "role": "coach"])
        #expect(newCoach.status == 201)
        #expect(newCoach.object("user")?["role"] as? String == "coach")
        #expect(try api.call("GET", "/v1/coaches", token: fixture.clientC.access).text.contains(newCoach.object("user")?["id"] as! String))
        #expect(try api.call("POST", "/v1/auth/google", [
            "id_token": Self.google(forge, subject: "g-admin-2", now: now, email: nil, verified: nil), "role": "admin"]).errorCode == "invalid_role")
        #expect(try api.call("POST", "/v1/auth/apple", [
            "id_token": Self.apple(forge, subject: "001.rana", now: now), "role": "coach"]).object("user")?["role"] as? String == "client")

        // Erasure removes the links: the Apple account signs up afresh afterwards.
        #expect(try api.call("DELETE", "/v1/admin/users/\(ranaID)", token: fixture.admin.access).status == 204)
        #expect(try fixture.server.accounts.identityLinks(userID: ranaID).isEmpty)
        let afresh = try api.call("POST", "/v1/auth/apple", ["id_token": Self.apple(forge, subject: "001.rana", now: now)])
        #expect(afresh.status == 201)
        #expect(afresh.object("user")?["id"] as? String != ranaID)
    }

    @Test func firstSignInsOfOnePersonAtOnceMakeOneAccount() throws {
        let forge = IDTokenForge()
        let keys = try Self.keySetFile([forge])
        let clock = TestClock()
        let server = try TestServer { config in
            config.clock = clock
            config.identity.apple = IdentitySettings.Provider(keys: keys, audiences: [Self.appleAudience])
        }
        defer { server.stop() }
        let token = Self.apple(forge, subject: "001.burst", now: clock.now, email: "burst@example.com", verified: true)
        let answers = Mutex<[(Int, String?)]>([])
        DispatchQueue.concurrentPerform(iterations: 12) { _ in
            let answer = try? APIClient(port: server.port).call("POST", "/v1/auth/apple", ["id_token": token])
            answers.withLock { $0.append((answer?.status ?? 0, answer?.object("user")?["id"] as? String)) }
        }
        let all = answers.withLock { $0 }
        #expect(all.filter { $0.0 == 201 }.count == 1, "\(all.map(\.0))")
        #expect(all.filter { $0.0 == 200 }.count == 11)
        #expect(Set(all.compactMap(\.1)).count == 1)
    }

    @Test func everyBadTokenIsATypedRefusalThatSaysNoMore() throws {
        let forge = IDTokenForge()
        let stranger = IDTokenForge(kid: forge.kid)
        let keys = try Self.keySetFile([forge])
        let clock = TestClock()
        let server = try TestServer { config in
            config.clock = clock
            config.identity.apple = IdentitySettings.Provider(keys: keys, audiences: [Self.appleAudience])
        }
        defer { server.stop() }
        let api = APIClient(port: server.port)
        let now = clock.now
        func refusal(_ body: [String: Any], _ path: String = "/v1/auth/apple") throws -> (Int, String?, String?) {
            let answer = try api.call("POST", path, body)
            return (answer.status, answer.errorCode, answer.errorField)
        }
        let valid = Self.apple(forge, subject: "s", now: now)
        let parts = valid.split(separator: ".").map(String.init)
        let invalid = (401, "invalid_id_token" as String?, "id_token" as String?)
        let cases: [(String, String)] = [
            ("another audience", Self.apple(forge, subject: "s", now: now) { $0["aud"] = "com.example.other" }),
            ("another issuer", Self.apple(forge, subject: "s", now: now) { $0["iss"] = "https://accounts.google.com" }),
            ("another signer", Self.apple(stranger, subject: "s", now: now)),
            ("unknown kid", forge.token(IDTokenForge.claims(issuer: "https://appleid.apple.com", audience: Self.appleAudience,
                                                            subject: "s", now: now), header: ["alg": "RS256", "kid": "nope"])),
            ("alg none", IDTokenForge.base64url(IDTokenForge.json(["alg": "none", "kid": forge.kid])) + "." + parts[1] + "."),
            ("HS256", IDTokenForge.base64url(IDTokenForge.json(["alg": "HS256", "kid": forge.kid])) + "." + parts[1] + "." + parts[2]),
            ("tampered", parts[0] + "." + IDTokenForge.base64url(IDTokenForge.json(
                IDTokenForge.claims(issuer: "https://appleid.apple.com", audience: Self.appleAudience, subject: "admin", now: now)))
                + "." + parts[2]),
            ("bad base64url", parts[0] + "." + parts[1] + "." + parts[2] + "="),
            ("control characters", parts[0] + "\u{1}." + parts[1] + "." + parts[2]),
            ("huge", valid + String(repeating: "A", count: 9000)),
            ("not a JWT", "hello"),
        ]
        for (name, token) in cases {
            let answer = try refusal(["id_token": token])
            #expect(answer == invalid, "\(name)")
        }
        let expired = try refusal(["id_token": Self.apple(forge, subject: "s", now: now - 3600)])
        #expect(expired == (401, "id_token_expired", "id_token"))
        let future = try refusal(["id_token": Self.apple(forge, subject: "s", now: now + 3600)])
        #expect(future == (401, "id_token_expired", "id_token"))
        let nonce = try refusal(["id_token": valid, "nonce": "abc"])
        #expect(nonce == (401, "invalid_id_token", "nonce"))
        // The request's own checks come first.
        #expect(try refusal([:]) == (400, "missing_field", "id_token"))
        #expect(try refusal(["id_token": ""]) == (400, "missing_field", "id_token"))
        #expect(try refusal(["id_token": 5]).1 == "bad_request")
        #expect(try refusal(["id_token": valid, "nonce": ""]) == (400, "bad_request", "nonce"))
        #expect(try refusal(["id_token": valid, "nonce": String(repeating: "n", count: 257)]) == (400, "bad_request", "nonce"))
        #expect(try refusal(["id_token": valid, "provider": "apple"]) == (400, "unknown_field", "provider"))
        #expect(try refusal(["id_token": valid, "time_zone": "EST"]).1 == "invalid_time_zone")
        // Google is off on this server.
        #expect(try refusal(["id_token": valid], "/v1/auth/google") == (404, "sign_in_provider_disabled", nil))
        // In Arabic, and with no detail of which check failed.
        let arabic = try api.call("POST", "/v1/auth/apple", ["id_token": Self.apple(stranger, subject: "s", now: now)],
                                  headers: [("Accept-Language", "ar")])
        #expect(arabic.errorMessage == "تعذّر تسجيل دخولك بهذا الحساب. يرجى المحاولة مرة أخرى.")
        #expect(arabic.json["error"].map { "\($0)" }?.contains("signature") == false)
        // None of these made an account; the valid token still signs up.
        #expect(try api.call("POST", "/v1/auth/apple", ["id_token": valid]).status == 201)
    }

    @Test func aRotatedKeyIsFetchedOnceAndAForgedKidCannotMakeTheServerRefetch() throws {
        let old = IDTokenForge(kid: "2026-a")
        let new = IDTokenForge(kid: "2026-b")
        let keys = try Self.keySetFile([old])
        let clock = TestClock()
        let server = try TestServer { config in
            config.clock = clock
            config.identity.apple = IdentitySettings.Provider(keys: keys, audiences: [Self.appleAudience])
        }
        defer { server.stop() }
        let api = APIClient(port: server.port)
        func signIn(_ forge: IDTokenForge) throws -> Int {
            try api.call("POST", "/v1/auth/apple", ["id_token": Self.apple(forge, subject: forge.kid, now: clock.now)]).status
        }
        #expect(try signIn(old) == 201)
        // The provider rotates: the file now holds the new key only.
        try old.jwks([new.jwk()]).write(to: URL(fileURLWithPath: keys))
        // Within a minute of the last read, an unknown kid makes no read: refused.
        #expect(try signIn(new) == 401)
        clock.advance(by: 61)
        #expect(try signIn(new) == 201)  // one read, the new key found
        // The old key is gone from the set (fresh for an hour): refused, and no read for a minute.
        #expect(try signIn(old) == 401)
        // The source fails (the file removed) after the set went stale: the keys at hand still verify.
        try FileManager.default.removeItem(atPath: keys)
        clock.advance(by: 3601)
        #expect(try signIn(new) == 200)
    }

    @Test func aKeySetURLIsFetchedOnceForItsMaxAgeAndAnUnreachableOneIs503() throws {
        let forge = IDTokenForge()
        let file = try Self.keySetFile([forge])
        let endpoint = try KeySetEndpoint(file: file, maxAge: 120)
        defer { endpoint.stop() }
        let clock = TestClock()
        let fetcher = CurlKeySetFetcher()
        defer { fetcher.shutdown() }
        let server = try TestServer { config in
            config.clock = clock
            config.identity.fetcher = fetcher
            config.identity.apple = IdentitySettings.Provider(keys: "http://127.0.0.1:\(endpoint.port)/auth/keys",
                                                              audiences: [Self.appleAudience])
            // Nothing listens on port 9 of the loopback address.
            config.identity.google = IdentitySettings.Provider(keys: "http://127.0.0.1:9/certs", audiences: [Self.googleAudience])
        }
        defer { server.stop() }
        let api = APIClient(port: server.port)
        func signIn() throws -> Int {
            try api.call("POST", "/v1/auth/apple", ["id_token": Self.apple(forge, subject: "u", now: clock.now)]).status
        }
        #expect(try endpoint.fetches() == 0)
        #expect(try signIn() == 201)
        #expect(try signIn() == 200)
        #expect(try endpoint.fetches() == 1)
        clock.advance(by: 119)
        #expect(try signIn() == 200)
        #expect(try endpoint.fetches() == 1)
        clock.advance(by: 2)
        #expect(try signIn() == 200)
        #expect(try endpoint.fetches() == 2)
        // A malformed token costs no fetch.
        #expect(try api.call("POST", "/v1/auth/apple", ["id_token": "a.b.c"]).status == 401)
        #expect(try endpoint.fetches() == 2)

        let google = Self.google(forge, subject: "g", now: clock.now, email: nil, verified: nil)
        let down = try api.call("POST", "/v1/auth/google", ["id_token": google])
        #expect(down.status == 503)
        #expect(down.errorCode == "identity_keys_unavailable")
        #expect(down.headers["Retry-After"] == "30")
        // Within the 30 s after a failure no fetch is tried; the wait counts down.
        clock.advance(by: 10)
        let again = try api.call("POST", "/v1/auth/google", ["id_token": google])
        #expect(again.errorCode == "identity_keys_unavailable")
        #expect(again.headers["Retry-After"] == "20")
    }

    @Test func tokensSignedByPyJWTAreAcceptedAndItsHS256ForgeryRefused() throws {
        guard IdentityPython.available else { return }
        let forge = IDTokenForge()
        let keys = try Self.keySetFile([forge])
        let clock = TestClock()
        let server = try TestServer { config in
            config.clock = clock
            config.identity.apple = IdentitySettings.Provider(keys: keys, audiences: [Self.appleAudience])
        }
        defer { server.stop() }
        let api = APIClient(port: server.port)
        let claims = IDTokenForge.claims(issuer: "https://appleid.apple.com", audience: Self.appleAudience, subject: "py.1",
                                         now: clock.now, email: "py@example.com", emailVerified: "true")
        let signed = try IdentityPython.ask("sign", ["pem": forge.privateKeyPEM, "kid": forge.kid, "claims": claims])
        let accepted = try api.call("POST", "/v1/auth/apple", ["id_token": signed["token"] as! String])
        #expect(accepted.status == 201)
        #expect(accepted.object("user")?["email"] as? String == "py@example.com")
        let forged = try IdentityPython.ask("sign", ["pem": forge.privateKeyPEM, "kid": forge.kid, "claims": claims, "alg": "HS256"])
        #expect(try api.call("POST", "/v1/auth/apple", ["id_token": forged["token"] as! String]).errorCode == "invalid_id_token")
        // And PyJWT accepts what the forge signs, read with the key set as the server reads it.
        let jwks = try JSONSerialization.jsonObject(with: forge.jwks()) as! [String: Any]
        // (PyJWT reads the machine's clock: the claims are for now, not for the server's test clock.)
        let current = IDTokenForge.claims(issuer: "https://appleid.apple.com", audience: Self.appleAudience, subject: "py.2",
                                          now: Int64(Date().timeIntervalSince1970))
        let verdict = try IdentityPython.ask("verify", ["jwks": jwks, "token": forge.token(current), "audience": Self.appleAudience,
                                                         "issuer": "https://appleid.apple.com"])
        #expect(verdict["ok"] as? Bool == true, "\(verdict)")
        #expect(verdict["sub"] as? String == "py.2")
    }
}
