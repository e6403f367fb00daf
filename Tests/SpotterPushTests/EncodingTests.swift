import Foundation
import Testing
import SpotterCore
import SpotterPorts
import SpotterPushCrypto
@testable import SpotterPush

/// The providers' encodings and answer mappings, without sockets: every byte they send is decided here.
@Suite("Push encodings (pure)")
struct EncodingTests {
    let apnsAddress = PushAddress(platform: .apns, token: String(repeating: "ab", count: 32), topic: "com.example.spotter",
                                  environment: "sandbox")

    func message(_ address: PushAddress, alert: PushMessage.Alert? = .init(title: "Sara", body: "Hi \"you\"\n", quiet: false),
                 urgent: Bool = true) -> PushMessage {
        PushMessage(id: "m-1", address: address, alert: alert, badge: 2, collapseKey: "t1", category: "message",
                    data: ["thread": "t1", "aps": "ignored", "push_id": "ignored"], expiresAt: 1_700_000_600, urgent: urgent)
    }

    @Test("APNs: an alert's payload, byte for byte; data keys at the top level but for aps and push_id")
    func apnsAlertPayload() {
        let payload = String(decoding: APNsEncoding.payload(for: message(apnsAddress)), as: UTF8.self)
        #expect(payload == #"{"aps":{"alert":{"title":"Sara","body":"Hi \"you\"\n"},"badge":2,"sound":"default","#
                + #""interruption-level":"active","thread-id":"t1","category":"message"},"push_id":"m-1","thread":"t1"}"#)
    }

    @Test("APNs: quiet hours drop the sound and make the alert passive; a silent update is content-available")
    func apnsQuietAndSilent() {
        let quiet = String(decoding: APNsEncoding.payload(for: message(apnsAddress, alert: .init(title: "a", body: "b", quiet: true))),
                           as: UTF8.self)
        #expect(!quiet.contains("sound") && quiet.contains(#""interruption-level":"passive""#))
        let silent = message(apnsAddress, alert: nil)
        #expect(String(decoding: APNsEncoding.payload(for: silent), as: UTF8.self)
                == #"{"aps":{"content-available":1,"badge":2},"push_id":"m-1","thread":"t1"}"#)
        let headers = Dictionary(uniqueKeysWithValues: APNsEncoding.headers(for: silent).map { ($0.name, $0.value) })
        #expect(headers["apns-push-type"] == "background")
        #expect(headers["apns-priority"] == "5")   // even when marked urgent
    }

    @Test("APNs: the request's URL per environment, and its headers")
    func apnsRequest() {
        let request = APNsEncoding.request(for: message(apnsAddress), baseURL: APNsEncoding.baseURL(environment: "sandbox", override: nil),
                                           providerToken: "jwt")
        #expect(request.url == "https://api.sandbox.push.apple.com/3/device/" + apnsAddress.token)
        #expect(APNsEncoding.baseURL(environment: "production", override: nil) == "https://api.push.apple.com")
        #expect(APNsEncoding.baseURL(environment: "sandbox", override: "https://127.0.0.1:9/") == "https://127.0.0.1:9")
        #expect(request.header("authorization") == "bearer jwt")
        #expect(request.header("apns-topic") == "com.example.spotter")
        #expect(request.header("apns-priority") == "10")
        #expect(request.header("apns-expiration") == "1700000600")
        #expect(request.header("apns-collapse-id") == "t1")
        #expect(!request.headers.description.contains("jwt"))   // authorization is redacted when printed
    }

    @Test("APNs: apns-id is a UUID made from the push id: the same for the same id, version 8, upper case")
    func apnsID() {
        let id = APNsEncoding.apnsID(for: "m-1")
        #expect(id == APNsEncoding.apnsID(for: "m-1"))
        #expect(id != APNsEncoding.apnsID(for: "m-2"))
        #expect(UUID(uuidString: id) != nil)
        #expect(id == id.uppercased())
        let parts = id.split(separator: "-")
        #expect(parts.map(\.count) == [8, 4, 4, 4, 12])
        #expect(parts[2].first == "8")
        #expect("89AB".contains(parts[3].first!))
        #expect(UUID(uuidString: APNsEncoding.apnsID(for: "")) != nil)
    }

    @Test("APNs: answers to outcomes")
    func apnsOutcomes() {
        func response(_ status: Int, _ reason: String? = nil, retryAfter: String? = nil) -> HTTPResponse {
            HTTPResponse(status: status, headers: retryAfter.map { ["retry-after": $0] } ?? [:],
                         body: reason.map { Array(#"{"reason":"\#($0)"}"#.utf8) } ?? [])
        }
        #expect(APNsEncoding.outcome(of: response(200)) == .delivered)
        #expect(APNsEncoding.outcome(of: response(410, "Unregistered")) == .gone(reason: "Unregistered"))
        #expect(APNsEncoding.outcome(of: response(410)) == .gone(reason: "Unregistered"))
        #expect(APNsEncoding.outcome(of: response(400, "BadDeviceToken")) == .gone(reason: "BadDeviceToken"))
        #expect(APNsEncoding.outcome(of: response(400, "DeviceTokenNotForTopic")) == .gone(reason: "DeviceTokenNotForTopic"))
        #expect(APNsEncoding.outcome(of: response(400, "BadCollapseId")) == .rejected(reason: "BadCollapseId"))
        #expect(APNsEncoding.outcome(of: response(413, "PayloadTooLarge")) == .rejected(reason: "PayloadTooLarge"))
        #expect(APNsEncoding.outcome(of: response(429, "TooManyRequests", retryAfter: "12")) == .retry(afterSeconds: 12, reason: "TooManyRequests"))
        #expect(APNsEncoding.outcome(of: response(503, retryAfter: "soon")) == .retry(afterSeconds: nil, reason: "HTTP 503"))
        #expect(APNsEncoding.outcome(of: response(500, retryAfter: "99999999")) == .retry(afterSeconds: 86_400, reason: "HTTP 500"))
        #expect(APNsEncoding.outcome(of: response(403, "ExpiredProviderToken")) == .retry(afterSeconds: nil, reason: "ExpiredProviderToken"))
        #expect(APNsEncoding.isExpiredProviderToken(response(403, "ExpiredProviderToken")))
        #expect(!APNsEncoding.isExpiredProviderToken(response(403, "InvalidProviderToken")))
        // A reason with control characters reaches the outcome without them.
        #expect(APNsEncoding.outcome(of: HTTPResponse(status: 400, body: Array(#"{"reason":"Bad\u0000\nThing"}"#.utf8)))
                == .rejected(reason: "BadThing"))
        #expect(APNsEncoding.outcome(of: HTTPResponse(status: 400, body: Array("not json".utf8))) == .rejected(reason: "HTTP 400"))
    }

    @Test("FCM: the message, byte for byte, for an alert and a silent update")
    func fcmBody() {
        let address = PushAddress(platform: .fcm, token: "tok")
        let body = String(decoding: FCMEncoding.body(for: message(address), now: 1_700_000_000), as: UTF8.self)
        #expect(body == #"{"message":{"token":"tok","notification":{"title":"Sara","body":"Hi \"you\"\n"},"#
                + #""data":{"aps":"ignored","thread":"t1","push_id":"m-1","category":"message","badge":"2"},"#
                + #""android":{"collapse_key":"t1","priority":"HIGH","ttl":"600s"},"#
                + #""apns":{"headers":{"apns-collapse-id":"t1","apns-priority":"10","apns-expiration":"1700000600","apns-push-type":"alert"},"#
                + #""payload":{"aps":{"badge":2,"sound":"default"}}},"#
                + #""webpush":{"headers":{"Topic":"t1","Urgency":"high","TTL":"600"}}}}"#)
        let silent = String(decoding: FCMEncoding.body(for: message(address, alert: nil), now: 1_700_001_000), as: UTF8.self)
        #expect(!silent.contains("notification"))
        #expect(silent.contains(#""priority":"NORMAL","ttl":"0s""#))
        #expect(silent.contains(#""aps":{"badge":2,"content-available":1}"#))
    }

    @Test("FCM: answers to outcomes")
    func fcmOutcomes() {
        func response(_ status: Int, state: String, code: String? = nil, retryAfter: String? = nil) -> HTTPResponse {
            let details = code.map { #","details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"\#($0)"}]"# } ?? ""
            return HTTPResponse(status: status, headers: retryAfter.map { ["retry-after": $0] } ?? [:],
                                body: Array(#"{"error":{"code":\#(status),"status":"\#(state)"\#(details)}}"#.utf8))
        }
        #expect(FCMEncoding.outcome(of: HTTPResponse(status: 200, body: Array(#"{"name":"x"}"#.utf8))) == .delivered)
        #expect(FCMEncoding.outcome(of: response(404, state: "NOT_FOUND", code: "UNREGISTERED")) == .gone(reason: "UNREGISTERED"))
        #expect(FCMEncoding.outcome(of: response(404, state: "NOT_FOUND")) == .gone(reason: "NOT_FOUND"))
        #expect(FCMEncoding.outcome(of: response(400, state: "INVALID_ARGUMENT", code: "UNREGISTERED")) == .gone(reason: "UNREGISTERED"))
        #expect(FCMEncoding.outcome(of: response(400, state: "INVALID_ARGUMENT", code: "INVALID_ARGUMENT")) == .rejected(reason: "INVALID_ARGUMENT"))
        #expect(FCMEncoding.outcome(of: response(403, state: "PERMISSION_DENIED", code: "SENDER_ID_MISMATCH")) == .rejected(reason: "SENDER_ID_MISMATCH"))
        #expect(FCMEncoding.outcome(of: response(429, state: "RESOURCE_EXHAUSTED", code: "QUOTA_EXCEEDED", retryAfter: "5"))
                == .retry(afterSeconds: 5, reason: "QUOTA_EXCEEDED"))
        #expect(FCMEncoding.outcome(of: response(503, state: "UNAVAILABLE")) == .retry(afterSeconds: nil, reason: "UNAVAILABLE"))
        #expect(FCMEncoding.outcome(of: HTTPResponse(status: 502)) == .retry(afterSeconds: nil, reason: "HTTP 502"))
    }

    @Test("Web Push: the plaintext and headers; TTL never negative; a collapse key that is not a topic is left out")
    func webPush() {
        let address = PushAddress(platform: .webpush, token: "https://push.example/x", p256dh: "p", auth: "a")
        var push = message(address)
        push.data = ["b": "2", "a": "1"]
        #expect(String(decoding: WebPushEncoding.payload(for: push), as: UTF8.self)
                == #"{"id":"m-1","title":"Sara","body":"Hi \"you\"\n","badge":2,"category":"message","data":{"a":"1","b":"2"}}"#)
        #expect(String(decoding: WebPushEncoding.payload(for: message(address, alert: nil)), as: UTF8.self).hasPrefix(#"{"id":"m-1","badge":2,"#))
        let headers = WebPushEncoding.headers(for: push, now: 1_700_000_000)
        #expect(headers.map(\.description) == ["TTL: 600", "Urgency: high", "Topic: t1", "Content-Encoding: aes128gcm",
                                               "Content-Type: application/octet-stream"])
        #expect(WebPushEncoding.headers(for: push, now: 1_800_000_000).first == HTTPHeader("TTL", "0"))
        for bad in ["", "has space", String(repeating: "a", count: 33), "ünï", "a/b"] { #expect(!WebPushEncoding.isTopic(bad), "\(bad)") }
        #expect(WebPushEncoding.isTopic(String(repeating: "a-_Z9", count: 6)))
    }

    @Test("Web Push: answers to outcomes")
    func webPushOutcomes() {
        #expect(WebPushEncoding.outcome(of: HTTPResponse(status: 201)) == .delivered)
        #expect(WebPushEncoding.outcome(of: HTTPResponse(status: 202)) == .delivered)
        #expect(WebPushEncoding.outcome(of: HTTPResponse(status: 410)) == .gone(reason: "HTTP 410"))
        #expect(WebPushEncoding.outcome(of: HTTPResponse(status: 404)) == .gone(reason: "HTTP 404"))
        #expect(WebPushEncoding.outcome(of: HTTPResponse(status: 429, headers: ["retry-after": " 60 "])) == .retry(afterSeconds: 60, reason: "HTTP 429"))
        #expect(WebPushEncoding.outcome(of: HTTPResponse(status: 413)) == .rejected(reason: "HTTP 413"))
        #expect(WebPushEncoding.outcome(of: HTTPResponse(status: 403)) == .rejected(reason: "HTTP 403"))
    }

    @Test("JSON strings: quotes, backslashes, control characters, U+2028 escaped; Arabic and emoji kept as UTF-8")
    func jsonStrings() throws {
        let text = "a\"b\\c\u{0}\u{1F}\t\r\n\u{7F}\u{2028}سلام 👋"
        let encoded = JSONValue.object([("k", .string(text))]).text
        #expect(encoded == #"{"k":"a\"b\\c\u0000\u001f\t\r\n\u007f\u2028سلام 👋"}"#)
        let decoded = try JSONSerialization.jsonObject(with: Data(encoded.utf8)) as? [String: String]
        #expect(decoded == ["k": text])
    }
}
