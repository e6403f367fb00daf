import Foundation
import Testing
import SpotterCore
import SpotterPush
import SpotterServer
import TestSupport

/// Outbound webhooks at their edges (issue 29, item 4): the registration rules and who may call, TLS outside
/// `--development`, and the outbox's bound per endpoint.
@Suite("Outbound webhooks at the edges", .serialized)
struct WebhookEdgeTests {
    /// Past an endpoint's outbox bound new events go straight to its dead-letter list, to be replayed: none lost.
    @Test func pastTheOutboxBoundEventsAreDeadLetteredNotLost() throws {
        let chat = try ChatFixture { config in
            config.development = true
            config.webhooks.transport = CurlWebhookTransport()
            config.webhooks.outboxLimit = 2
            config.webhooks.retryBaseMilliseconds = 50
            config.webhooks.retryMaxMilliseconds = 100
            config.webhooks.pollMilliseconds = 20
            config.logConsumerTiming.pollMilliseconds = 20
        }
        defer { _ = chat.server.stop() }
        let receiver = try WebhookReceiver()
        defer { receiver.stop() }
        let hook = try WebhookTests.register(chat, receiver.url, ["message.created"])
        try receiver.configure(secrets: [hook.secret], status: 500)
        let client = try chat.socket(chat.fixture.clientA.access)
        for n in 1...4 { try WebhookTests.send(client, chat.thread, "o\(n)", "text \(n)") }
        let admin = chat.fixture.admin.access
        var dead: [[String: Any]] = []
        try waitUntil(10, "two dead letters") {
            dead = (try? chat.fixture.api.call("GET", "/v1/admin/webhooks/\(hook.id)/dead-letters", token: admin))?
                .json["dead_letters"] as? [[String: Any]] ?? []
            return dead.count == 2
        }
        #expect(dead.allSatisfy { $0["last_error"] as? String == "outbox_full" && $0["attempts"] as? Int == 0 })
        #expect(try chat.server.accounts.pendingWebhookPayloads(endpointID: hook.id).count == 2)
        #expect(try chat.server.metric(#"spotter_webhook_dead_lettered_total{reason="outbox_full"}"#) == 2)

        try receiver.configure(secrets: [hook.secret], status: 200)
        #expect(try chat.fixture.api.call("POST", "/v1/admin/webhooks/\(hook.id)/dead-letters/replay", [:], token: admin)
            .json["replayed"] as? Int == 2)
        let delivered = try receiver.waitFor(10, "all four") { $0.filter { $0["answered"] as? Int == 200 }.count >= 4 }
            .filter { $0["answered"] as? Int == 200 }
        #expect(delivered.map { (WebhookTests.body($0)["data"] as? [String: Any])?["client_message_id"] as? String } == ["o1", "o2", "o3", "o4"])
    }

    /// Outside --development only https:// is taken, and delivered over TLS (libcurl verifying the receiver's
    /// certificate against the CA it is told to trust; one it does not trust is a failure, retried).
    @Test func httpsDeliveriesOutsideDevelopment() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("spotter-webhook-tls-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let tls = try WebhookReceiver.TLSFiles.make(in: directory)
        let trusted = try WebhookReceiver(tls: tls), untrusted = try WebhookReceiver(tls: try {
            let other = directory + "/other"
            try FileManager.default.createDirectory(atPath: other, withIntermediateDirectories: true)
            return try WebhookReceiver.TLSFiles.make(in: other)
        }())
        defer { trusted.stop(); untrusted.stop() }
        let chat = try ChatFixture { config in
            config.development = false
            config.webhooks.transport = CurlWebhookTransport(caFile: tls.cert)
            config.webhooks.retryBaseMilliseconds = 50
            config.webhooks.retryMaxMilliseconds = 200
            config.webhooks.pollMilliseconds = 20
            config.logConsumerTiming.pollMilliseconds = 20
        }
        defer { _ = chat.server.stop() }
        let good = try WebhookTests.register(chat, trusted.url, ["message.created"])
        let bad = try WebhookTests.register(chat, untrusted.url, ["message.created"])
        try trusted.configure(secrets: [good.secret])
        try untrusted.configure(secrets: [bad.secret])
        let client = try chat.socket(chat.fixture.clientA.access)
        try WebhookTests.send(client, chat.thread, "t1", "over TLS")
        let log = try trusted.waitFor(10, "a delivery over TLS") { !$0.isEmpty }
        #expect(log[0]["verified"] as? Bool == true && log[0]["answered"] as? Int == 200)
        // The receiver whose certificate the server does not trust gets nothing through: no request reaches it.
        Thread.sleep(forTimeInterval: 0.5)
        #expect(try untrusted.log().isEmpty)
        #expect(try chat.server.accounts.pendingWebhookPayloads(endpointID: bad.id).count == 1)  // still waiting, retried
    }

    @Test func outsidersAreRefusedOnEveryEndpoint() throws {
        let chat = try WebhookTests.fixture()
        defer { _ = chat.server.stop() }
        let hook = try WebhookTests.register(chat, "http://127.0.0.1:9/x", ["message.created"])
        let calls: [(String, String, [String: Any]?)] = [
            ("POST", "/v1/admin/webhooks", ["url": "http://127.0.0.1:9/y", "events": ["message.created"]]),
            ("GET", "/v1/admin/webhooks", nil),
            ("DELETE", "/v1/admin/webhooks/\(hook.id)", nil),
            ("POST", "/v1/admin/webhooks/\(hook.id)/rotate", nil),
            ("GET", "/v1/admin/webhooks/\(hook.id)/dead-letters", nil),
            ("POST", "/v1/admin/webhooks/\(hook.id)/dead-letters/replay", [:]),
        ]
        for (method, path, body) in calls {
            for token in [chat.fixture.coachX.access, chat.fixture.clientA.access] {
                #expect(try chat.fixture.api.call(method, path, body, token: token).errorCode == "forbidden", "\(method) \(path)")
            }
            #expect(try chat.fixture.api.call(method, path, body).status == 401, "\(method) \(path) without a token")
            #expect(try chat.fixture.api.call(method, path, body, token: "spk_not-a-user-token").status == 401)
        }
        // Nothing changed: the one endpoint, with its secret.
        let list = try chat.fixture.api.call("GET", "/v1/admin/webhooks", token: chat.fixture.admin.access)
        #expect((list.json["webhooks"] as? [[String: Any]])?.map { $0["id"] as? String } == [hook.id])
    }

    @Test func badRegistrationsAreRefusedWithTypedErrors() throws {
        let chat = try WebhookTests.fixture(development: false)
        defer { _ = chat.server.stop() }
        let (api, admin) = (chat.fixture.api, chat.fixture.admin.access)
        func refused(_ body: [String: Any]) throws -> (String?, String?) {
            let answer = try api.call("POST", "/v1/admin/webhooks", body, token: admin)
            return (answer.errorCode, answer.errorField)
        }
        let ok = ["message.created"]
        #expect(try refused(["url": "http://hooks.example.com/in", "events": ok]) == ("invalid_webhook_url", "url"))
        #expect(try refused(["url": "http://127.0.0.1:9000/in", "events": ok]) == ("invalid_webhook_url", "url"))
        #expect(try refused(["url": "https://u:p@hooks.example.com/", "events": ok]) == ("invalid_webhook_url", "url"))
        #expect(try refused(["url": "https://hooks.example.com/\u{0}", "events": ok]) == ("invalid_webhook_url", "url"))
        #expect(try refused(["url": "https://hooks.example.com/" + String(repeating: "x", count: 3000), "events": ok])
                == ("invalid_webhook_url", "url"))
        #expect(try refused(["events": ok]) == ("missing_field", "url"))
        #expect(try refused(["url": "https://hooks.example.com/in"]) == ("missing_field", "events"))
        #expect(try refused(["url": "https://hooks.example.com/in", "events": []]) == ("missing_field", "events"))
        #expect(try refused(["url": "https://hooks.example.com/in", "events": ["message.new"]]) == ("invalid_webhook_events", "events"))
        #expect(try refused(["url": "https://hooks.example.com/in", "events": ["tier.changed", "tier.changed"]])
                == ("invalid_webhook_events", "events"))
        #expect(try refused(["url": "https://hooks.example.com/in", "events": ok, "secret": "mine"]).0 == "unknown_field")
        let arabic = try api.call("POST", "/v1/admin/webhooks", ["url": "ftp://x.example.com/", "events": ok], token: admin,
                                  headers: [("Accept-Language", "ar")])
        #expect(arabic.errorMessage?.contains("https://") == true && arabic.errorMessage?.contains("عنوان") == true)

        // https is fine; 50 at most.
        for n in 0..<50 {
            let made = try api.call("POST", "/v1/admin/webhooks", ["url": "https://hooks\(n).example.com/in", "events": ok], token: admin)
            #expect(made.status == 201)
        }
        #expect(try refused(["url": "https://one-more.example.com/in", "events": ok]) == ("too_many_webhooks", nil))
    }
}
