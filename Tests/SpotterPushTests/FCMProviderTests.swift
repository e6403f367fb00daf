import Foundation
import Testing
import SpotterCore
import SpotterPorts
import SpotterPushCrypto
@testable import SpotterPush

@Suite("FCM provider against the local FCM stand-in (token grant and messages:send)", .serialized, .enabled(if: StandIns.shouldRun))
final class FCMProviderTests {
    let standIns: StandIns
    let clock = MovableClock()
    let provider: FCMProvider

    init() throws {
        standIns = try StandIns.shared()
        try standIns.clearModes("fcm")
        try standIns.mode(["fcm_token_lifetime": 3600])
        let account = try FCMServiceAccount(json: standIns.serviceAccountJSON)
        provider = FCMProvider(account: account, baseURL: standIns.fcm,
                               client: HTTP2Client(options: .init(caFile: standIns.caFile, timeoutSeconds: 10)), clock: clock.now)
    }

    deinit { provider.shutdown() }

    func address(_ token: String = "fcm-" + UUID().uuidString) -> PushAddress { PushAddress(platform: .fcm, token: token) }

    @Test("an alert in Arabic is delivered over HTTP/2 as an HTTP v1 message; one grant serves many pushes")
    func alert() throws {
        let grantsBefore = try standIns.received().grants
        let message = makeMessage(address: address())
        #expect(provider.deliver(message) == .delivered)
        for _ in 0..<3 { #expect(provider.deliver(makeMessage(address: message.address)) == .delivered) }
        #expect(try standIns.received().grants == grantsBefore + 1)
        let pushes = try standIns.pushes(to: message.address.token)
        #expect(pushes.count == 4)
        let push = try #require(pushes.first)
        #expect(push["http_version"] as? String == "HTTP/2")
        let body = try #require(push["payload"] as? [String: Any])
        #expect(body["notification"] as? [String: String] == ["title": "سارة", "body": "موعد الجلسة غدًا"])
        let data = try #require(body["data"] as? [String: String])
        #expect(data == ["thread": "t42", "kind": "message", "push_id": message.id, "category": "message", "badge": "3"])
        let android = try #require(body["android"] as? [String: Any])
        #expect(android["collapse_key"] as? String == "thread-42")
        #expect(android["priority"] as? String == "HIGH")
        let ttl = try #require(android["ttl"] as? String)
        #expect(ttl.hasSuffix("s") && (3590...3600).contains(Int(ttl.dropLast()) ?? 0))
        let apns = try #require(body["apns"] as? [String: Any])
        #expect((apns["headers"] as? [String: String])?["apns-collapse-id"] == "thread-42")
        #expect(((apns["payload"] as? [String: Any])?["aps"] as? [String: Any])?["badge"] as? Int == 3)
        #expect((body["webpush"] as? [String: Any])?["headers"] as? [String: String] ==
                ["Topic": "thread-42", "Urgency": "high", "TTL": String(ttl.dropLast())])
    }

    @Test("a silent update has no notification, NORMAL priority, and the badge in data")
    func silent() throws {
        let message = makeMessage(address: address(), alert: nil, badge: 7)
        #expect(provider.deliver(message) == .delivered)
        let body = try #require(try standIns.pushes(to: message.address.token).first?["payload"] as? [String: Any])
        #expect(body["notification"] == nil)
        #expect((body["android"] as? [String: Any])?["priority"] as? String == "NORMAL")
        #expect((body["data"] as? [String: String])?["badge"] == "7")
    }

    @Test("the access token is granted again a minute before it expires (moved clock), and after a 401")
    func tokenRefresh() throws {
        let token = "fcm-" + UUID().uuidString
        #expect(provider.deliver(makeMessage(address: address(token))) == .delivered)
        let first = try standIns.received().grants
        clock.advance(3600 - 30)
        #expect(provider.deliver(makeMessage(address: address(token))) == .delivered)
        #expect(try standIns.received().grants == first + 1)
        try standIns.mode(["fcm_revoke": true])   // every token issued so far now gets 401
        #expect(provider.deliver(makeMessage(address: address(token))) == .delivered)
        #expect(try standIns.received().grants == first + 2)
        #expect(try standIns.pushes(to: token).count == 3)
    }

    @Test("pushes sent together while no token is held share one grant")
    func oneGrantAtATime() throws {
        let fresh = FCMProvider(account: try FCMServiceAccount(json: standIns.serviceAccountJSON), baseURL: standIns.fcm,
                                client: HTTP2Client(options: .init(caFile: standIns.caFile)))
        defer { fresh.shutdown() }
        let before = try standIns.received().grants
        let done = Waiter<[PushOutcome]>()
        let collected = Collected()
        for _ in 0..<20 {
            fresh.send(makeMessage(address: address())) { if let all = collected.add($0, expecting: 20) { done.finish(all) } }
        }
        #expect(done.wait().allSatisfy { $0 == .delivered })
        #expect(try standIns.received().grants == before + 1)
    }

    @Test("404 UNREGISTERED is gone; 400 INVALID_ARGUMENT refused; 429 and 503 retried after Retry-After")
    func answers() throws {
        let cases: [([String: Any], PushOutcome)] = [
            (["status": 404, "reason": "UNREGISTERED"], .gone(reason: "UNREGISTERED")),
            (["status": 400, "reason": "UNREGISTERED"], .gone(reason: "UNREGISTERED")),
            (["status": 400, "reason": "INVALID_ARGUMENT"], .rejected(reason: "INVALID_ARGUMENT")),
            (["status": 429, "reason": "QUOTA_EXCEEDED", "retry_after": 11], .retry(afterSeconds: 11, reason: "QUOTA_EXCEEDED")),
            (["status": 503], .retry(afterSeconds: nil, reason: "UNAVAILABLE")),
        ]
        for (mode, expected) in cases {
            let token = "fcm-" + UUID().uuidString
            try standIns.mode(mode.merging(["service": "fcm", "token": token]) { $1 })
            #expect(provider.deliver(makeMessage(address: address(token))) == expected, "\(mode)")
        }
    }

    @Test("a grant refused by the token endpoint (another account's key) holds the push for a retry")
    func grantRefused() throws {
        var json = try #require(try JSONSerialization.jsonObject(with: Data(standIns.serviceAccountJSON)) as? [String: Any])
        json["client_email"] = "someone-else@spotter-test.iam.gserviceaccount.com"
        let other = FCMProvider(account: try FCMServiceAccount(json: Array(try JSONSerialization.data(withJSONObject: json))),
                                baseURL: standIns.fcm, client: HTTP2Client(options: .init(caFile: standIns.caFile)))
        defer { other.shutdown() }
        guard case .retry(_, let reason) = other.deliver(makeMessage(address: address())) else {
            Issue.record("a refused grant did not give a retry")
            return
        }
        #expect(reason.contains("token grant") && reason.contains("400"))
    }
}
