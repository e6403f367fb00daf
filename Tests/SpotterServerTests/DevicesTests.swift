import Foundation
import Testing
import SpotterCore
import TestSupport

/// `POST/GET /v1/me/devices`, `DELETE /v1/me/devices/{id}` over a real server (issue 28, item 1): each platform, the
/// owner's list, ten per user, an address moving between accounts, a sign-out taking its session's devices, and
/// every refusal with its code.
@Suite("Push devices", .serialized)
struct DevicesTests {
    /// RFC 8291's example browser keys (Appendix A).
    static let p256dh = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"
    static let auth = "BTBZMqHH6r4Tts7J_aSIgg"
    static let apnsToken = String(repeating: "ab12", count: 16)

    static func apns(_ token: String = apnsToken, topic: String = "com.example.coach") -> [String: Any] {
        ["platform": "apns", "token": token, "topic": topic, "environment": "production"]
    }

    static func fcm(_ token: String) -> [String: Any] { ["platform": "fcm", "token": token] }

    static func webpush(_ endpoint: String = "https://fcm.googleapis.com/fcm/send/e1:APA91b", p256dh: String = p256dh,
                        auth: String = auth) -> [String: Any] {
        ["platform": "webpush",
         "subscription": ["endpoint": endpoint, "expirationTime": NSNull(), "keys": ["p256dh": p256dh, "auth": auth]]]
    }

    static func register(_ api: APIClient, _ token: String, _ body: [String: Any]) throws -> APIResponse {
        try api.call("POST", "/v1/me/devices", body, token: token)
    }

    static func listed(_ api: APIClient, _ token: String) throws -> [[String: Any]] {
        try api.call("GET", "/v1/me/devices", token: token).json["devices"] as? [[String: Any]] ?? []
    }

    @Test func eachPlatformRegistersAndIsListedNewestFirst() throws {
        let clock = TestClock()
        let server = try TestServer { $0.clock = clock }
        defer { server.stop() }
        let api = APIClient(port: server.port)
        let me = try api.signUp(role: "client", name: "Sara", email: "sara@devices.test")
        let phone = try Self.register(api, me.access, Self.apns())
        #expect(phone.status == 201 && phone.string("platform") == "apns" && phone.string("topic") == "com.example.coach")
        #expect(phone.string("environment") == "production" && phone["token"] == nil, "the token does not come back")
        let start = try #require(phone["created_at"] as? Int)
        clock.advance(by: 5)
        let android = try Self.register(api, me.access, Self.fcm("fcm-token:APA91b_1"))
        #expect(android.status == 201 && android.string("platform") == "fcm" && android["topic"] == nil)
        clock.advance(by: 5)
        let browser = try Self.register(api, me.access, Self.webpush())
        #expect(browser.status == 201 && browser.string("platform") == "webpush" && browser["subscription"] == nil)
        let ids = try [phone, android, browser].map { try #require($0.string("id")) }
        #expect(Set(ids).count == 3)
        #expect(try Self.listed(api, me.access).map { $0["id"] as? String } == ids.reversed())

        // The app registers again at its next launch: the same device, renewed, first in the list.
        clock.advance(by: 5)
        let again = try Self.register(api, me.access, Self.apns(Self.apnsToken.uppercased()))
        #expect(again.status == 201 && again.string("id") == ids[0])
        #expect(again["created_at"] as? Int == start && again["registered_at"] as? Int == start + 15)
        #expect(try Self.listed(api, me.access).map { $0["id"] as? String } == [ids[0], ids[2], ids[1]])
    }

    @Test func aDeviceIsDeletedByItsOwnerOnly() throws {
        let server = try TestServer()
        defer { server.stop() }
        let api = APIClient(port: server.port)
        let me = try api.signUp(role: "client", name: "Sara", email: "sara@delete.test")
        let other = try api.signUp(role: "coach", name: "Omar", email: "omar@delete.test")
        let mine = try #require(try Self.register(api, me.access, Self.fcm("mine")).string("id"))
        let theirs = try #require(try Self.register(api, other.access, Self.fcm("theirs")).string("id"))
        let refused = try api.call("DELETE", "/v1/me/devices/\(theirs)", token: me.access)
        #expect(refused.status == 404 && refused.errorCode == "not_found" && refused.errorField == "id")
        #expect(try Self.listed(api, other.access).count == 1)
        #expect(try api.call("DELETE", "/v1/me/devices/\(mine)", token: me.access).status == 204)
        #expect(try Self.listed(api, me.access).isEmpty)
        #expect(try api.call("DELETE", "/v1/me/devices/\(mine)", token: me.access).errorCode == "not_found")
        #expect(try api.call("PUT", "/v1/me/devices", token: me.access).headers["Allow"] == "POST, GET")
    }

    @Test func theEleventhDeviceRemovesTheLeastRecentlyRegistered() throws {
        let server = try TestServer()
        defer { server.stop() }
        let api = APIClient(port: server.port)
        let me = try api.signUp(role: "client", name: "Sara", email: "sara@eleven.test")
        var ids: [String] = []
        for index in 0..<DeviceRules.maxDevicesPerUser {
            ids.append(try #require(try Self.register(api, me.access, Self.fcm("token-\(index)")).string("id")))
        }
        #expect(try Self.listed(api, me.access).count == 10)
        let eleventh = try #require(try Self.register(api, me.access, Self.fcm("token-10")).string("id"))
        let listed = try Self.listed(api, me.access).compactMap { $0["id"] as? String }
        #expect(listed == [eleventh] + ids.dropFirst().reversed())
        #expect(!listed.contains(ids[0]))
    }

    @Test func anAddressRegisteredByAnotherAccountMovesToIt() throws {
        let server = try TestServer()
        defer { server.stop() }
        let api = APIClient(port: server.port)
        let first = try api.signUp(role: "client", name: "Sara", email: "sara@move.test")
        let second = try api.signUp(role: "client", name: "Lina", email: "lina@move.test")
        let before = try #require(try Self.register(api, first.access, Self.webpush()).string("id"))
        let after = try #require(try Self.register(api, second.access, Self.webpush()).string("id"))
        #expect(after != before)
        #expect(try Self.listed(api, first.access).isEmpty)
        #expect(try Self.listed(api, second.access).map { $0["id"] as? String } == [after])
        // The first account's old id is no longer its device.
        #expect(try api.call("DELETE", "/v1/me/devices/\(before)", token: first.access).errorCode == "not_found")
    }

    @Test func aSignOutRemovesTheDevicesOfThatSessionOnly() throws {
        let server = try TestServer()
        defer { server.stop() }
        let api = APIClient(port: server.port)
        let phone = try api.signUp(role: "client", name: "Sara", email: "sara@signout.test")
        let signedIn = try api.call("POST", "/v1/auth/signin", ["email": "sara@signout.test", "password": "secret1"])
        let laptop = try #require(signedIn.string("access_token"))
        let phoneDevice = try #require(try Self.register(api, phone.access, Self.apns()).string("id"))
        let laptopDevice = try #require(try Self.register(api, laptop, Self.webpush()).string("id"))
        #expect(try Self.listed(api, laptop).count == 2)
        #expect(try api.call("POST", "/v1/auth/signout", ["refresh_token": phone.refresh]).status == 204)
        #expect(try Self.listed(api, laptop).map { $0["id"] as? String } == [laptopDevice])
        #expect(phoneDevice != laptopDevice)
        // The signed-out session can register nothing more.
        #expect(try Self.register(api, phone.access, Self.fcm("late")).errorCode == "session_revoked")
        #expect(try Self.listed(api, laptop).count == 1)
    }

    @Test func everyBadInputHasItsCode() throws {
        let server = try TestServer()
        defer { server.stop() }
        let api = APIClient(port: server.port)
        let me = try api.signUp(role: "client", name: "Sara", email: "sara@bad.test")
        var offCurve = Array(Self.p256dh)
        offCurve[offCurve.count - 2] = offCurve[offCurve.count - 2] == "A" ? "B" : "A"
        let cases: [(body: [String: Any], code: String, field: String)] = [
            ([:], "missing_field", "platform"),
            (["platform": "gcm", "token": "x"], "bad_request", "platform"),
            (["platform": 7], "bad_request", "platform"),
            (Self.apns("abc"), "invalid_device_token", "token"),
            (Self.apns(String(repeating: "z", count: 64)), "invalid_device_token", "token"),
            (Self.apns(topic: "com..example"), "bad_request", "topic"),
            (["platform": "apns", "token": Self.apnsToken, "topic": "com.example"], "missing_field", "environment"),
            (Self.fcm("has space"), "invalid_device_token", "token"),
            (Self.fcm("nul\u{0}"), "invalid_device_token", "token"),
            (Self.fcm(String(repeating: "x", count: DeviceRules.maxFCMTokenBytes + 1)), "invalid_device_token", "token"),
            (Self.fcm(""), "missing_field", "token"),
            (["platform": "fcm", "token": "t", "topic": "com.example"], "unknown_field", "topic"),
            (["platform": "fcm", "token": "t", "colour": "red"], "unknown_field", "colour"),
            (Self.webpush(p256dh: String(offCurve)), "invalid_push_keys", "subscription.keys.p256dh"),
            (Self.webpush(p256dh: "BAAA"), "invalid_push_keys", "subscription.keys.p256dh"),
            (Self.webpush(auth: "c2hvcnQ"), "invalid_push_keys", "subscription.keys.auth"),
            (Self.webpush("http://push.example.com/x"), "invalid_push_endpoint", "subscription.endpoint"),
            (Self.webpush("http://127.0.0.1:9/x"), "invalid_push_endpoint", "subscription.endpoint"),
            (Self.webpush("https://127.0.0.1/x"), "invalid_push_endpoint", "subscription.endpoint"),
            (Self.webpush("https://push.example.com/" + String(repeating: "p", count: 2048)), "invalid_push_endpoint",
             "subscription.endpoint"),
            (["platform": "webpush", "subscription": ["endpoint": "https://push.example.com/x", "keys": ["p256dh": Self.p256dh, "auth": Self.auth, "x": 1]]],
             "unknown_field", "subscription.keys.x"),
            (["platform": "webpush", "subscription": ["endpoint": "https://push.example.com/x"]], "missing_field", "subscription.keys"),
        ]
        for (body, code, field) in cases {
            let answer = try Self.register(api, me.access, body)
            #expect(answer.status == 400 && answer.errorCode == code && answer.errorField == field, "\(body): \(answer.text)")
        }
        #expect(try Self.listed(api, me.access).isEmpty, "nothing refused was stored")
        let arabic = try api.call("POST", "/v1/me/devices", Self.webpush(auth: "c2hvcnQ"), token: me.access,
                                  headers: [("Accept-Language", "ar")])
        #expect(arabic.errorMessage?.unicodeScalars.contains { (0x0600...0x06FF).contains($0.value) } == true)
    }

    @Test func httpEndpointsOnlyInDevelopmentAndOnLoopback() throws {
        let server = try TestServer { $0.development = true }
        defer { server.stop() }
        let api = APIClient(port: server.port)
        let me = try api.signUp(role: "client", name: "Sara", email: "sara@dev.test")
        for endpoint in ["http://127.0.0.1:9/push/1", "http://[::1]:9/push/2", "http://localhost:9/push/3"] {
            #expect(try Self.register(api, me.access, Self.webpush(endpoint)).status == 201, "\(endpoint)")
        }
        for endpoint in ["http://10.0.0.1/push", "http://push.example.com/push", "http://127.0.0.2/push"] {
            #expect(try Self.register(api, me.access, Self.webpush(endpoint)).errorCode == "invalid_push_endpoint", "\(endpoint)")
        }
        #expect(try Self.listed(api, me.access).count == 3)
    }

    @Test func anOutsiderGets401() throws {
        let server = try TestServer()
        defer { server.stop() }
        let api = APIClient(port: server.port)
        for (method, path, body) in [("POST", "/v1/me/devices", Self.fcm("x")), ("GET", "/v1/me/devices", nil),
                                     ("DELETE", "/v1/me/devices/some-id", nil)] as [(String, String, [String: Any]?)] {
            let answer = try api.call(method, path, body)
            #expect(answer.status == 401 && answer.errorCode == "unauthorized", "\(method) \(path)")
            let forged = try api.call(method, path, body, token: "not.a.token")
            #expect(forged.status == 401 && forged.errorCode == "unauthorized", "\(method) \(path)")
        }
    }
}
