import Foundation
import Testing
import TestSupport

/// `GET /v1/push/vapid-public-key` over a real server (issue 28, item 6): the key browsers subscribe with, without a
/// sign-in; 404 `push_not_configured` in both languages when the server has no VAPID key.
@Suite("VAPID public key", .serialized)
struct VAPIDKeyTests {
    /// An uncompressed P-256 point in base64url, as the configuration holds it (65 bytes from 0x04).
    static let key = "BEl62iUYgUivxIkv69yViEuiBIa-Ib9-SkvMeAtA3LFgDzkrxZJjSgSnfckjBJuBkr3qBUYIHBQFLXYp5Nksh8U"

    @Test func answersTheConfiguredKeyWithoutSignIn() throws {
        let server = try TestServer { $0.webPushPublicKey = Self.key }
        defer { server.stop() }
        let api = APIClient(port: server.port)
        let answer = try api.call("GET", "/v1/push/vapid-public-key")
        #expect(answer.status == 200, "\(answer.text)")
        #expect(answer.string("key") == Self.key && answer.json.count == 1, "\(answer.text)")
        #expect(answer.headers["Content-Type"] == "application/json")
        // A signed-in caller gets the same; a token that is not valid is not even read.
        let me = try api.signUp(role: "coach", name: "Coach", email: "coach@vapid.test")
        #expect(try api.call("GET", "/v1/push/vapid-public-key", token: me.access).string("key") == Self.key)
        #expect(try api.call("GET", "/v1/push/vapid-public-key", token: "not-a-token").status == 200)
        // Only GET.
        let post = try api.call("POST", "/v1/push/vapid-public-key", [:])
        #expect(post.status == 405 && post.headers["Allow"] == "GET" && post.errorCode == "method_not_allowed")
    }

    @Test func withoutAKeyItIsATypedNotFound() throws {
        let server = try TestServer()
        defer { server.stop() }
        let api = APIClient(port: server.port)
        let english = try api.call("GET", "/v1/push/vapid-public-key")
        #expect(english.status == 404 && english.errorCode == "push_not_configured", "\(english.text)")
        #expect(english.errorMessage == "This server does not send browser notifications.")
        let arabic = try api.call("GET", "/v1/push/vapid-public-key", headers: [("Accept-Language", "ar")])
        #expect(arabic.status == 404 && arabic.errorCode == "push_not_configured")
        #expect(arabic.errorMessage == "لا يرسل هذا الخادم إشعارات إلى المتصفح.")
        // A neighbouring path is no endpoint at all.
        #expect(try api.call("GET", "/v1/push/vapid-public-keys").errorCode == "not_found")
    }
}
