import Foundation
import Synchronization
import Testing
import SpotterCore
import SpotterPorts
import SpotterPushCrypto
@testable import SpotterPush

@Suite("APNs provider against the local APNs stand-in (HTTP/2, PyJWT)", .serialized, .enabled(if: StandIns.shouldRun))
final class APNsProviderTests {
    let standIns: StandIns
    let clock = MovableClock()
    let provider: APNsProvider

    init() throws {
        standIns = try StandIns.shared()
        try standIns.clearModes("apns")
        let key = try APNsSigningKey(p8: standIns.apnsP8, keyID: standIns.apnsKeyID, teamID: standIns.apnsTeamID)
        provider = APNsProvider(signingKey: key, baseURL: standIns.apns,
                                client: HTTP2Client(options: .init(caFile: standIns.caFile, timeoutSeconds: 10)), clock: clock.now)
    }

    deinit { provider.shutdown() }

    func address(_ token: String = apnsToken()) -> PushAddress {
        PushAddress(platform: .apns, token: token, topic: "com.example.spotter", environment: "production")
    }

    @Test("an alert in Arabic is delivered over HTTP/2 with the headers and payload APNs wants, signed with the .p8 key")
    func alert() throws {
        let message = makeMessage(address: address())
        #expect(provider.deliver(message) == .delivered)
        let push = try #require(try standIns.pushes(to: message.address.token).first)
        #expect(push["http_version"] as? String == "HTTP/2")
        let headers = try #require(push["headers"] as? [String: String])
        #expect(headers["apns-topic"] == "com.example.spotter")
        #expect(headers["apns-push-type"] == "alert")
        #expect(headers["apns-priority"] == "10")
        #expect(headers["apns-id"] == APNsEncoding.apnsID(for: message.id))
        #expect(headers["apns-collapse-id"] == "thread-42")
        #expect(headers["apns-expiration"] == String(message.expiresAt))
        let payload = try #require(push["payload"] as? [String: Any])
        let aps = try #require(payload["aps"] as? [String: Any])
        let alert = try #require(aps["alert"] as? [String: String])
        #expect(alert == ["title": "سارة", "body": "موعد الجلسة غدًا"])
        #expect(aps["badge"] as? Int == 3)
        #expect(aps["sound"] as? String == "default")
        #expect(aps["interruption-level"] as? String == "active")
        #expect(aps["thread-id"] as? String == "thread-42")
        #expect(payload["push_id"] as? String == message.id)
        #expect(payload["thread"] as? String == "t42")
        let jwt = try #require(push["jwt"] as? [String: Any])
        #expect((jwt["claims"] as? [String: Any])?["iss"] as? String == standIns.apnsTeamID)
        #expect((jwt["header"] as? [String: Any])?["kid"] as? String == standIns.apnsKeyID)
    }

    @Test("a silent update is a background push at priority 5 with content-available and the badge only")
    func silent() throws {
        let message = makeMessage(address: address(), alert: nil, badge: 0)
        #expect(provider.deliver(message) == .delivered)
        let push = try #require(try standIns.pushes(to: message.address.token).first)
        let headers = try #require(push["headers"] as? [String: String])
        #expect(headers["apns-push-type"] == "background")
        #expect(headers["apns-priority"] == "5")
        let aps = try #require((push["payload"] as? [String: Any])?["aps"] as? [String: Any])
        #expect(aps.keys.sorted() == ["badge", "content-available"])
        #expect(aps["badge"] as? Int == 0)
    }

    @Test("one provider token serves every push until 50 minutes have passed; then a new one is signed")
    func tokenReusedThenRenewed() throws {
        let token = apnsToken()
        for _ in 0..<3 { #expect(provider.deliver(makeMessage(address: address(token))) == .delivered) }
        clock.advance(49 * 60)
        #expect(provider.deliver(makeMessage(address: address(token))) == .delivered)
        clock.advance(2 * 60)
        #expect(provider.deliver(makeMessage(address: address(token))) == .delivered)
        let tokens = try standIns.pushes(to: token).map { ($0["jwt"] as? [String: Any])?["token"] as? String ?? "" }
        #expect(tokens.count == 5)
        #expect(Set(tokens.prefix(4)).count == 1)
        #expect(tokens[4] != tokens[0])
        let iats = try standIns.pushes(to: token).map { (($0["jwt"] as? [String: Any])?["claims"] as? [String: Any])?["iat"] as? Int ?? 0 }
        #expect(iats[4] - iats[0] >= 51 * 60)
    }

    @Test("403 ExpiredProviderToken: a new token is signed and the push sent once more")
    func expiredProviderToken() throws {
        let token = apnsToken()
        #expect(provider.deliver(makeMessage(address: address(token))) == .delivered)
        try standIns.mode(["service": "apns", "token": token, "status": 403, "reason": "ExpiredProviderToken", "times": 1])
        #expect(provider.deliver(makeMessage(address: address(token))) == .delivered)
        let tokens = try standIns.pushes(to: token).map { ($0["jwt"] as? [String: Any])?["token"] as? String ?? "" }
        #expect(tokens.count == 2 && tokens[0] != tokens[1])
        // Twice in a row: tried once more, then given back as a retry.
        try standIns.mode(["service": "apns", "token": token, "status": 403, "reason": "ExpiredProviderToken", "times": 2])
        #expect(provider.deliver(makeMessage(address: address(token))) == .retry(afterSeconds: nil, reason: "ExpiredProviderToken"))
    }

    @Test("a token signed by another key is refused for good: InvalidProviderToken")
    func wrongKey() throws {
        let impostor = APNsProvider(
            signingKey: try APNsSigningKey(privateKey: .generate(), keyID: standIns.apnsKeyID, teamID: standIns.apnsTeamID),
            baseURL: standIns.apns, client: HTTP2Client(options: .init(caFile: standIns.caFile)))
        defer { impostor.shutdown() }
        #expect(impostor.deliver(makeMessage(address: address())) == .rejected(reason: "InvalidProviderToken"))
    }

    @Test("410 and 400 BadDeviceToken are gone; 429 and 503 are retried after Retry-After; another 400 is refused")
    func answers() throws {
        let cases: [([String: Any], PushOutcome)] = [
            (["status": 410, "reason": "Unregistered"], .gone(reason: "Unregistered")),
            (["status": 400, "reason": "BadDeviceToken"], .gone(reason: "BadDeviceToken")),
            (["status": 400, "reason": "DeviceTokenNotForTopic"], .gone(reason: "DeviceTokenNotForTopic")),
            (["status": 429, "reason": "TooManyRequests", "retry_after": 7], .retry(afterSeconds: 7, reason: "TooManyRequests")),
            (["status": 503, "reason": "ServiceUnavailable"], .retry(afterSeconds: nil, reason: "ServiceUnavailable")),
            (["status": 500], .retry(afterSeconds: nil, reason: "HTTP 500")),
            (["status": 400, "reason": "BadTopic"], .rejected(reason: "BadTopic")),
        ]
        for (mode, expected) in cases {
            let token = apnsToken()
            try standIns.mode(mode.merging(["service": "apns", "token": token]) { $1 })
            #expect(provider.deliver(makeMessage(address: address(token))) == expected, "\(mode)")
        }
    }

    @Test("a payload over 4096 bytes is refused before it is sent; an address without a topic too")
    func refusedLocally() {
        let long = makeMessage(address: address(), alert: .init(title: "t", body: String(repeating: "ب", count: 2100), quiet: false))
        guard case .rejected = provider.deliver(long) else { Issue.record("a 4 KB+ payload was not refused"); return }
        var noTopic = makeMessage(address: address())
        noTopic.address.topic = nil
        #expect(provider.deliver(noTopic) == .rejected(reason: "no apns-topic"))
    }

    @Test("the service down (connections closed, new ones refused): the push is given back as a retry")
    func down() throws {
        #expect(provider.deliver(makeMessage(address: address())) == .delivered)   // a connection is open
        try standIns.mode(["service": "apns", "down": 3])
        guard case .retry(nil, _) = provider.deliver(makeMessage(address: address())) else {
            Issue.record("not a retry while the service is down")
            return
        }
        try standIns.clearModes("apns")
        #expect(provider.deliver(makeMessage(address: address())) == .delivered)   // a new connection
    }

    @Test("100 pushes at once are all delivered, multiplexed over at most 4 HTTP/2 connections")
    func concurrent() throws {
        let token = apnsToken()
        let outcomes = Waiter<[PushOutcome]>()
        let collected = Collected()
        for index in 0..<100 {
            provider.send(makeMessage(id: "many-\(index)-\(token)", address: address(token))) { outcome in
                if let all = collected.add(outcome, expecting: 100) { outcomes.finish(all) }
            }
        }
        let all = outcomes.wait(seconds: 60)
        #expect(all.count == 100 && all.allSatisfy { $0 == .delivered })
        let pushes = try standIns.pushes(to: token)
        #expect(pushes.count == 100)
        #expect(pushes.allSatisfy { $0["http_version"] as? String == "HTTP/2" })
        let connections = Set(pushes.compactMap { $0["connection"] as? Int })
        #expect((1...4).contains(connections.count), "\(connections.count) connections")
        #expect(Set(pushes.compactMap { ($0["headers"] as? [String: String])?["apns-id"] }).count == 100)
    }
}

/// Outcomes gathered from many completions.
final class Collected: Sendable {
    private let outcomes = Mutex<[PushOutcome]>([])
    /// All of them once `expecting` have come.
    func add(_ outcome: PushOutcome, expecting: Int) -> [PushOutcome]? {
        outcomes.withLock { list in
            list.append(outcome)
            return list.count == expecting ? list : nil
        }
    }
}
