import Foundation
import Testing
import SpotterCore
import SpotterPorts
import TestSupport
import WebSocket

@Suite("Accounts API", .serialized)
struct AccountsAPITests {
    @Test func signUpNormalizesEmailSignsInAndRefusesDuplicates() throws {
        let server = try TestServer()
        defer { server.stop() }
        let api = APIClient(port: server.port)
        let created = try api.call("POST", "/v1/auth/signup", [
            "role": "client", "full_name": "  Sara Ali ", "email": "  Sara@Example.COM ",
            "password": "secret1", "password_confirmation": "secret1",
        ])
        #expect(created.status == 201)
        #expect(created.string("token_type") == "Bearer")
        #expect(created["expires_in"] as? Int == 900)
        let user = try #require(created.object("user"))
        #expect(user["email"] as? String == "sara@example.com")
        #expect(user["full_name"] as? String == "Sara Ali")
        #expect(user["role"] as? String == "client")
        #expect(user["onboarding_completed"] as? Bool == false)

        let me = try api.call("GET", "/v1/me", token: created.string("access_token"))
        #expect(me.status == 200)
        #expect(me.string("id") == user["id"] as? String)

        let signedIn = try api.call("POST", "/v1/auth/signin", ["email": "SARA@example.com", "password": "secret1"])
        #expect(signedIn.status == 200)
        #expect(signedIn.string("refresh_token") != created.string("refresh_token"))

        let duplicate = try api.call("POST", "/v1/auth/signup", [
            "role": "coach", "full_name": "Other", "email": "sara@example.com", "password": "secret1", "password_confirmation": "secret1",
        ], headers: [("Accept-Language", "ar-SA,en;q=0.5")])
        #expect(duplicate.status == 409)
        #expect(duplicate.errorCode == "email_taken")
        #expect(duplicate.errorField == "email")
        #expect(duplicate.errorMessage?.hasArabic == true)
    }

    @Test func eachUserHasATimeZoneSetAtSignUpOrLaterAndSeenByTheSocket() throws {
        let server = try TestServer()
        defer { server.stop() }
        let api = APIClient(port: server.port)
        func signUp(_ email: String, _ zone: String?) throws -> APIResponse {
            var body: [String: Any] = ["role": "client", "full_name": "Sara", "email": email, "password": "secret1",
                                       "password_confirmation": "secret1"]
            body["time_zone"] = zone
            return try api.call("POST", "/v1/auth/signup", body)
        }
        #expect(try signUp("utc@example.com", nil).object("user")?["time_zone"] as? String == "UTC")
        // The sign-up's Accept-Language is saved with the account, in the same write.
        let arabic = try api.call("POST", "/v1/auth/signup", [
            "role": "client", "full_name": "Sara", "email": "ar@example.com", "password": "secret1",
            "password_confirmation": "secret1", "time_zone": "Asia/Riyadh",
        ], headers: [("Accept-Language", "ar-SA")])
        #expect(arabic.object("user")?["language"] as? String == "ar")
        #expect(try api.call("GET", "/v1/me", token: arabic.string("access_token")).string("language") == "ar")
        let riyadh = try signUp("ry@example.com", "Asia/Riyadh")
        #expect(riyadh.object("user")?["time_zone"] as? String == "Asia/Riyadh")
        for bad in ["EST", "Mars/Olympus", "+03:00", "", String(repeating: "A/", count: 40)] {
            let refused = try signUp("bad\(bad.count)@example.com", bad)
            #expect(refused.status == 400 && refused.errorCode == "invalid_time_zone" && refused.errorField == "time_zone", "\(bad)")
        }
        let token = try #require(riyadh.string("access_token"))
        let changed = try api.call("PUT", "/v1/me", ["time_zone": "America/New_York"], token: token)
        #expect(changed.status == 200 && changed.string("time_zone") == "America/New_York")
        #expect(changed.string("language") == "en")
        let both = try api.call("PUT", "/v1/me", ["time_zone": "UTC", "language": "ar"], token: token)
        #expect(both.string("time_zone") == "UTC" && both.string("language") == "ar")
        #expect(try api.call("PUT", "/v1/me", [:], token: token).errorCode == "missing_field")
        #expect(try api.call("PUT", "/v1/me", ["time_zone": "EST"], token: token).errorCode == "invalid_time_zone")
        #expect(try api.call("PUT", "/v1/me", ["tz": "UTC"], token: token).errorCode == "unknown_field")
        // The refused change changed nothing; the socket's hello (from memory) has the saved zone.
        _ = try api.call("PUT", "/v1/me", ["time_zone": "Europe/London"], token: token)
        let socket = try SpotterSocket(port: server.port, token: token)
        #expect((socket.hello["user"] as? [String: Any])?["time_zone"] as? String == "Europe/London")
        #expect(try api.call("GET", "/v1/me", token: token).string("time_zone") == "Europe/London")
    }

    /// Issue 26: a NUL, a fixed offset or a name outside the region/city trees is refused and nothing is saved.
    @Test func onlyRegionCityNamesOrUTCAreSavedAndNothingElseIsStored() throws {
        let server = try TestServer()
        defer { server.stop() }
        let api = APIClient(port: server.port)
        let signedUp = try api.call("POST", "/v1/auth/signup", [
            "role": "client", "full_name": "Sara", "email": "tz@example.com", "password": "secret1",
            "password_confirmation": "secret1", "time_zone": "Asia/Riyadh",
        ])
        let token = try #require(signedUp.string("access_token"))
        for bad in ["Asia/Riyadh\u{0}", "Etc/GMT+12", "SystemV/AST4", "posix/Asia/Riyadh", "US/Eastern", "GMT+3",
                    "/Asia/Riyadh", "Asia/../Europe/London", "Asia/Riyadh "] {
            let refused = try api.call("PUT", "/v1/me", ["time_zone": bad], token: token)
            #expect(refused.status == 400 && refused.errorCode == "invalid_time_zone" && refused.errorField == "time_zone",
                    "\(bad.debugDescription)")
            let atSignUp = try api.call("POST", "/v1/auth/signup", [
                "role": "client", "full_name": "Sara", "email": "tz\(bad.utf8.count)x@example.com", "password": "secret1",
                "password_confirmation": "secret1", "time_zone": bad,
            ])
            #expect(atSignUp.status == 400 && atSignUp.errorCode == "invalid_time_zone", "\(bad.debugDescription)")
        }
        #expect(try api.call("GET", "/v1/me", token: token).string("time_zone") == "Asia/Riyadh")
        let stored = try server.accounts.user(id: try #require(signedUp.object("user")?["id"] as? String))
        #expect(stored?.timeZone == "Asia/Riyadh")
        // Etc/UTC is UTC's other spelling: saved as UTC.
        #expect(try api.call("PUT", "/v1/me", ["time_zone": "Etc/UTC"], token: token).string("time_zone") == "UTC")
    }

    /// A zone saved before the rules were this strict loads as UTC, shown as UTC, and breaks nothing.
    @Test func aStoredZoneTheRulesNowRefuseIsReadAsUTC() throws {
        let server = try TestServer { $0.tiers = true }  // the quota's month is counted in the zone
        defer { server.stop() }
        let zones = ["Etc/GMT+12", "SystemV/AST4", "EST"]
        for (index, zone) in zones.enumerated() {
            try server.accounts.createUser(id: "old\(index)", role: "client", fullName: "Old", email: "old\(index)@example.com",
                                           phone: nil, passwordHash: PasswordHasher(logN: 10).hash("secret1"), timeZone: zone, now: 0)
        }
        let api = APIClient(port: server.port)
        for index in zones.indices {
            let signedIn = try api.call("POST", "/v1/auth/signin", ["email": "old\(index)@example.com", "password": "secret1"])
            #expect(signedIn.status == 200 && signedIn.object("user")?["time_zone"] as? String == "UTC")
            let token = try #require(signedIn.string("access_token"))
            #expect(try api.call("GET", "/v1/me", token: token).string("time_zone") == "UTC")
            let socket = try SpotterSocket(port: server.port, token: token)
            #expect((socket.hello["user"] as? [String: Any])?["time_zone"] as? String == "UTC")
            let quota = try #require(try socket.next("quota")["quota"] as? [String: Any])
            #expect(quota["resets_at"] is Int)
        }
    }

    @Test func theProvisioningEndpointExistsOnlyWhenTheServerIsStartedForLoadTests() throws {
        let off = try TestServer { $0.loadTestProvisioning = false }
        defer { off.stop() }
        #expect(try APIClient(port: off.port).call("POST", "/v1/admin/provision", ["coaches": 1]).status == 404)
        let on = try TestServer()  // tests start with it on
        defer { on.stop() }
        #expect(try APIClient(port: on.port).call("POST", "/v1/admin/provision", ["coaches": 1]).status == 401)
    }

    @Test func signInReplacesAHashMadeWithWeakerParameters() throws {
        let server = try TestServer()  // hashes at logN 10
        defer { server.stop() }
        let accounts = server.accounts
        try accounts.createUser(id: "old", role: "client", fullName: "Old", email: "old@example.com", phone: nil,
                                passwordHash: PasswordHasher(logN: 8).hash("secret1"), now: 0)
        let api = APIClient(port: server.port)
        #expect(try api.call("POST", "/v1/auth/signin", ["email": "old@example.com", "password": "secret1"]).status == 200)
        let stored = try #require(try accounts.user(id: "old")?.passwordHash)
        #expect(stored.hasPrefix("$scrypt$ln=10,"), "\(stored)")
        // The new hash still takes the same password.
        #expect(try api.call("POST", "/v1/auth/signin", ["email": "old@example.com", "password": "secret1"]).status == 200)
    }

    @Test(arguments: [
        (#"{"role":"client","full_name":"A","email":"not-an-email","password":"secret1","password_confirmation":"secret1"}"#, "invalid_email", "email"),
        (#"{"role":"client","full_name":"A","email":"a@b.co","password":"12345","password_confirmation":"12345"}"#, "password_too_short", "password"),
        (#"{"role":"client","full_name":"A","email":"a@b.co","password":"secret1","password_confirmation":"secret2"}"#, "password_mismatch", "password_confirmation"),
        (#"{"role":"admin","full_name":"A","email":"a@b.co","password":"secret1","password_confirmation":"secret1"}"#, "invalid_role", "role"),
        (#"{"full_name":"A","email":"a@b.co","password":"secret1","password_confirmation":"secret1"}"#, "missing_field", "role"),
        (#"{"role":"client","full_name":"   ","email":"a@b.co","password":"secret1","password_confirmation":"secret1"}"#, "invalid_name", "full_name"),
        (#"{"role":7,"full_name":"A","email":"a@b.co","password":"secret1","password_confirmation":"secret1"}"#, "bad_request", "role"),
    ])
    func signUpRejectsBadInputWithTypedErrors(_ body: String, _ code: String, _ field: String) throws {
        let server = try TestServer()
        defer { server.stop() }
        let json = try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])
        let response = try APIClient(port: server.port).call("POST", "/v1/auth/signup", json)
        #expect(response.status == 400)
        #expect(response.errorCode == code)
        #expect(response.errorField == field)
        #expect(response.errorMessage?.isEmpty == false)
    }

    @Test func malformedJSONIsABadRequest() throws {
        let server = try TestServer()
        defer { server.stop() }
        let client = try HTTPTestClient(port: server.port)
        let response = try client.request("POST", "/v1/auth/signin", body: "{not json")
        #expect(response.status == 400)
        #expect(response.bodyText.contains("\"code\":\"bad_request\""))
    }

    @Test func refreshRotatesAndAReusedTokenRevokesTheFamily() throws {
        let server = try TestServer()
        defer { server.stop() }
        let api = APIClient(port: server.port)
        let first = try api.signUp(role: "coach", name: "Coach", email: "coach@example.com")
        let rotated = try api.call("POST", "/v1/auth/refresh", ["refresh_token": first.refresh])
        #expect(rotated.status == 200)
        let second = try #require(rotated.string("refresh_token"))
        #expect(second != first.refresh)
        #expect(try api.call("GET", "/v1/me", token: rotated.string("access_token")).status == 200)

        // The old token again: theft or a confused client. The family dies.
        let reused = try api.call("POST", "/v1/auth/refresh", ["refresh_token": first.refresh])
        #expect(reused.status == 401)
        #expect(reused.errorCode == "refresh_token_reused")
        let afterReuse = try api.call("POST", "/v1/auth/refresh", ["refresh_token": second])
        #expect(afterReuse.status == 401)
        #expect(afterReuse.errorCode == "refresh_token_invalid")
    }

    @Test func signOutRevokesTheRefreshToken() throws {
        let server = try TestServer()
        defer { server.stop() }
        let api = APIClient(port: server.port)
        let session = try api.signUp(role: "client", name: "C", email: "c@example.com")
        #expect(try api.call("POST", "/v1/auth/signout", ["refresh_token": session.refresh]).status == 204)
        let refresh = try api.call("POST", "/v1/auth/refresh", ["refresh_token": session.refresh])
        #expect(refresh.status == 401)
        // Signing out again is harmless; an unknown token is refused.
        #expect(try api.call("POST", "/v1/auth/signout", ["refresh_token": session.refresh]).status == 204)
        #expect(try api.call("POST", "/v1/auth/signout", ["refresh_token": "not-a-token"]).errorCode == "refresh_token_invalid")
    }

    @Test func badOrMissingTokensAre401() throws {
        let server = try TestServer()
        defer { server.stop() }
        let api = APIClient(port: server.port)
        #expect(try api.call("GET", "/v1/me").errorCode == "unauthorized")
        #expect(try api.call("GET", "/v1/me", token: "abc.def.ghi").errorCode == "unauthorized")
        let other = try TestServer { $0.tokenSecret = Array("another-secret-that-is-32-bytes-long!!".utf8) }
        defer { other.stop() }
        let foreign = try APIClient(port: other.port).signUp(role: "client", name: "X", email: "x@example.com")
        #expect(try api.call("GET", "/v1/me", token: foreign.access).status == 401)
    }

    /// The access token lives its lifetime on the server's clock: the test moves the clock, nothing sleeps.
    @Test func expiredAccessTokenSaysSo() throws {
        let clock = TestClock()
        let server = try TestServer {
            $0.clock = clock
            $0.accessTokenLifetimeSeconds = 600
        }
        defer { server.stop() }
        let api = APIClient(port: server.port)
        let session = try api.signUp(role: "client", name: "C", email: "c@example.com")
        clock.advance(by: 599)
        #expect(try api.call("GET", "/v1/me", token: session.access).status == 200)
        clock.advance(by: 1)
        let me = try api.call("GET", "/v1/me", token: session.access)
        #expect(me.status == 401)
        #expect(me.errorCode == "token_expired")
    }

    /// A refresh token works until its lifetime on the server's clock has passed, then never again.
    @Test func aRefreshTokenExpiresOnTheClock() throws {
        let clock = TestClock()
        let server = try TestServer {
            $0.clock = clock
            $0.refreshTokenLifetimeSeconds = 7 * 86_400
        }
        defer { server.stop() }
        let api = APIClient(port: server.port)
        let first = try api.signUp(role: "client", name: "C", email: "c@example.com")
        let second = try api.call("POST", "/v1/auth/signin", ["email": "c@example.com", "password": "secret1"])
        let secondRefresh = try #require(second.string("refresh_token"))
        clock.advance(by: 7 * 86_400 - 1)
        #expect(try api.call("POST", "/v1/auth/refresh", ["refresh_token": first.refresh]).status == 200)
        clock.advance(by: 1)
        let late = try api.call("POST", "/v1/auth/refresh", ["refresh_token": secondRefresh])
        #expect(late.status == 401)
        #expect(late.errorCode == "refresh_token_invalid")
    }

    /// The account lock after five wrong passwords lasts its window (15 minutes) on the server's clock.
    @Test func anAccountLockEndsWithItsWindow() throws {
        let clock = TestClock()
        let server = try TestServer { $0.clock = clock }
        defer { server.stop() }
        let api = APIClient(port: server.port)
        _ = try api.signUp(role: "client", name: "C", email: "victim@example.com")
        for _ in 0..<5 {
            #expect(try api.call("POST", "/v1/auth/signin", ["email": "victim@example.com", "password": "guess!"]).status == 401)
        }
        clock.advance(by: 15 * 60 - 1)
        let locked = try api.call("POST", "/v1/auth/signin", ["email": "victim@example.com", "password": "secret1"])
        #expect(locked.errorCode == "rate_limited")
        #expect(locked.headers["Retry-After"] == "1")
        clock.advance(by: 1)
        #expect(try api.call("POST", "/v1/auth/signin", ["email": "victim@example.com", "password": "secret1"]).status == 200)
    }

    /// A phone code can be asked again after 60 s and is good for 300 s, both on the server's clock.
    @Test func aPhoneCodeResendsAndExpiresOnTheClock() throws {
        let clock = TestClock()
        let server = try TestServer { $0.clock = clock }
        defer { server.stop() }
        let api = APIClient(port: server.port)
        #expect(try api.call("POST", "/v1/auth/otp/request", ["phone": "0551234567"]).status == 202)
        clock.advance(by: 59)
        let early = try api.call("POST", "/v1/auth/otp/request", ["phone": "0551234567"])
        #expect(early.errorCode == "otp_resend_too_soon")
        #expect(early.headers["Retry-After"] == "1")
        clock.advance(by: 1)
        #expect(try api.call("POST", "/v1/auth/otp/request", ["phone": "0551234567"]).status == 202)
        let code = try #require(server.otp.lastCode(for: "+966551234567"))
        clock.advance(by: 299)
        #expect(try api.call("POST", "/v1/auth/otp/verify", ["phone": "0551234567", "code": code]).status == 200)

        #expect(try api.call("POST", "/v1/auth/otp/request", ["phone": "0501234567"]).status == 202)
        let late = try #require(server.otp.lastCode(for: "+966501234567"))
        clock.advance(by: 300)
        #expect(try api.call("POST", "/v1/auth/otp/verify", ["phone": "0501234567", "code": late]).errorCode == "otp_expired")
    }

    @Test func repeatedWrongPasswordsAreRateLimitedPerAccount() throws {
        let server = try TestServer()
        defer { server.stop() }
        let api = APIClient(port: server.port)
        _ = try api.signUp(role: "client", name: "C", email: "victim@example.com")
        for _ in 0..<5 {
            #expect(try api.call("POST", "/v1/auth/signin", ["email": "victim@example.com", "password": "guess!"]).status == 401)
        }
        // Even the right password waits now: the lock is per account.
        let locked = try api.call("POST", "/v1/auth/signin", ["email": "victim@example.com", "password": "secret1"])
        #expect(locked.status == 429)
        #expect(locked.errorCode == "rate_limited")
        #expect(Int(locked.headers["Retry-After"] ?? "") ?? 0 > 0)
    }

    @Test func phoneCodeSignsInAndCreatesTheAccountOnce() throws {
        let server = try TestServer()
        defer { server.stop() }
        let api = APIClient(port: server.port)
        let started = try api.call("POST", "/v1/auth/otp/request", ["phone": "055 123 4567"])
        #expect(started.status == 202)
        #expect(started.string("phone") == "+966551234567")
        #expect(started["expires_in"] as? Int == 300)
        #expect(started["resend_after"] as? Int == 60)

        let again = try api.call("POST", "/v1/auth/otp/request", ["phone": "+966 55 123 4567"])
        #expect(again.status == 429)
        #expect(again.errorCode == "otp_resend_too_soon")
        #expect(Int(again.headers["Retry-After"] ?? "") ?? 0 >= 58)

        let code = try #require(server.otp.lastCode(for: "+966551234567"))
        let wrong = code == "000000" ? "111111" : "000000"
        let miss = try api.call("POST", "/v1/auth/otp/verify", ["phone": "0551234567", "code": wrong])
        #expect(miss.status == 400)
        #expect(miss.errorCode == "otp_invalid")

        let signedIn = try api.call("POST", "/v1/auth/otp/verify", ["phone": "0551234567", "code": code],
                                    headers: [("Accept-Language", "ar")])
        #expect(signedIn.status == 200)
        let user = try #require(signedIn.object("user"))
        #expect(user["phone"] as? String == "+966551234567")
        #expect(user["role"] as? String == "client")
        #expect(user["language"] as? String == "ar")  // the new account keeps the language it signed up in
        // A used code is gone.
        #expect(try api.call("POST", "/v1/auth/otp/verify", ["phone": "0551234567", "code": code]).errorCode == "otp_expired")
    }

    @Test func fiveWrongCodesLockTheCode() throws {
        let server = try TestServer()
        defer { server.stop() }
        let api = APIClient(port: server.port)
        #expect(try api.call("POST", "/v1/auth/otp/request", ["phone": "0501234567"]).status == 202)
        let code = try #require(server.otp.lastCode(for: "+966501234567"))
        let wrong = code == "999999" ? "888888" : "999999"
        for _ in 0..<5 {
            #expect(try api.call("POST", "/v1/auth/otp/verify", ["phone": "0501234567", "code": wrong]).errorCode == "otp_invalid")
        }
        let locked = try api.call("POST", "/v1/auth/otp/verify", ["phone": "0501234567", "code": code])
        #expect(locked.status == 429)
        #expect(locked.errorCode == "otp_too_many_attempts")
    }

    @Test func nonSaudiNumbersAreRefused() throws {
        let server = try TestServer()
        defer { server.stop() }
        let response = try APIClient(port: server.port).call("POST", "/v1/auth/otp/request", ["phone": "+971 50 123 4567"])
        #expect(response.status == 400)
        #expect(response.errorCode == "invalid_phone")
        #expect(server.otp.count == 0)
    }

    @Test func accountsSurviveARestart() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("spotter-restart-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let first = try TestServer(dataDirectory: directory)
        let session = try APIClient(port: first.port).signUp(role: "coach", name: "Coach", email: "keep@example.com")
        #expect(first.stop())
        let second = try TestServer(dataDirectory: directory)
        defer { second.stop() }
        let api = APIClient(port: second.port)
        #expect(try api.call("POST", "/v1/auth/signin", ["email": "keep@example.com", "password": "secret1"]).status == 200)
        #expect(try api.call("POST", "/v1/auth/refresh", ["refresh_token": session.refresh]).status == 200)
        #expect(try api.call("GET", "/v1/me", token: session.access).status == 200)  // same secret in tests
    }

    @Test func aPasswordChangeNeedsTheOldOneAndSignsOutEveryOtherSession() throws {
        let server = try TestServer()
        defer { server.stop() }
        let api = APIClient(port: server.port)
        let here = try api.signUp(role: "client", name: "Sara", email: "pw@example.com", password: "secret1")
        let phone = try api.call("POST", "/v1/auth/signin", ["email": "pw@example.com", "password": "secret1"])
        let phoneToken = try #require(phone.string("access_token")), phoneRefresh = try #require(phone.string("refresh_token"))
        let phoneSocket = try SpotterSocket(port: server.port, token: phoneToken)

        func change(_ fields: [String: Any]) throws -> APIResponse { try api.call("PUT", "/v1/me/password", fields, token: here.access) }
        let wrong = try change(["current_password": "nope123", "new_password": "better1", "new_password_confirmation": "better1"])
        #expect(wrong.status == 401 && wrong.errorCode == "invalid_credentials" && wrong.errorField == "current_password")
        #expect(try change(["current_password": "secret1", "new_password": "abc", "new_password_confirmation": "abc"]).errorCode == "password_too_short")
        #expect(try change(["current_password": "secret1", "new_password": "better1", "new_password_confirmation": "better2"]).errorCode == "password_mismatch")
        #expect(try change(["new_password": "better1", "new_password_confirmation": "better1"]).errorCode == "missing_field")
        // Nothing changed by the refusals: the phone's session is still alive.
        #expect(try api.call("GET", "/v1/me", token: phoneToken).status == 200)

        #expect(try change(["current_password": "secret1", "new_password": "better1", "new_password_confirmation": "better1"]).status == 204)
        // The other session is over at once: its socket closes with 4003, its tokens are refused.
        #expect(try phoneSocket.ws.awaitClose() == .some(CloseCode(4003)))
        #expect(try api.call("GET", "/v1/me", token: phoneToken).errorCode == "session_revoked")
        #expect(try api.call("POST", "/v1/auth/refresh", ["refresh_token": phoneRefresh]).errorCode == "refresh_token_invalid")
        // This session goes on; the new password signs in, the old one no longer does.
        #expect(try api.call("GET", "/v1/me", token: here.access).status == 200)
        #expect(try api.call("POST", "/v1/auth/refresh", ["refresh_token": here.refresh]).status == 200)
        #expect(try api.call("POST", "/v1/auth/signin", ["email": "pw@example.com", "password": "better1"]).status == 200)
        #expect(try api.call("POST", "/v1/auth/signin", ["email": "pw@example.com", "password": "secret1"]).errorCode == "invalid_credentials")
    }

    @Test func aNewNameIsWhatPeersSee() throws {
        let fixture = try CoachingFixture()
        defer { fixture.server.stop() }
        let api = fixture.api
        let renamed = try api.call("PUT", "/v1/me", ["full_name": "  Amal Saleh "], token: fixture.clientA.access)
        #expect(renamed.status == 200 && renamed.string("full_name") == "Amal Saleh")
        #expect(try api.call("PUT", "/v1/me", ["full_name": " "], token: fixture.clientA.access).errorCode == "invalid_name")
        #expect(try api.call("GET", "/v1/me", token: fixture.clientA.access).string("full_name") == "Amal Saleh")
        // The coach's conversation list names the client by the new name.
        let coach = try SpotterSocket(port: fixture.server.port, token: fixture.coachX.access)
        let threads = try coach.result("threads")["threads"] as? [[String: Any]]
        #expect(threads?.contains { $0["peer_name"] as? String == "Amal Saleh" } == true)
    }
}
