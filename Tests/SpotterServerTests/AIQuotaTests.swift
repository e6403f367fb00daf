import Foundation
import Testing
import SpotterCore
import SpotterServer
import SpotterPorts
import TestSupport

/// AI-generation quotas over real HTTP and sockets (issue 30 item 4, seed 001 "AI Generation Limits"): the AI
/// service consumes with its key; Freemium gets 1 a week, Premium 3 a week, Smart Premium 3 a day, windows in the
/// user's zone (weeks from Monday 00:00), a retry under the same `Idempotency-Key` consumes nothing, a burst takes
/// exactly what is left, and the client's `quota` shows what is left, live.
@Suite("AI-generation quotas", .serialized)
struct AIQuotaTests {
    /// Wednesday 2026-03-04 12:00 in New York (EST). Its ISO week runs from Monday 2026-03-02 00:00 EST to Monday
    /// 2026-03-09 00:00 EDT: 167 hours, across the spring-forward change of Sunday 03-08.
    static let wednesdayNewYork: Int64 = 1_772_643_600
    static let mondayNewYork: Int64 = 1_772_427_600
    static let nextMondayNewYork: Int64 = 1_773_028_800

    struct Setup {
        let chat: ChatFixture
        let clock: TestClock
        let key: String
        var api: APIClient { chat.fixture.api }
        var admin: String { chat.fixture.admin.access }
    }

    static func setup(tiers: Bool = true, at now: Int64 = wednesdayNewYork) throws -> Setup {
        let clock = TestClock(now: now)
        let chat = try ChatFixture {
            $0.tiers = tiers
            $0.clock = clock
        }
        let key = try ServiceTierTests.key(chat, scopes: ["quota"])
        return Setup(chat: chat, clock: clock, key: key)
    }

    /// A client signed up in `zone` (not linked to a coach: the quota is the account's).
    static func client(_ setup: Setup, _ email: String, zone: String, tier: String = "freemium") throws -> (access: String, id: String) {
        let made = try setup.api.call("POST", "/v1/auth/signup", [
            "role": "client", "full_name": "AI Client", "email": email, "password": "secret1",
            "password_confirmation": "secret1", "time_zone": zone,
        ])
        #expect(made.status == 201, "\(made.text)")
        let id = try #require(made.object("user")?["id"] as? String)
        if tier != "freemium" {
            #expect(try setup.api.call("PUT", "/v1/admin/users/\(id)/tier", ["tier": tier], token: setup.admin).status == 200)
        }
        return (try #require(made.string("access_token")), id)
    }

    static func consume(_ setup: Setup, _ userID: String, key: String? = nil, idempotency: String?) throws -> APIResponse {
        try consume(setup.api, userID, key: key ?? setup.key, idempotency: idempotency)
    }

    static func consume(_ api: APIClient, _ userID: String, key: String?, idempotency: String?) throws -> APIResponse {
        var headers: [(String, String)] = []
        if let idempotency { headers.append(("Idempotency-Key", idempotency)) }
        return try api.call("POST", "/v1/services/users/\(userID)/quotas/ai_generation/consume", token: key, headers: headers)
    }

    static func allowance(_ response: APIResponse) -> [String: Any] { response.object("ai_generations") ?? [:] }

    @Test func freemiumGetsOneAWeekFromMondayInTheirZoneAcrossDST() throws {
        let setup = try Self.setup()
        defer { setup.chat.server.stop() }
        let user = try Self.client(setup, "ny@ai.test", zone: "America/New_York")

        let first = try Self.consume(setup, user.id, idempotency: "gen-1")
        #expect(first.status == 200, "\(first.text)")
        #expect(first.string("user_id") == user.id && first.string("tier") == "freemium")
        let used = Self.allowance(first)
        #expect(used["used"] as? Int == 1 && used["limit"] as? Int == 1 && used["left"] as? Int == 0)
        #expect(used["window"] as? String == "week" && used["resets_at"] as? Int == Int(Self.nextMondayNewYork))

        // A second generation this week: refused with the reset, in the user's terms, in Arabic too.
        let refused = try setup.api.call("POST", "/v1/services/users/\(user.id)/quotas/ai_generation/consume", token: setup.key,
                                         headers: [("Idempotency-Key", "gen-2"), ("Accept-Language", "ar")])
        #expect(refused.status == 429 && refused.errorCode == "quota_exceeded" && refused.errorField == "ai_generation")
        let error = try #require(refused.object("error"))
        #expect(error["resets_at"] as? Int == Int(Self.nextMondayNewYork))
        #expect(error["retry_after"] as? Int == Int(Self.nextMondayNewYork - Self.wednesdayNewYork))
        #expect(refused.headers["Retry-After"] == String(Self.nextMondayNewYork - Self.wednesdayNewYork))
        #expect(error["upgrade_to"] as? String == "premium")
        #expect((refused.errorMessage ?? "").unicodeScalars.contains { (0x0621...0x064A).contains($0.value) })
        let english = try Self.consume(setup, user.id, idempotency: "gen-2")
        #expect(english.errorMessage?.contains("1 a week") == false && english.errorMessage?.contains("for this week") == true)

        // The first request again: its answer, replayed, nothing consumed.
        let again = try Self.consume(setup, user.id, idempotency: "gen-1")
        #expect(again.status == 200 && again.text == first.text && again.headers["Idempotent-Replayed"] == "true")

        // One second before the next Monday (local midnight, after the DST change): still this week.
        setup.clock.set(Self.nextMondayNewYork - 1)
        #expect(try Self.consume(setup, user.id, idempotency: "gen-3").errorCode == "quota_exceeded")
        // Monday 00:00 EDT: a new week. The key refused before is free (a refusal keeps no key).
        setup.clock.set(Self.nextMondayNewYork)
        let next = try Self.consume(setup, user.id, idempotency: "gen-2")
        #expect(next.status == 200 && Self.allowance(next)["used"] as? Int == 1, "\(next.text)")
        #expect(Self.allowance(next)["resets_at"] as? Int == Int(Self.nextMondayNewYork + 7 * 86_400))
        // A week starts on Monday 00:00 local: Sunday 23:59:59 of the week before is in the previous week.
        setup.clock.set(Self.mondayNewYork - 1)
        let before = try Self.consume(setup, user.id, idempotency: "gen-4")
        #expect(Self.allowance(before)["resets_at"] as? Int == Int(Self.mondayNewYork))
    }

    @Test func premiumGetsThreeAWeekAndSmartPremiumThreeADayAtLocalMidnight() throws {
        // Berlin springs forward on Sunday 2026-03-29: that day is 23 hours long.
        let berlinSunday: Int64 = 1_774_738_800, berlinMonday: Int64 = 1_774_821_600
        let setup = try Self.setup(at: berlinSunday + 12 * 3600)
        defer { setup.chat.server.stop() }
        let premium = try Self.client(setup, "p@ai.test", zone: "Europe/Berlin", tier: "premium")
        let smart = try Self.client(setup, "s@ai.test", zone: "Europe/Berlin", tier: "smart_premium")
        for n in 1...3 {
            let ok = try Self.consume(setup, premium.id, idempotency: "p\(n)")
            #expect(Self.allowance(ok)["used"] as? Int == n && Self.allowance(ok)["limit"] as? Int == 3)
            #expect(Self.allowance(ok)["window"] as? String == "week" && Self.allowance(ok)["resets_at"] as? Int == Int(berlinMonday))
            let day = try Self.consume(setup, smart.id, idempotency: "s\(n)")
            #expect(Self.allowance(day)["used"] as? Int == n && Self.allowance(day)["left"] as? Int == 3 - n)
            #expect(Self.allowance(day)["window"] as? String == "day" && Self.allowance(day)["resets_at"] as? Int == Int(berlinMonday))
        }
        let premiumOut = try Self.consume(setup, premium.id, idempotency: "p4")
        #expect(premiumOut.errorCode == "quota_exceeded" && premiumOut.object("error")?["upgrade_to"] as? String == "smart_premium")
        let smartOut = try Self.consume(setup, smart.id, idempotency: "s4")
        #expect(smartOut.errorCode == "quota_exceeded" && smartOut.object("error")?["upgrade_to"] == nil)
        #expect(smartOut.errorMessage?.contains("midnight") == true)
        // Monday 00:00 in Berlin, 23 hours after Sunday's midnight: both start again.
        setup.clock.set(berlinMonday)
        #expect(Self.allowance(try Self.consume(setup, premium.id, idempotency: "p5"))["used"] as? Int == 1)
        let monday = try Self.consume(setup, smart.id, idempotency: "s5")
        #expect(Self.allowance(monday)["used"] as? Int == 1 && Self.allowance(monday)["resets_at"] as? Int == Int(berlinMonday + 86_400))
        // A downgrade takes the new tier's window: Freemium's week already has a generation (Monday's).
        // (The admin signs in again: the fixture's token expired while the clock moved on 12 hours.)
        let admin = try #require(try setup.api.call("POST", "/v1/auth/signin", ["email": "admin@spotter.test", "password": "adminpass"])
            .string("access_token"))
        #expect(try setup.api.call("PUT", "/v1/admin/users/\(smart.id)/tier", ["tier": "freemium"], token: admin).status == 200)
        #expect(try Self.consume(setup, smart.id, idempotency: "s6").errorCode == "quota_exceeded")
    }

    /// N left, N + k at once: exactly N accepted, the rest refused, the count N (the message quota's guarantee).
    @Test func aBurstTakesExactlyWhatIsLeft() throws {
        let setup = try Self.setup()
        defer { setup.chat.server.stop() }
        let user = try Self.client(setup, "burst@ai.test", zone: "Asia/Riyadh", tier: "premium")
        #expect(try Self.consume(setup, user.id, idempotency: "before").status == 200)  // 2 left
        let api = setup.api, key = setup.key
        let statuses = Statuses()
        DispatchQueue.concurrentPerform(iterations: 12) { n in
            let answer = try? Self.consume(api, user.id, key: key, idempotency: "burst-\(n)")
            statuses.add(answer?.status ?? 0, answer?.errorCode)
        }
        let all = statuses.all
        #expect(all.filter { $0.0 == 200 }.count == 2, "\(all)")
        #expect(all.filter { $0.0 == 429 && $0.1 == "quota_exceeded" }.count == 10, "\(all)")
        let after = try Self.consume(setup, user.id, idempotency: "after")
        #expect(after.errorCode == "quota_exceeded")

        // One key sent many times at once: one generation, one answer.
        let other = try Self.client(setup, "same@ai.test", zone: "UTC", tier: "smart_premium")
        let texts = Statuses()
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            let answer = try? Self.consume(api, other.id, key: key, idempotency: "once")
            texts.add(answer?.status ?? 0, answer?.text)
        }
        #expect(texts.all.allSatisfy { $0.0 == 200 } && Set(texts.all.map(\.1)).count == 1, "\(texts.all)")
        let next = try Self.consume(setup, other.id, idempotency: "twice")
        #expect(Self.allowance(next)["used"] as? Int == 2)
    }

    @Test func theClientSeesWhatIsLeftInTheirQuotaLive() throws {
        let setup = try Self.setup()
        defer { setup.chat.server.stop() }
        let client = setup.chat.fixture.clientA
        let socket = try setup.chat.socket(client.access)
        let first = try TiersTests.quota(socket)
        let ai = try #require(first["ai_generations"] as? [String: Any])
        #expect(ai["used"] as? Int == 0 && ai["limit"] as? Int == 1 && ai["left"] as? Int == 1 && ai["window"] as? String == "week")
        #expect(try Self.consume(setup, client.id, idempotency: "live").status == 200)
        let pushed = try #require(try TiersTests.quota(socket)["ai_generations"] as? [String: Any])
        #expect(pushed["used"] as? Int == 1 && pushed["left"] as? Int == 0)
        // A replay pushes nothing new and counts nothing.
        #expect(try Self.consume(setup, client.id, idempotency: "live").status == 200)
        let again = try setup.chat.socket(client.access)
        #expect((try TiersTests.quota(again)["ai_generations"] as? [String: Any])?["used"] as? Int == 1)
        // The admin's usage shows it too.
        let usage = try setup.api.call("GET", "/v1/admin/users/\(client.id)/usage", token: setup.admin)
        #expect((usage.object("quota")?["ai_generations"] as? [String: Any])?["used"] as? Int == 1)
        // The counter is the user's: in their export, gone with their erasure.
        let export = try ExportDownload.fetch(port: setup.chat.server.port, token: client.access)
        let counter = try #require(export.json("profile.json")["ai_generations"] as? [String: Any])
        #expect(counter["used"] as? Int == 1 && counter["window_start"] as? Int == 1_772_409_600)  // Monday 2026-03-02 UTC
        #expect(try setup.chat.server.accounts.aiQuotaCounter(userID: client.id) != nil)
        let clientC = setup.chat.fixture.clientC
        #expect(try Self.consume(setup, clientC.id, idempotency: "c-before-erasure").status == 200)
        #expect(try setup.api.call("DELETE", "/v1/admin/users/\(clientC.id)", token: setup.admin).status < 300)
        #expect(try setup.chat.server.accounts.aiQuotaCounter(userID: clientC.id) == nil)
    }

    @Test func outsidersBadKeysAndForeignIdsAreRefused() throws {
        let setup = try Self.setup()
        defer { setup.chat.server.stop() }
        let id = setup.chat.fixture.clientA.id
        let tierKey = try ServiceTierTests.key(setup.chat, scopes: ["tier"])
        #expect(try Self.consume(setup, id, key: tierKey, idempotency: "k").errorCode == "api_key_scope_missing")
        #expect(try Self.consume(setup.api, id, key: nil, idempotency: "k").status == 401)
        #expect(try Self.consume(setup, id, key: "spk_unknown", idempotency: "k").errorCode == "unauthorized")
        #expect(try Self.consume(setup, id, key: setup.chat.fixture.clientA.access, idempotency: "k").errorCode == "unauthorized")
        #expect(try Self.consume(setup, id, idempotency: nil).errorField == "Idempotency-Key")
        #expect(try Self.consume(setup, id, idempotency: "tab\there").errorCode == "bad_request")
        #expect(try Self.consume(setup, id, idempotency: String(repeating: "k", count: 256)).errorCode == "bad_request")
        #expect(try Self.consume(setup, "no-such-user", idempotency: "k1").errorCode == "not_found")
        // A key used for one user is not another user's.
        #expect(try Self.consume(setup, id, idempotency: "k2").status == 200)
        #expect(try Self.consume(setup, setup.chat.fixture.clientB.id, idempotency: "k2").errorCode == "idempotency_key_reused")
        // Coaches and admins have no tier: counted per day, never refused.
        for n in 1...4 {
            let coach = try Self.consume(setup, setup.chat.fixture.coachX.id, idempotency: "c\(n)")
            #expect(coach.status == 200 && Self.allowance(coach)["limit"] == nil && Self.allowance(coach)["used"] as? Int == n)
            #expect(coach.string("tier") == nil)
        }
        // Other methods on the path are not served.
        #expect(try setup.api.call("GET", "/v1/services/users/\(id)/quotas/ai_generation/consume", token: setup.key).status == 405)
        // An erased user has no quota left to consume.
        #expect(try setup.api.call("DELETE", "/v1/admin/users/\(setup.chat.fixture.clientC.id)", token: setup.admin).status < 300)
        #expect(try Self.consume(setup, setup.chat.fixture.clientC.id, idempotency: "gone").errorCode == "not_found")
    }

    @Test func withoutTiersNobodyIsLimited() throws {
        let setup = try Self.setup(tiers: false)
        defer { setup.chat.server.stop() }
        let id = setup.chat.fixture.clientA.id
        for n in 1...5 {
            let ok = try Self.consume(setup, id, idempotency: "free-\(n)")
            #expect(ok.status == 200 && Self.allowance(ok)["used"] as? Int == n && Self.allowance(ok)["limit"] == nil)
        }
    }
}

/// Answers collected from several threads.
final class Statuses: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [(Int, String?)] = []
    func add(_ status: Int, _ detail: String?) { lock.withLock { values.append((status, detail)) } }
    var all: [(Int, String?)] { lock.withLock { values } }
}
