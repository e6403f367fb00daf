import Foundation
import Testing
import SpotterProtocol
@testable import SpotterCore

@Suite("Tiers: monthly quotas in the user's own month")
struct RulesTiersTests {
    static let riyadh = TimeZone(identifier: "Asia/Riyadh")!  // UTC+3, no daylight saving
    static let newYork = TimeZone(identifier: "America/New_York")!
    static let utc = TimeZone(identifier: "UTC")!
    /// 2026-11-30 22:00 UTC: still November in UTC and New York, already December 1st (01:00) in Riyadh.
    static let lateNovemberUTC: Int64 = 1_796_076_000

    @Test("the month and its reset follow the user's time zone")
    func monthInTheUsersZone() {
        let utc = QuotaMonth(at: Self.lateNovemberUTC, in: Self.utc)
        let riyadh = QuotaMonth(at: Self.lateNovemberUTC, in: Self.riyadh)
        #expect(riyadh.key == utc.key + 1)
        #expect(utc.resetsAt == 1_796_083_200)  // 2026-12-01 00:00 UTC
        #expect(riyadh.startsAt == 1_796_072_400)  // 2026-12-01 00:00 in Riyadh = 2026-11-30 21:00 UTC
        #expect(riyadh.resetsAt == 1_798_750_800)  // 2027-01-01 00:00 in Riyadh
        // New York's month ends at its own midnight, in standard time by then (UTC−5).
        #expect(QuotaMonth(at: Self.lateNovemberUTC, in: Self.newYork).resetsAt == 1_796_101_200)
        #expect(QuotaMonth(at: utc.resetsAt - 1, in: Self.utc).key == utc.key)
        #expect(QuotaMonth(at: utc.resetsAt, in: Self.utc).key == utc.key + 1)
    }

    @Test("bands: green below 80 %, yellow from 80 % to 99 %, red at 100 %; unlimited is green")
    func bands() {
        #expect(QuotaUse(used: 15, limit: 20).band == "green")
        #expect(QuotaUse(used: 16, limit: 20).band == "yellow")
        #expect(QuotaUse(used: 19, limit: 20).band == "yellow")
        #expect(QuotaUse(used: 20, limit: 20).band == "red")
        #expect(QuotaUse(used: 159, limit: 200).band == "green" && QuotaUse(used: 160, limit: 200).band == "yellow")
        #expect(QuotaUse(used: 5000, limit: nil).band == "green" && QuotaUse(used: 5000, limit: nil).left == nil)
        #expect(QuotaUse(used: 3, limit: 1).left == 0 && QuotaUse(used: 3, limit: 1).exhausted)
    }

    @Test("the 20th Freemium message fits, the 21st is refused naming the next tier; a new month starts at 0")
    func freemiumMessages() {
        var quotas = MessageQuotas()
        let november = QuotaMonth(at: Self.lateNovemberUTC, in: Self.utc)
        quotas.load("a", used: 19, month: november)
        #expect(quotas.refusal("a", tier: .freemium, month: november) == nil)
        quotas.charge("a", month: november)
        let refused = quotas.refusal("a", tier: .freemium, month: november)
        #expect(refused == APIError(.quotaExceeded, field: "text", detail: .messageQuota(tier: "freemium")))
        #expect(refused?.detail?.upgradeTo == "premium")
        #expect(quotas.refusal("a", tier: .smartPremium, month: november) == nil)
        let december = QuotaMonth(at: november.resetsAt, in: Self.utc)
        #expect(quotas.use("a", tier: .freemium, month: december).used == 0)
        #expect(quotas.refusal("a", tier: .freemium, month: december) == nil)
        quotas.charge("a", month: december)
        #expect(quotas.use("a", tier: .freemium, month: december).used == 1)
    }

    @Test("a downgrade mid-month keeps what was used: 50 Premium messages leave a Freemium client at red")
    func downgradeMidMonth() {
        var quotas = MessageQuotas()
        let month = QuotaMonth(at: Self.lateNovemberUTC, in: Self.riyadh)
        quotas.load("a", used: 50, month: month)
        #expect(quotas.refusal("a", tier: .premium, month: month) == nil)
        #expect(quotas.refusal("a", tier: .freemium, month: month)?.code == .quotaExceeded)
        let view = Tier.freemium.view(messages: quotas.use("a", tier: .freemium, month: month), callsUsed: 0, month: month,
                                      language: .english)
        #expect(view.messages == QuotaAllowance(used: 50, limit: 20, left: 0, band: "red"))
        #expect(view.warning == "0 messages remaining")
        #expect(view.calls == QuotaAllowance(used: 0, limit: 1, left: 1, band: "green") && view.callMinutes == 15)
        #expect(!view.attachments && view.resetsAt == month.resetsAt)
    }

    @Test("the warning starts at 80 %, in the user's language")
    func warnings() {
        let month = QuotaMonth(at: Self.lateNovemberUTC, in: Self.utc)
        #expect(Tier.freemium.view(messages: QuotaUse(used: 15, limit: 20), callsUsed: 0, month: month, language: .english).warning == nil)
        #expect(Tier.freemium.view(messages: QuotaUse(used: 16, limit: 20), callsUsed: 0, month: month, language: .english).warning
                == "4 messages remaining")
        #expect(Tier.freemium.view(messages: QuotaUse(used: 19, limit: 20), callsUsed: 0, month: month, language: .english).warning
                == "1 message remaining")
        #expect(Tier.freemium.view(messages: QuotaUse(used: 16, limit: 20), callsUsed: 0, month: month, language: .arabic).warning
                == "الرسائل المتبقية: 4")
        let unlimited = Tier.smartPremium.view(messages: QuotaUse(used: 900, limit: nil), callsUsed: 4, month: month, language: .english)
        #expect(unlimited.warning == nil && unlimited.messages.limit == nil && unlimited.calls.band == "red" && unlimited.attachments)
    }

    @Test("the refusal's message says what the next tier gives, in English and Arabic")
    func refusalWording() {
        let freemium = APIError(.quotaExceeded, detail: .messageQuota(tier: "freemium"))
        let english = String(decoding: freemium.jsonObject(.english), as: UTF8.self)
        #expect(english.contains("Upgrade to Premium for 200 messages a month") && english.contains(#""upgrade_to":"premium""#))
        let arabic = String(decoding: freemium.jsonObject(.arabic), as: UTF8.self)
        #expect(arabic.contains("200 رسالة"))
        let top = String(decoding: APIError(.quotaExceeded, detail: .callQuota(tier: "smart_premium")).jsonObject(.english), as: UTF8.self)
        #expect(!top.contains("upgrade_to") && top.contains("4 video calls"))
    }
}
