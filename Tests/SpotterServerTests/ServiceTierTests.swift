import Foundation
import Testing
import SpotterCore
import SpotterServer
import TestSupport

/// Tier changes from billing over real sockets (issue 29, item 5): a key with the `tier` scope sets a client's tier
/// through the admin's path — the `tier` event reaches the client's socket live and a message refused for quota
/// goes through — idempotently by `Idempotency-Key`.
@Suite("Tier changes from billing", .serialized)
struct ServiceTierTests {
    static func key(_ chat: ChatFixture, scopes: [String]?) throws -> String {
        var body: [String: Any] = ["name": "Billing"]
        if let scopes { body["scopes"] = scopes }
        let made = try chat.fixture.api.call("POST", "/v1/admin/api-keys", body, token: chat.fixture.admin.access)
        #expect(made.status == 201, "\(made.text)")
        #expect(made.json["scopes"] as? [String] == scopes ?? [])
        return try #require(made.string("key"))
    }

    static func put(_ chat: ChatFixture, _ userID: String, _ tier: String, key: String?, idempotency: String?) throws -> APIResponse {
        var headers: [(String, String)] = []
        if let idempotency { headers.append(("Idempotency-Key", idempotency)) }
        return try chat.fixture.api.call("PUT", "/v1/services/users/\(userID)/tier", ["tier": tier], token: key, headers: headers)
    }

    @Test func aPaymentLiftsTheQuotaLiveAndOnce() throws {
        let chat = try ChatFixture { $0.tiers = true }
        defer { _ = chat.server.stop() }
        let billing = try Self.key(chat, scopes: ["tier"])
        let client = try chat.socket(chat.fixture.clientA.access)
        _ = try TiersTests.quota(client)
        for n in 1...20 { _ = try TiersTests.send(client, chat.thread, "m\(n)"); _ = try TiersTests.quota(client) }
        #expect(errorCode(try TiersTests.send(client, chat.thread, "m21")) == "quota_exceeded")

        let paid = try Self.put(chat, chat.fixture.clientA.id, "premium", key: billing, idempotency: "pay_1001")
        #expect(paid.status == 200 && paid.string("tier") == "premium" && paid.string("user_id") == chat.fixture.clientA.id, "\(paid.text)")
        // The same logged change an admin's makes: the `tier` event with a cursor, then the new quota, live.
        let changed = try client.next("tier")
        #expect(changed["tier"] as? String == "premium" && changed["cursor"] is Int)
        let quota = try TiersTests.quota(client)
        #expect(TiersTests.messages(quota)["limit"] as? Int == 200)
        #expect(try TiersTests.send(client, chat.thread, "m21")["ok"] as? Bool == true)

        // The same request again: the same answer, nothing logged.
        let again = try Self.put(chat, chat.fixture.clientA.id, "premium", key: billing, idempotency: "pay_1001")
        #expect(again.status == 200 && again.text == paid.text && again.headers["Idempotent-Replayed"] == "true")
        // The same key with another request: refused.
        let other = try Self.put(chat, chat.fixture.clientA.id, "smart_premium", key: billing, idempotency: "pay_1001")
        #expect(other.status == 422 && other.errorCode == "idempotency_key_reused" && other.errorField == "Idempotency-Key")
        #expect(client.drain(for: 0.4).filter { $0["type"] as? String == "tier" }.isEmpty)
        let replay = try chat.socket(chat.fixture.clientA.access)
        _ = try replay.result("resume", ["cursor": 0])
        #expect(replay.drain(for: 0.3).filter { $0["type"] as? String == "tier" }.map { $0["tier"] as? String } == ["premium"])

        // A new key: a new change.
        let upgraded = try Self.put(chat, chat.fixture.clientA.id, "smart_premium", key: billing, idempotency: "pay_1002")
        #expect(upgraded.status == 200 && upgraded.string("tier") == "smart_premium")
        #expect(try client.next("tier")["tier"] as? String == "smart_premium")
    }

    @Test func keysWithoutTheScopeAndBadRequestsAreRefused() throws {
        let chat = try ChatFixture { $0.tiers = true }
        defer { _ = chat.server.stop() }
        let plain = try Self.key(chat, scopes: nil)
        let billing = try Self.key(chat, scopes: ["tier"])
        let id = chat.fixture.clientA.id
        let scopeless = try Self.put(chat, id, "premium", key: plain, idempotency: "k1")
        #expect(scopeless.status == 403 && scopeless.errorCode == "api_key_scope_missing")
        #expect(try Self.put(chat, id, "premium", key: nil, idempotency: "k1").status == 401)
        #expect(try Self.put(chat, id, "premium", key: "spk_unknown", idempotency: "k1").errorCode == "unauthorized")
        #expect(try Self.put(chat, id, "premium", key: chat.fixture.admin.access, idempotency: "k1").errorCode == "unauthorized")
        #expect(try Self.put(chat, id, "premium", key: billing, idempotency: nil).errorField == "Idempotency-Key")
        #expect(try Self.put(chat, id, "premium", key: billing, idempotency: "has space").errorCode == "bad_request")
        #expect(try Self.put(chat, id, "premium", key: billing, idempotency: String(repeating: "k", count: 256)).errorCode == "bad_request")
        #expect(try Self.put(chat, id, "gold", key: billing, idempotency: "k2").errorCode == "bad_request")
        #expect(try Self.put(chat, "no-such-user", "premium", key: billing, idempotency: "k3").errorCode == "not_found")
        #expect(try Self.put(chat, chat.fixture.coachX.id, "premium", key: billing, idempotency: "k4").errorCode == "conflict")
        // A refused request keeps no key: the same key works for the right request.
        let fixed = try Self.put(chat, id, "premium", key: billing, idempotency: "k3")
        #expect(fixed.status == 200 && fixed.string("tier") == "premium")
        // Unknown and repeated scopes are refused when the key is made.
        for scopes in [["billing"], ["tier", "tier"]] {
            let made = try chat.fixture.api.call("POST", "/v1/admin/api-keys", ["name": "X", "scopes": scopes], token: chat.fixture.admin.access)
            #expect(made.errorCode == "bad_request" && made.errorField == "scopes")
        }
        // A revoked key is refused.
        let keys = try chat.fixture.api.call("GET", "/v1/admin/api-keys", token: chat.fixture.admin.access).json["keys"] as? [[String: Any]] ?? []
        let billingID = try #require(keys.first { ($0["scopes"] as? [String]) == ["tier"] }?["id"] as? String)
        #expect(try chat.fixture.api.call("DELETE", "/v1/admin/api-keys/\(billingID)", token: chat.fixture.admin.access).status == 204)
        #expect(try Self.put(chat, id, "freemium", key: billing, idempotency: "k5").status == 401)
    }

    /// A claim whose process died before it answered holds the key for 30 s, then a retry takes it over.
    @Test func anAbandonedClaimIsTakenOverByARetry() throws {
        let chat = try ChatFixture()
        defer { _ = chat.server.stop() }
        let accounts = chat.server.accounts
        let now: Int64 = 1_800_000_000
        #expect(try accounts.claimServiceRequest(keyID: "k", idempotencyKey: "pay", requestHash: "h", now: now) == .claimed)
        #expect(try accounts.claimServiceRequest(keyID: "k", idempotencyKey: "pay", requestHash: "h", now: now + 29) == .inProgress)
        #expect(try accounts.claimServiceRequest(keyID: "k", idempotencyKey: "pay", requestHash: "other", now: now + 29) == .reused)
        #expect(try accounts.claimServiceRequest(keyID: "k", idempotencyKey: "pay", requestHash: "h", now: now + 30) == .claimed)
        #expect(try accounts.claimServiceRequest(keyID: "k", idempotencyKey: "pay", requestHash: "h", now: now + 31) == .inProgress)
        try accounts.finishServiceRequest(keyID: "k", idempotencyKey: "pay", response: "{}")
        #expect(try accounts.claimServiceRequest(keyID: "k", idempotencyKey: "pay", requestHash: "h", now: now + 999) == .done("{}"))
        // Keys are per API key.
        #expect(try accounts.claimServiceRequest(keyID: "k2", idempotencyKey: "pay", requestHash: "other", now: now) == .claimed)
    }
}
