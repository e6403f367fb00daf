import Foundation
import Testing
import SpotterCore
import SpotterPorts
import SpotterPushCrypto
@testable import SpotterPush

@Suite("Web Push provider against the local push service stand-in (VAPID, http_ece)", .serialized, .enabled(if: StandIns.shouldRun))
final class WebPushProviderTests {
    let standIns: StandIns
    let clock = MovableClock()
    let provider: WebPushProvider

    init() throws {
        standIns = try StandIns.shared()
        try standIns.clearModes("webpush")
        let key = try VAPIDKey(privateKey: .generate(), subject: "mailto:ops@spotter.example")
        provider = WebPushProvider(vapidKey: key, client: HTTP2Client(options: .init(caFile: standIns.caFile, timeoutSeconds: 10)),
                                   clock: clock.now)
    }

    deinit { provider.shutdown() }

    func address(_ id: String = UUID().uuidString.lowercased()) -> PushAddress {
        PushAddress(platform: .webpush, token: standIns.endpointBase + id, p256dh: standIns.p256dh, auth: standIns.auth)
    }

    func id(of address: PushAddress) -> String { String(address.token.split(separator: "/").last ?? "") }

    @Test("an alert in Arabic is encrypted to the subscription, decrypted by http_ece, with VAPID and the RFC 8030 headers")
    func alert() throws {
        let message = makeMessage(address: address())
        #expect(provider.deliver(message) == .delivered)
        let push = try #require(try standIns.pushes(to: id(of: message.address)).first)
        #expect(push["http_version"] as? String == "HTTP/2")
        let payload = try #require(push["payload"] as? [String: Any])
        #expect(payload["id"] as? String == message.id)
        #expect(payload["title"] as? String == "سارة")
        #expect(payload["body"] as? String == "موعد الجلسة غدًا")
        #expect(payload["badge"] as? Int == 3)
        #expect(payload["category"] as? String == "message")
        #expect(payload["data"] as? [String: String] == ["thread": "t42", "kind": "message"])
        let headers = try #require(push["headers"] as? [String: String])
        #expect(headers["urgency"] == "high")
        #expect(headers["topic"] == "thread-42")
        #expect(headers["content-encoding"] == "aes128gcm")
        #expect((3590...3600).contains(Int(headers["ttl"] ?? "") ?? 0))
        let claims = try #require((push["jwt"] as? [String: Any])?["claims"] as? [String: Any])
        #expect(claims["aud"] as? String == standIns.webPush)
        #expect(claims["sub"] as? String == "mailto:ops@spotter.example")
    }

    @Test("a silent update carries no title or body, at normal urgency; an expired push is sent with TTL 0")
    func silent() throws {
        let message = makeMessage(address: address(), alert: nil, badge: 0, collapseKey: "not a topic!", expiresIn: -50)
        #expect(provider.deliver(message) == .delivered)
        let push = try #require(try standIns.pushes(to: id(of: message.address)).first)
        let payload = try #require(push["payload"] as? [String: Any])
        #expect(payload["title"] == nil && payload["body"] == nil)
        #expect(payload["badge"] as? Int == 0)
        let headers = try #require(push["headers"] as? [String: String])
        #expect(headers["urgency"] == "normal")
        #expect(headers["ttl"] == "0")
        #expect(headers["topic"] == nil)
    }

    @Test("one VAPID JWT serves the origin until 6 hours have passed; then a new one is signed")
    func vapidReusedThenRenewed() throws {
        let target = address()
        for _ in 0..<3 { #expect(provider.deliver(makeMessage(address: target)) == .delivered) }
        clock.advance(6 * 3600 + 1)
        #expect(provider.deliver(makeMessage(address: target)) == .delivered)
        let tokens = try standIns.pushes(to: id(of: target)).map { ($0["jwt"] as? [String: Any])?["token"] as? String ?? "" }
        #expect(tokens.count == 4)
        #expect(Set(tokens.prefix(3)).count == 1)
        #expect(tokens[3] != tokens[0])
    }

    @Test("410 and 404 are gone; 429 retried after Retry-After, 500 retried; 413, 400 and 403 refused")
    func answers() throws {
        let cases: [([String: Any], PushOutcome)] = [
            (["status": 410], .gone(reason: "HTTP 410")),
            (["status": 404], .gone(reason: "HTTP 404")),
            (["status": 429, "retry_after": 30], .retry(afterSeconds: 30, reason: "HTTP 429")),
            (["status": 500], .retry(afterSeconds: nil, reason: "HTTP 500")),
            (["status": 413], .rejected(reason: "HTTP 413")),
            (["status": 400], .rejected(reason: "HTTP 400")),
            (["status": 403], .rejected(reason: "HTTP 403")),
        ]
        for (mode, expected) in cases {
            let target = address()
            try standIns.mode(mode.merging(["service": "webpush", "token": id(of: target)]) { $1 })
            #expect(provider.deliver(makeMessage(address: target)) == expected, "\(mode)")
        }
    }

    @Test("encrypted to the wrong keys, the push service cannot decrypt it and refuses it (400)")
    func wrongKeys() throws {
        let other = P256PrivateKey.generate().publicKey.base64URL
        let target = PushAddress(platform: .webpush, token: standIns.endpointBase + "wrong", p256dh: other, auth: standIns.auth)
        guard case .rejected = provider.deliver(makeMessage(address: target)) else {
            Issue.record("a push encrypted to other keys was not refused")
            return
        }
    }

    @Test("a subscription without keys, or with keys that are not a P-256 point, is gone without a request")
    func badSubscription() {
        var noKeys = makeMessage(address: address())
        noKeys.address.p256dh = nil
        guard case .gone = provider.deliver(noKeys) else { Issue.record("no keys: not gone"); return }
        var badPoint = makeMessage(address: address())
        badPoint.address.p256dh = "AAAA"
        guard case .gone = provider.deliver(badPoint) else { Issue.record("a bad point: not gone"); return }
    }

    @Test("the service down: a retry")
    func down() throws {
        try standIns.mode(["service": "webpush", "down": 2])
        guard case .retry = provider.deliver(makeMessage(address: address())) else { Issue.record("not a retry"); return }
        try standIns.clearModes("webpush")
        #expect(provider.deliver(makeMessage(address: address())) == .delivered)
    }
}
