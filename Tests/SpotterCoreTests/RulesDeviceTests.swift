import Base64Codec
import Foundation
import Testing
import SpotterProtocol
@testable import SpotterCore

/// The browser's keys of RFC 8291's example (Appendix A): a real P-256 public key and a 16-byte secret.
let rfc8291Key = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"
let rfc8291Auth = "BTBZMqHH6r4Tts7J_aSIgg"

@Suite("DeviceRules: APNs and FCM tokens, Web Push subscriptions")
struct RulesDeviceTests {
    static let hex64 = String(repeating: "0123456789ABCDEF", count: 4)

    func apns(_ token: String?, topic: String? = "com.example.coach", environment: String? = "production") -> DeviceRequest {
        DeviceRequest(platform: "apns", token: token, topic: topic, environment: environment)
    }

    func webpush(_ endpoint: String? = "https://fcm.googleapis.com/fcm/send/abc:def", p256dh: String? = rfc8291Key,
                 auth: String? = rfc8291Auth) -> DeviceRequest {
        DeviceRequest(platform: "webpush", subscription: PushSubscriptionBody(
            endpoint: endpoint, expirationTime: nil, keys: PushSubscriptionKeys(p256dh: p256dh, auth: auth)))
    }

    func refusal(_ request: DeviceRequest, development: Bool = false) -> String? {
        thrownAPIError { () throws(APIError) in try DeviceRules.check(request, allowLoopbackHTTP: development) }
            .map { "\($0.code.rawValue) \($0.field ?? "-")" }
    }

    @Test func eachPlatformGivesItsAddress() throws {
        let apple = try DeviceRules.check(apns(Self.hex64, environment: "sandbox"), allowLoopbackHTTP: false)
        #expect(apple == PushAddress(platform: .apns, token: Self.hex64.lowercased(), topic: "com.example.coach",
                                     environment: "sandbox"))
        let firebase = try DeviceRules.check(DeviceRequest(platform: "fcm", token: "dXk3:APA91b-_x"), allowLoopbackHTTP: false)
        #expect(firebase == PushAddress(platform: .fcm, token: "dXk3:APA91b-_x"))
        let browser = try DeviceRules.check(webpush(), allowLoopbackHTTP: false)
        #expect(browser == PushAddress(platform: .webpush, token: "https://fcm.googleapis.com/fcm/send/abc:def",
                                       p256dh: rfc8291Key, auth: rfc8291Auth))
        // Padding is accepted and dropped: a key has one spelling.
        let padded = try DeviceRules.check(webpush(p256dh: rfc8291Key + "=", auth: rfc8291Auth + "=="), allowLoopbackHTTP: false)
        #expect(padded.p256dh == rfc8291Key && padded.auth == rfc8291Auth)
    }

    @Test func thePlatformAndItsFieldsAreChecked() {
        #expect(refusal(DeviceRequest(platform: nil, token: "x")) == "missing_field platform")
        #expect(refusal(DeviceRequest(platform: "gcm", token: "x")) == "bad_request platform")
        #expect(refusal(DeviceRequest(platform: "APNS", token: Self.hex64)) == "bad_request platform")
        // Another platform's fields are not this one's.
        #expect(refusal(DeviceRequest(platform: "fcm", token: "x", topic: "com.example")) == "unknown_field topic")
        #expect(refusal(DeviceRequest(platform: "fcm", token: "x", environment: "sandbox")) == "unknown_field environment")
        #expect(refusal(DeviceRequest(platform: "fcm", token: "x", subscription: webpush().subscription)) == "unknown_field subscription")
        var withSubscription = apns(Self.hex64)
        withSubscription.subscription = webpush().subscription
        #expect(refusal(withSubscription) == "unknown_field subscription")
        var withToken = webpush()
        withToken.token = "x"
        #expect(refusal(withToken) == "unknown_field token")
        #expect(refusal(DeviceRequest(platform: "webpush")) == "missing_field subscription")
    }

    @Test("APNs tokens: 64–200 hex digits, whole bytes", arguments: [
        String(repeating: "a", count: 62), String(repeating: "a", count: 65), String(repeating: "a", count: 202),
        String(repeating: "g", count: 64), String(Self.hex64.dropLast()) + " ", "0x" + String(Self.hex64.dropFirst(2)),
        String(repeating: "٣", count: 64), String(Self.hex64.dropLast()) + "\u{0}",
    ])
    func badAPNsTokens(_ token: String) {
        #expect(refusal(apns(token)) == "invalid_device_token token", "\(token.debugDescription)")
    }

    @Test func apnsTokenTopicAndEnvironmentBounds() throws {
        #expect(try DeviceRules.check(apns(String(repeating: "F", count: 200)), allowLoopbackHTTP: false).token
            == String(repeating: "f", count: 200))
        #expect(refusal(apns(nil)) == "missing_field token")
        #expect(refusal(apns("")) == "missing_field token")
        #expect(refusal(apns(Self.hex64, topic: nil)) == "missing_field topic")
        #expect(refusal(apns(Self.hex64, environment: nil)) == "missing_field environment")
        #expect(refusal(apns(Self.hex64, environment: "development")) == "bad_request environment")
        #expect(refusal(apns(Self.hex64, environment: "Production")) == "bad_request environment")
        let longest = String(repeating: "a.", count: 127) + "b"  // 255 bytes
        #expect(try DeviceRules.check(apns(Self.hex64, topic: longest), allowLoopbackHTTP: false).topic == longest)
        #expect(try DeviceRules.check(apns(Self.hex64, topic: "com.example.app.voip"), allowLoopbackHTTP: false).topic != nil)
        for topic in ["", "com..example", ".com.example", "com.example.", "com.example app", "com/example", "com.exämple",
                      longest + "c"] {
            #expect(refusal(apns(Self.hex64, topic: topic)) == "bad_request topic", "\(topic.debugDescription)")
        }
    }

    @Test("FCM tokens: 1–2,048 bytes of printable ASCII", arguments: [
        "with space", "tab\there", "new\nline", "nul\u{0}", "del\u{7f}", "ünïcode", String(repeating: "x", count: 2049),
    ])
    func badFCMTokens(_ token: String) {
        #expect(refusal(DeviceRequest(platform: "fcm", token: token)) == "invalid_device_token token", "\(token.debugDescription)")
    }

    @Test func fcmTokenBounds() throws {
        let longest = String(repeating: "x", count: 2048)
        #expect(try DeviceRules.check(DeviceRequest(platform: "fcm", token: longest), allowLoopbackHTTP: false).token == longest)
        #expect(refusal(DeviceRequest(platform: "fcm", token: "")) == "missing_field token")
        #expect(refusal(DeviceRequest(platform: "fcm")) == "missing_field token")
    }

    @Test func webPushKeysMustBeAP256PointAnd16Bytes() throws {
        var point = try #require(Base64.decode(Substring(rfc8291Key), alphabet: .url))
        let key = "invalid_push_keys subscription.keys.p256dh"
        let auth = "invalid_push_keys subscription.keys.auth"
        // 65 bytes from 0x04 that are not a point on the curve.
        point[64] ^= 0x01
        #expect(refusal(webpush(p256dh: Base64.encode(point, alphabet: .url))) == key)
        point[64] ^= 0x01
        #expect(refusal(webpush(p256dh: Base64.encode(point, alphabet: .url))) == nil)
        // The same x as a compressed point (33 bytes), or with another prefix.
        #expect(refusal(webpush(p256dh: Base64.encode([0x02] + point[1...32], alphabet: .url))) == key)
        point[0] = 0x05
        #expect(refusal(webpush(p256dh: Base64.encode(point, alphabet: .url))) == key)
        #expect(refusal(webpush(p256dh: Base64.encode([UInt8](repeating: 0, count: 65), alphabet: .url))) == key)
        // The standard alphabet, stray characters, an overlong text.
        #expect(refusal(webpush(p256dh: rfc8291Key.replacingOccurrences(of: "_", with: "/"))) == key)
        #expect(refusal(webpush(p256dh: rfc8291Key + "!")) == key)
        #expect(refusal(webpush(p256dh: rfc8291Key + rfc8291Key)) == key)
        #expect(refusal(webpush(auth: Base64.encode([UInt8](repeating: 7, count: 15), alphabet: .url))) == auth)
        #expect(refusal(webpush(auth: Base64.encode([UInt8](repeating: 7, count: 17), alphabet: .url))) == auth)
        #expect(refusal(webpush(auth: "BTBZMqHH6r4Tts7J+aSIgg")) == auth)
        #expect(refusal(webpush(p256dh: nil)) == "missing_field subscription.keys.p256dh")
        #expect(refusal(webpush(auth: "")) == "missing_field subscription.keys.auth")
        #expect(refusal(DeviceRequest(platform: "webpush", subscription: PushSubscriptionBody(endpoint: "https://a.example/x", keys: nil)))
            == "missing_field subscription.keys")
        #expect(refusal(webpush(nil)) == "missing_field subscription.endpoint")
    }

    @Test("refused endpoints, in production and in development", arguments: [
        "http://push.example.com/x", "http://10.0.0.1/x", "http://192.168.1.2:8080/x", "ftp://push.example.com/x",
        "https://user@push.example.com/x", "https://push.example.com@127.0.0.1/x", "https://push.example.com/x#frag",
        "https://push.example.com/x y", "https://push.example.com/\u{0}", "https://push.exämple.com/x", "https:///x",
        "https://push..example.com/x", "https://push.example.com:0/x", "https://push.example.com:65536/x",
        "https://push.example.com:/x", "https://push.example.com:8a/x", "https://[::1/x", "https://[::1]x/x",
        "https://" + String(repeating: "a", count: 64) + ".example/x", "push.example.com/x", "",
        "https://push.example.com/" + String(repeating: "p", count: 2048 - 24),
    ])
    func refusedEndpoints(_ endpoint: String) {
        for development in [false, true] {
            #expect(refusal(webpush(endpoint), development: development) == "invalid_push_endpoint subscription.endpoint",
                    "\(endpoint.debugDescription) development: \(development)")
        }
    }

    @Test func endpointsOnLoopbackAndAddressesOnlyInDevelopment() throws {
        let longest = "https://push.example.com/" + String(repeating: "p", count: 2048 - 25)
        #expect(refusal(webpush(longest)) == nil)
        for endpoint in ["https://updates.push.services.mozilla.com/wpush/v2/gAAA", "HTTPS://web.push.apple.com/QO",
                         "https://push.example.com:8443/x?y=1", "https://wns2-par02p.notify.windows.com/w/?token=x"] {
            #expect(refusal(webpush(endpoint)) == nil, "\(endpoint)")
        }
        for endpoint in ["http://127.0.0.1:9000/push/1", "http://[::1]:9000/push", "http://localhost:9000/push",
                         "http://LOCALHOST/push", "https://127.0.0.1:9443/push", "https://[::1]/push", "https://localhost/push",
                         "https://10.1.2.3/push", "https://receiver/push"] {
            #expect(refusal(webpush(endpoint)) == "invalid_push_endpoint subscription.endpoint", "\(endpoint)")
            let address = try DeviceRules.check(webpush(endpoint), allowLoopbackHTTP: true)
            #expect(address.token == endpoint)
        }
    }
}
