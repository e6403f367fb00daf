import Foundation
import Testing
import SpotterCore
import SpotterProtocol
import SpotterServer
import SpotterPorts
import TestSupport

/// The profile beyond a column: an email change confirmed by a code sent to the new address, and the avatar with
/// who may read it.
@Suite("Profile", .serialized)
struct ProfileTests {
    @Test func aNewEmailCountsOnlyOnceItsCodeComesBack() throws {
        let server = try TestServer()
        defer { server.stop() }
        let api = APIClient(port: server.port)
        let me = try api.signUp(role: "client", name: "Sara", email: "old@example.com", password: "secret1")
        _ = try api.signUp(role: "coach", name: "Other", email: "taken@example.com")
        func start(_ fields: [String: Any], language: String = "en") throws -> APIResponse {
            try api.call("POST", "/v1/me/email", fields, token: me.access, headers: [("Accept-Language", language)])
        }
        func verify(_ code: String) throws -> APIResponse { try api.call("POST", "/v1/me/email/verify", ["code": code], token: me.access) }

        // Refusals send nothing and change nothing.
        #expect(try start(["email": "new@example.com"]).errorCode == "missing_field")
        let wrong = try start(["email": "new@example.com", "current_password": "nope123"], language: "ar")
        #expect(wrong.status == 401 && wrong.errorCode == "invalid_credentials" && wrong.errorField == "current_password")
        #expect(wrong.errorMessage?.hasArabic == true)
        #expect(try start(["email": "Taken@Example.com", "current_password": "secret1"]).errorCode == "email_taken")
        #expect(try start(["email": "not an email", "current_password": "secret1"]).errorCode == "invalid_email")
        #expect(try start(["email": "OLD@example.com", "current_password": "secret1"]).errorField == "email")
        #expect(try start(["email": "new@example.com", "current_password": "secret1", "colour": "red"]).errorCode == "unknown_field")
        #expect(server.otp.count == 0)
        #expect(try verify("123456").errorCode == "otp_expired")  // nothing pending

        let started = try start(["email": " New@Example.com ", "current_password": "secret1"])
        #expect(started.status == 202 && started.string("pending_email") == "new@example.com")
        #expect(started["dev_code"] == nil, "the code goes to the address, not into the reply")
        let code = try #require(server.otp.lastCode(for: "new@example.com"))
        // Until the code comes back the account keeps its address.
        #expect(try api.call("GET", "/v1/me", token: me.access).string("email") == "old@example.com")
        #expect(try api.call("POST", "/v1/auth/signin", ["email": "old@example.com", "password": "secret1"]).status == 200)
        let again = try start(["email": "new@example.com", "current_password": "secret1"])
        #expect(again.status == 429 && again.errorCode == "otp_resend_too_soon" && again.json["error"] != nil)

        let other = code == "000000" ? "111111" : "000000"
        #expect(try verify(other).errorCode == "otp_invalid")
        let confirmed = try verify(code)
        #expect(confirmed.status == 200 && confirmed.string("email") == "new@example.com")
        #expect(try api.call("POST", "/v1/auth/signin", ["email": "new@example.com", "password": "secret1"]).status == 200)
        #expect(try api.call("POST", "/v1/auth/signin", ["email": "old@example.com", "password": "secret1"]).errorCode == "invalid_credentials")
        // The code was used up.
        #expect(try verify(code).errorCode == "otp_expired")
    }

    /// A code confirming a new address is good for 300 s on the server's clock, and another may be asked after 60 s.
    @Test func anEmailCodeExpiresOnTheClock() throws {
        let clock = TestClock()
        let server = try TestServer { $0.clock = clock }
        defer { server.stop() }
        let api = APIClient(port: server.port)
        let early = try api.signUp(role: "client", name: "Sara", email: "sara@example.com")
        let late = try api.signUp(role: "client", name: "Lina", email: "lina@example.com")
        func start(_ who: APIClient.Account, _ email: String) throws -> APIResponse {
            try api.call("POST", "/v1/me/email", ["email": email, "current_password": "secret1"], token: who.access)
        }
        func verify(_ who: APIClient.Account, _ code: String) throws -> APIResponse {
            try api.call("POST", "/v1/me/email/verify", ["code": code], token: who.access)
        }
        #expect(try start(early, "sara@new.example").status == 202)
        clock.advance(by: 59)
        #expect(try start(early, "sara@new.example").errorCode == "otp_resend_too_soon")
        clock.advance(by: 1)
        #expect(try start(early, "sara@new.example").status == 202)
        let code = try #require(server.otp.lastCode(for: "sara@new.example"))
        #expect(try start(late, "lina@new.example").status == 202)
        let lateCode = try #require(server.otp.lastCode(for: "lina@new.example"))
        clock.advance(by: 299)
        #expect(try verify(early, code).string("email") == "sara@new.example")
        clock.advance(by: 1)
        #expect(try verify(late, lateCode).errorCode == "otp_expired")
    }

    @Test func wrongCodesRunOutAndAnotherUserCannotUseTheCode() throws {
        let server = try TestServer()
        defer { server.stop() }
        let api = APIClient(port: server.port)
        let me = try api.signUp(role: "client", name: "Sara", email: "me@example.com")
        let thief = try api.signUp(role: "client", name: "Tariq", email: "thief@example.com")
        #expect(try api.call("POST", "/v1/me/email", ["email": "mine@example.com", "current_password": "secret1"], token: me.access).status == 202)
        let code = try #require(server.otp.lastCode(for: "mine@example.com"))
        // The code is tied to the user who asked: another user has nothing pending.
        #expect(try api.call("POST", "/v1/me/email/verify", ["code": code], token: thief.access).errorCode == "otp_expired")
        let other = code == "000000" ? "111111" : "000000"
        var codes: [String] = []
        for _ in 0..<OTPChallenge.maxAttempts + 1 {
            codes.append(try api.call("POST", "/v1/me/email/verify", ["code": other], token: me.access).errorCode ?? "none")
        }
        #expect(codes.last == "otp_too_many_attempts", "\(codes)")
        // Even the right code is refused now: the address stays the old one.
        #expect(try api.call("POST", "/v1/me/email/verify", ["code": code], token: me.access).errorCode == "otp_too_many_attempts")
        #expect(try api.call("GET", "/v1/me", token: me.access).string("email") == "me@example.com")
    }

    @Test func aPhoneAccountAddsAnEmailWithoutAPassword() throws {
        let server = try TestServer()
        defer { server.stop() }
        let api = APIClient(port: server.port)
        #expect(try api.call("POST", "/v1/auth/otp/request", ["phone": "0551234567"]).status == 202)
        let signedIn = try api.call("POST", "/v1/auth/otp/verify",
                                    ["phone": "0551234567", "code": try #require(server.otp.lastCode(for: "+966551234567"))])
        let token = try #require(signedIn.string("access_token"))
        #expect(try api.call("POST", "/v1/me/email", ["email": "phone@example.com"], token: token).status == 202)
        let code = try #require(server.otp.lastCode(for: "phone@example.com"))
        #expect(try api.call("POST", "/v1/me/email/verify", ["code": code], token: token).string("email") == "phone@example.com")
    }

    @Test func aDevelopmentServerAnswersTheCodeWithTheLogSender() throws {
        let server = try TestServer(logOTPCodes: true) { $0.development = true }
        defer { server.stop() }
        let api = APIClient(port: server.port)
        let me = try api.signUp(role: "client", name: "Sara", email: "dev@example.com")
        let started = try api.call("POST", "/v1/me/email", ["email": "dev2@example.com", "current_password": "secret1"], token: me.access)
        let code = try #require(started.string("dev_code"))
        #expect(try api.call("POST", "/v1/me/email/verify", ["code": code], token: me.access).string("email") == "dev2@example.com")
    }

    static let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array("an avatar".utf8)
    static let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0] + Array("another avatar".utf8)

    static func putAvatar(_ server: TestServer, _ token: String, _ bytes: [UInt8]) throws -> [String: Any] {
        let response = try HTTPTestClient(port: server.port).request(
            "PUT", "/v1/me/avatar", headers: [("Authorization", "Bearer \(token)"), ("Content-Type", "image/png")], bytes: bytes)
        var json = (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any] ?? [:]
        json["status"] = response.status
        return json
    }

    static func getAvatar(_ server: TestServer, _ path: String, _ token: String) throws -> TestHTTPResponse {
        try HTTPTestClient(port: server.port).request("GET", path, headers: [("Authorization", "Bearer \(token)")])
    }

    @Test func avatarsAreSeenByWhoMaySeeTheirOwner() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("spotter-avatar-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = try TestServer(dataDirectory: directory)
        let api = APIClient(port: server.port)
        let coach = try api.signUp(role: "coach", name: "Carter", email: "carter@x.test")
        let otherCoach = try api.signUp(role: "coach", name: "Other", email: "other@x.test")
        let client = try api.signUp(role: "client", name: "Sara", email: "sara@x.test")
        let otherClient = try api.signUp(role: "client", name: "Tariq", email: "tariq@x.test")
        #expect(try api.call("PUT", "/v1/me/onboarding", CoachingFixture.onboarding, token: client.access).status == 200)
        #expect(try api.call("POST", "/v1/me/coach", ["coach_id": coach.id], token: client.access).status == 201)

        // Only JPEG and PNG.
        #expect(errorCode(try Self.putAvatar(server, client.access, Array("%PDF-1.7\n".utf8))) == "unsupported_attachment")
        #expect(errorCode(try Self.putAvatar(server, client.access, Array("<svg/>".utf8))) == "unsupported_attachment")
        #expect(try api.call("GET", "/v1/me", token: client.access)["avatar_url"] == nil)

        let set = try Self.putAvatar(server, client.access, Self.png)
        let url = try #require(set["avatar_url"] as? String, "\(set)")
        #expect(set["status"] as? Int == 200 && url.hasPrefix("/v1/users/\(client.id)/avatar/"))
        #expect(try api.call("GET", "/v1/me", token: client.access).string("avatar_url") == url)
        let coachURL = try #require(try Self.putAvatar(server, coach.access, Self.jpeg)["avatar_url"] as? String)

        // A client's avatar: the client, their coach (also in the client list), an admin; not another coach or client.
        let mine = try Self.getAvatar(server, url, client.access)
        #expect(mine.status == 200 && mine.body == Self.png && mine.headers["Content-Type"] == "image/png")
        #expect(try Self.getAvatar(server, url, coach.access).status == 200)
        #expect(try Self.getAvatar(server, url, otherCoach.access).status == 403)
        #expect(try Self.getAvatar(server, url, otherClient.access).status == 403)
        let listed = try api.call("GET", "/v1/coach/clients", token: coach.access).array
        #expect(listed.first?["avatar_url"] as? String == url)
        // A coach's avatar: anyone signed in (clients pick coaches from the list, which carries it).
        #expect(try Self.getAvatar(server, coachURL, otherClient.access).status == 200)
        #expect(try Self.getAvatar(server, coachURL, otherClient.access).body == Self.jpeg)
        #expect(try api.call("GET", "/v1/coaches", token: otherClient.access).array.contains { $0["avatar_url"] as? String == coachURL })
        #expect(try HTTPTestClient(port: server.port).request("GET", coachURL).status == 401)

        // It survives a restart (the users are loaded into memory then).
        #expect(server.stop())
        let restarted = try TestServer(dataDirectory: directory)
        defer { restarted.stop() }
        #expect(try APIClient(port: restarted.port).call("GET", "/v1/me", token: client.access).string("avatar_url") == url)
        #expect(try Self.getAvatar(restarted, url, coach.access).body == Self.png)

        // A new avatar has a new URL; the old one is gone. Removing it leaves none.
        let newURL = try #require(try Self.putAvatar(restarted, client.access, Self.jpeg)["avatar_url"] as? String)
        #expect(newURL != url)
        #expect(try Self.getAvatar(restarted, url, client.access).status == 404)
        #expect(try Self.getAvatar(restarted, newURL, coach.access).body == Self.jpeg)
        let removed = try APIClient(port: restarted.port).call("DELETE", "/v1/me/avatar", token: client.access)
        #expect(removed.status == 200 && removed["avatar_url"] == nil)
        #expect(try Self.getAvatar(restarted, newURL, client.access).status == 404)
    }
}
