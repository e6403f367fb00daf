import Foundation
import Testing
@testable import SpotterCore
import SpotterProtocol

/// The `account` record (issue 31: sessions revoked, a profile changed, followed by every process of a cluster): its
/// stored columns, and what the core decides and applies for it. Nothing of it reaches the wire.
///
/// Mutation checks (each made by hand, the suite run, reverted): `applyAccountChange` without `setName` →
/// aFollowedProfileRenamesThePeerInTheThreadEvents fails; without `forgetCounts` → aFollowedTierForgetsTheCount
/// fails; the columns' `b` not written for a revocation → everyChangeRoundTripsThroughItsColumns fails.
@Suite("Account change records")
struct AccountChangeRecordTests {
    typealias H = CoreHarness

    static let changes: [AccountChangeRecord] = [
        AccountChangeRecord(userID: "u1", .sessionsRevoked(familyIDs: ["f1", "f2"], revokedAt: H.start)),
        AccountChangeRecord(userID: "u1", .sessionsRevoked(familyIDs: [], revokedAt: 0)),
        AccountChangeRecord(userID: "u1", .sessionsRevoked(familyIDs: ["f"], revokedAt: .max)),
        AccountChangeRecord(userID: "u1", .sessionsRevoked(familyIDs: ["f"], revokedAt: .min)),
        AccountChangeRecord(userID: "", .sessionsRevoked(familyIDs: ["\u{0}\"\\\n", "ü🙂", String(repeating: "x", count: 10_000)],
                                                        revokedAt: -1)),
        AccountChangeRecord(userID: "u2", .profile(AccountProfile(fullName: "Amal \u{1}\"\\\t", language: "ar", timeZone: "Asia/Riyadh",
                                                                  tier: "premium"))),
        AccountChangeRecord(userID: "u2", .profile(AccountProfile(fullName: "", language: nil, timeZone: nil, tier: nil))),
        AccountChangeRecord(userID: "u2", .profile(AccountProfile())),
        AccountChangeRecord(userID: "عمر", .profile(AccountProfile(fullName: "عمر الفاروق"))),
    ]

    @Test func everyChangeRoundTripsThroughItsColumns() {
        for change in Self.changes {
            let content = ChatRecord.Content.account(change)
            let columns = content.columns
            #expect(columns.kind == 9 && columns.ref == change.userID)
            #expect(ChatRecord.Content(columns: columns) == content, "\(change)")
            let row = ChatRecord(pos: 7, threadNo: 0, side: 0, seq: 0, at: H.start, columns: columns)
            #expect(row.content == content && row.kind == .account)
        }
        let revoked = ChatRecord.Content.account(Self.changes[0]).columns
        #expect(revoked.a == 1 && revoked.b == H.start && revoked.body == #"["f1","f2"]"#)
        let profile = ChatRecord.Content.account(Self.changes[5]).columns
        #expect(profile.a == 2 && profile.b == 0)
    }

    @Test func aForgottenOrUnreadableBodyReadsAsNothingToApply() {
        for body in [nil, "", "null", "{", "[1,2]", "\u{0}"] as [String?] {
            let revoked = ChatRecord.Content(columns: ChatRecord.Columns(kind: 9, a: 1, b: 42, ref: "u", body: body))
            #expect(revoked == .account(AccountChangeRecord(userID: "u", .sessionsRevoked(familyIDs: [], revokedAt: 42))), "\(body ?? "NULL")")
            let profile = ChatRecord.Content(columns: ChatRecord.Columns(kind: 9, a: 2, ref: "u", body: body))
            #expect(profile == .account(AccountChangeRecord(userID: "u", .profile(AccountProfile()))), "\(body ?? "NULL")")
        }
        // No user: an empty id (the rules find no one).
        #expect(ChatRecord.Content(columns: ChatRecord.Columns(kind: 9, a: 2)).account?.userID == "")
    }

    @Test func aChangeThisVersionDoesNotKnowIsKeptAsItIs() {
        for a in [0, 3, -1, .max, .min] as [Int64] {
            let columns = ChatRecord.Columns(kind: 9, a: a, b: 5, ref: "u", body: "{}")
            let content = ChatRecord.Content(columns: columns)
            #expect(content == .unknown(columns) && content.kind == nil && content.columns == columns)
        }
    }

    // MARK: - The core

    @Test func aChangeIsOneRecordOnNoThreadWithNoEvent() throws {
        let h = CoreHarness()
        let change = AccountChangeRecord(userID: "a", .sessionsRevoked(familyIDs: ["f1"], revokedAt: h.now))
        let committed = try h.commit(.accountChanged(change))
        let record = try #require(committed.records.first)
        #expect(committed.records.count == 1 && committed.commit.reply == .none && committed.commit.quotaChanged.isEmpty)
        #expect(record.content == .account(change) && record.threadNo == 0 && record.side == .coach && record.seq == 0 && record.at == h.now)
        #expect(committed.applied.logged.isEmpty && committed.applied.ephemeral.isEmpty)
        #expect(h.core.events(for: record, h.context).isEmpty, "resume replays nothing for it")
        // Nothing to tell: no record.
        for empty in [AccountChangeRecord(userID: "", .sessionsRevoked(familyIDs: ["f"], revokedAt: 1)),
                      AccountChangeRecord(userID: "a", .sessionsRevoked(familyIDs: [], revokedAt: 1)),
                      AccountChangeRecord(userID: "a", .profile(AccountProfile()))] {
            #expect(try h.commit(.accountChanged(empty)).records.isEmpty, "\(empty)")
        }
    }

    @Test func aFollowedProfileRenamesThePeerInTheThreadEvents() throws {
        let log = FakeLog()
        let here = CoreHarness(log: log), there = CoreHarness(log: log)
        let renamed = AccountChangeRecord(userID: "a", .profile(AccountProfile(fullName: "Amal R.", language: "ar", timeZone: "Asia/Riyadh")))
        let committed = try there.commit(.accountChanged(renamed))
        #expect(there.core.chat.names["a"] == "Amal R.", "applied where it was made too (harmless twice)")
        let applied = here.core.apply(committed.records, origin: .elsewhere, here.context)
        #expect(applied.logged.isEmpty && applied.ephemeral.isEmpty)
        #expect(here.core.chat.names["a"] == "Amal R.")
        // The coach's next `thread` event about the client names them as they now are.
        let link = ChatRecord(pos: 99, threadNo: 1, side: .client, seq: 0, at: here.now, .link(LinkChangeRecord(active: true)))
        let events = here.core.events(for: link, here.context)
        #expect(events.first { $0.userID == "k" }?.payload.contains(#""peer_name":"Amal R.""#) == true, "\(events)")
        // Applied again (a follower's read overlapping what it had): the same.
        _ = here.core.apply(committed.records, origin: .elsewhere, here.context)
        #expect(here.core.chat.names["a"] == "Amal R." && here.core.chat.names["b"] == "Badr")
        // A profile without a name (a language change) keeps the name.
        _ = here.follow([ChatRecord(threadNo: 0, side: .coach, seq: 0, at: here.now,
                                    .account(AccountChangeRecord(userID: "a", .profile(AccountProfile(language: "en")))))])
        #expect(here.core.chat.names["a"] == "Amal R.")
    }

    @Test func aFollowedTierForgetsTheCount() throws {
        var features = CoreFeatures()
        features.tiers = true
        let h = CoreHarness(features: features)
        try h.commit(.text("a", "m1"))
        #expect(h.core.quotas.isLoaded("a"))
        let generation = h.core.countGenerations["a", default: 0]
        _ = h.follow([ChatRecord(threadNo: 0, side: .coach, seq: 0, at: h.now,
                                 .account(AccountChangeRecord(userID: "a", .profile(AccountProfile(tier: "premium")))))])
        #expect(!h.core.quotas.isLoaded("a") && h.core.countGenerations["a"] == generation + 1)
        // A revocation or a name leaves the counts alone.
        try h.commit(.text("a", "m2"))
        #expect(h.core.quotas.isLoaded("a"))
        _ = h.follow([ChatRecord(threadNo: 0, side: .coach, seq: 0, at: h.now,
                                 .account(AccountChangeRecord(userID: "a", .sessionsRevoked(familyIDs: ["f"], revokedAt: h.now)))),
                      ChatRecord(threadNo: 0, side: .coach, seq: 0, at: h.now,
                                 .account(AccountChangeRecord(userID: "a", .profile(AccountProfile(fullName: "A")))))])
        #expect(h.core.quotas.isLoaded("a"))
    }
}
