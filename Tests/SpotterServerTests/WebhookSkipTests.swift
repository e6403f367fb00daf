import Foundation
import Synchronization
import Testing
import SpotterCore
import SpotterPorts
@testable import SpotterServer
import TestSupport

/// The webhook consumer builds events only for records some endpoint is subscribed to (issue 33): nothing asked of
/// the loop and no JSON built for the rest, while every endpoint still gets what it got before — one registered
/// while a batch is being built included — and edits, deletes and erasures still blank queued text. The consumer
/// runs here by hand over the server's own accounts store (either engine), the server itself having no webhooks.
@Suite("Webhook consumer skips what no endpoint wants", .serialized)
struct WebhookSkipTests {
    /// How often the consumer asked the loop for threads, and what to do when it does.
    final class Loop: Sendable {
        let asked = Mutex(0)
        let onAsk = Mutex<(@Sendable () throws -> Void)?>(nil)
    }

    func consumer(_ accounts: AccountStore, _ loop: Loop) -> WebhookConsumer {
        WebhookConsumer(accounts: accounts, settings: WebhookSettings(), metrics: ServerMetrics(), threads: { numbers in
            loop.asked.withLock { $0 += 1 }
            try loop.onAsk.withLock { $0 }?()
            return Dictionary(uniqueKeysWithValues: numbers.map { ($0, WebhookThread(id: "thread-\($0)", coachID: "coach-\($0)",
                                                                                     clientID: "client-\($0)")) })
        }, enqueued: {})
    }

    func message(_ pos: Int64, _ text: String) -> LogDelivery {
        LogDelivery(record: ChatRecord(pos: pos, threadNo: 1, side: .client, seq: pos, at: 100,
                                       .message(MessageRecord(clientMessageID: "m\(pos)", body: text))))
    }

    func tier(_ pos: Int64) -> LogDelivery {
        LogDelivery(record: ChatRecord(pos: pos, threadNo: 1, side: .coach, seq: pos, at: 100, .tier(TierRecord(tier: "pro"))))
    }

    @discardableResult
    func register(_ accounts: AccountStore, _ id: String, _ events: [WebhookEventType]) throws -> WebhookEndpointRecord {
        try #require(try accounts.createWebhook(id: id, url: "https://example.com/\(id)", events: events, secret: "s-\(id)",
                                                createdBy: "admin", now: 1, limit: 50))
    }

    @Test func withNoEndpointNothingIsBuiltAndALaterEndpointGetsWhatFollows() throws {
        let chat = try ChatFixture()
        defer { _ = chat.server.stop() }
        let accounts = chat.server.accounts, loop = Loop()
        let webhooks = consumer(accounts, loop)
        try webhooks.deliver([message(1, "one"), tier(2), message(3, "three")])
        #expect(loop.asked.withLock { $0 } == 0)
        #expect(try accounts.webhooksHandledThrough("webhooks") == 3)
        try register(accounts, "later", [.messageCreated])
        try webhooks.deliver([message(4, "four"), tier(5)])
        #expect(loop.asked.withLock { $0 } == 1)
        let payloads = try accounts.pendingWebhookPayloads(endpointID: "later")
        #expect(payloads.count == 1 && payloads[0].contains("evt_4_message.created") && payloads[0].contains("four"))
        #expect(try accounts.webhooksHandledThrough("webhooks") == 5)
    }

    @Test func onlyRecordsOfSubscribedTypesAskTheLoop() throws {
        let chat = try ChatFixture()
        defer { _ = chat.server.stop() }
        let accounts = chat.server.accounts, loop = Loop()
        try register(accounts, "tiers", [.tierChanged])
        let webhooks = consumer(accounts, loop)
        try webhooks.deliver([message(1, "one"), message(2, "two")])
        #expect(loop.asked.withLock { $0 } == 0)
        try webhooks.deliver([message(3, "three"), tier(4)])
        #expect(loop.asked.withLock { $0 } == 1)
        let payloads = try accounts.pendingWebhookPayloads(endpointID: "tiers")
        #expect(payloads.count == 1 && payloads[0].contains("evt_4_tier.changed"))
    }

    /// An endpoint registered after the consumer looked at the subscriptions and before it queued the batch gets
    /// the batch's events, as it did when every event was built: the enqueue refuses, the batch is built again.
    @Test func anEndpointRegisteredWhileABatchIsBuiltGetsItsEvents() throws {
        let chat = try ChatFixture()
        defer { _ = chat.server.stop() }
        let accounts = chat.server.accounts, loop = Loop()
        loop.onAsk.withLock { ask in
            ask = { [accounts] in
                if try accounts.webhooks().isEmpty { _ = try accounts.createWebhook(
                    id: "racer", url: "https://example.com/r", events: [.messageCreated], secret: "s", createdBy: "admin", now: 1, limit: 50) }
            }
        }
        let webhooks = consumer(accounts, loop)
        // An edit is looked at whatever the subscriptions (it blanks queued text): it asks the loop, which is when the
        // endpoint arrives.
        let edit = LogDelivery(record: ChatRecord(pos: 1, threadNo: 1, side: .client, seq: 1, at: 100,
                                                  .change(MessageChangeRecord(target: 9, change: .edit(body: "e", attached: false), wasLast: false))))
        try webhooks.deliver([edit, message(2, "two")])
        let payloads = try accounts.pendingWebhookPayloads(endpointID: "racer")
        #expect(payloads.count == 1 && payloads.first?.contains("evt_2_message.created") == true)
        #expect(try accounts.webhooksHandledThrough("webhooks") == 2)
    }

    /// A delete or an erasure blanks the queued text of an endpoint subscribed to neither `message.deleted` nor
    /// `user.erased`.
    @Test func deletesAndErasuresBlankQueuedTextWhateverTheSubscriptions() throws {
        let chat = try ChatFixture()
        defer { _ = chat.server.stop() }
        let accounts = chat.server.accounts, loop = Loop()
        try register(accounts, "created", [.messageCreated])
        let webhooks = consumer(accounts, loop)
        try webhooks.deliver([message(1, "secret-one"), message(2, "secret-two")])
        #expect(try accounts.pendingWebhookPayloads(endpointID: "created").filter { $0.contains("secret-") }.count == 2)
        let delete = LogDelivery(record: ChatRecord(pos: 3, threadNo: 1, side: .client, seq: 2, at: 100,
                                                    .change(MessageChangeRecord(target: 1, change: .delete(by: .sender), wasLast: false))))
        try webhooks.deliver([delete])
        var payloads = try accounts.pendingWebhookPayloads(endpointID: "created")
        #expect(payloads.count == 2 && !payloads[0].contains("secret-one") && payloads[1].contains("secret-two"))
        let erasure = LogDelivery(record: ChatRecord(pos: 4, threadNo: 0, side: .client, seq: 0, at: 100,
                                                     .erasure(ErasureRecord(userID: "client-1"))))
        try webhooks.deliver([erasure])
        payloads = try accounts.pendingWebhookPayloads(endpointID: "created")
        #expect(payloads.count == 2 && !payloads.contains { $0.contains("secret-") })
    }
}
