import Foundation
import Testing
import SpotterProtocol
@testable import SpotterCore

/// AI-generation windows (issue 30 item 4): weeks from Monday 00:00, days from midnight, in the user's zone,
/// counted on the calendar across daylight-saving changes.
@Suite("AI-generation quota windows")
struct RulesAIQuotaTests {
    static func zone(_ name: String) -> TimeZone { TimeZone(identifier: name)! }

    @Test func theSeedsTableOnSpottersTiers() {
        #expect(AIQuota.allowance(role: "client", tier: "freemium", metered: true) == .init(limit: 1, span: .week))
        #expect(AIQuota.allowance(role: "client", tier: "premium", metered: true) == .init(limit: 3, span: .week))
        #expect(AIQuota.allowance(role: "client", tier: "smart_premium", metered: true) == .init(limit: 3, span: .day))
        // An unknown stored name is Freemium; coaches, admins and a server without tiers are unlimited.
        #expect(AIQuota.allowance(role: "client", tier: "gold", metered: true) == .init(limit: 1, span: .week))
        #expect(AIQuota.allowance(role: "coach", tier: "freemium", metered: true).limit == nil)
        #expect(AIQuota.allowance(role: "client", tier: "freemium", metered: false).limit == nil)
        #expect(!Tier.freemium.inbody && Tier.premium.inbody && Tier.smartPremium.inbody)
    }

    @Test func aWeekRunsMondayToMondayAcrossSpringForward() {
        let newYork = Self.zone("America/New_York")
        let monday: Int64 = 1_772_427_600, nextMonday: Int64 = 1_773_028_800  // 2026-03-02 00:00 EST, 03-09 00:00 EDT
        for now in [monday, monday + 1, 1_772_643_600, nextMonday - 1] {
            let window = AIQuota.Window(at: now, span: .week, in: newYork)
            #expect(window.startsAt == monday && window.resetsAt == nextMonday, "\(now)")
        }
        #expect(nextMonday - monday == 167 * 3600)
        #expect(AIQuota.Window(at: nextMonday, span: .week, in: newYork).startsAt == nextMonday)
        #expect(AIQuota.Window(at: monday - 1, span: .week, in: newYork).resetsAt == monday)
        // Fall back: the week of Monday 2026-10-26 EDT ends Monday 11-02 EST, 169 hours later.
        let fall = AIQuota.Window(at: 1793203200, span: .week, in: newYork)
        #expect(fall.resetsAt - fall.startsAt == 169 * 3600)
    }

    @Test func aDayRunsMidnightToMidnightEvenWhereMidnightIsSkipped() {
        // Berlin springs forward on 2026-03-29: a 23-hour day.
        let berlin = AIQuota.Window(at: 1_774_778_400, span: .day, in: Self.zone("Europe/Berlin"))
        #expect(berlin.startsAt == 1_774_738_800 && berlin.resetsAt == 1_774_821_600)
        // Santiago skips 2026-09-06 00:00 (clocks go to 01:00): the day starts at its first instant.
        let santiago = Self.zone("America/Santiago")
        let skipped = AIQuota.Window(at: 1_788_706_800, span: .day, in: santiago)
        #expect(skipped.startsAt == 1_788_667_200 && skipped.resetsAt == 1_788_750_000)
        #expect(AIQuota.Window(at: 1_788_667_199, span: .day, in: santiago).resetsAt == 1_788_667_200)
        // The same instant is another day in another zone: 2026-03-03 22:30 UTC is Wednesday in Riyadh.
        let utc = AIQuota.Window(at: 1_772_577_000, span: .day, in: Self.zone("UTC"))
        let riyadh = AIQuota.Window(at: 1_772_577_000, span: .day, in: Self.zone("Asia/Riyadh"))
        #expect(utc.startsAt == 1_772_496_000 && riyadh.startsAt == 1_772_571_600)
        // Sunday belongs to the week that started the Monday before (ISO weeks).
        let sunday = AIQuota.Window(at: 1_788_706_800, span: .week, in: santiago)
        #expect(sunday.resetsAt == 1_788_750_000)
    }

    @Test func theRefusalNamesTheResetAndTheNextTier() {
        let error = APIError(.quotaExceeded, field: "ai_generation", retryAfterSeconds: 60,
                             detail: .aiGenerationQuota(tier: "premium", resetsAt: 1_773_028_800))
        let english = String(decoding: error.jsonBody(.english), as: UTF8.self)
        #expect(english.contains(#""resets_at":1773028800"#) && english.contains(#""upgrade_to":"smart_premium""#))
        #expect(english.contains("3 AI generations for this week"))
        let top = String(decoding: APIError(.quotaExceeded, detail: .aiGenerationQuota(tier: "smart_premium", resetsAt: 1)).jsonBody(.arabic), as: UTF8.self)
        #expect(!top.contains("upgrade_to") && top.contains("منتصف الليل"))
    }
}
