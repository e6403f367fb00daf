import Foundation
import Testing
@testable import SpotterCore
import SpotterProtocol

/// `message.edit` / `message.delete` and an erasure, decided and applied by the core alone: who may, the list's
/// preview, a change followed from another process, and an edit decided after a delete it has not read.
@Suite("CoachingCore: edits, deletes and erasures")
struct CoachingCoreChangeTests {
    typealias H = CoreHarness

    @Test func theSenderEditsAndDeletesAndThePreviewFollowsOnlyTheLastMessage() throws {
        let h = H()
        try h.commit(.text("a", "m1", "first words"))
        try h.commit(.text("a", "m2", "last words"))
        // An older message's edit leaves the preview alone; the last one's moves it.
        let older = try h.commit(.edit("a", 1, "first, edited"))
        #expect(older.records.first?.content.change?.wasLast == false && h.thread("t1").lastPreview == "last words")
        #expect(try decode(MessageView.self, older.reply).editedAt == h.now)
        let last = try h.commit(.edit("a", 2, "last, edited"))
        #expect(last.records.first?.content.change?.wasLast == true && h.thread("t1").lastPreview == "last, edited")
        #expect(last.applied.loggedTypes == ["k:message.edited", "a:message.edited"])
        let deleted = try h.commit(.delete("a", 2))
        #expect(h.thread("t1").lastPreview == ChatState.deletedPreview)
        #expect(try decode(MessageView.self, deleted.reply).text == nil)
        // Nothing about the thread's counts moved: a change is not a message.
        #expect(h.thread("t1").lastSeq == 2 && h.thread("t1").unread(.coach) == 2)
        // A second delete answers the tombstone and appends nothing; an edit of it is refused.
        #expect(try h.commit(.delete("a", 2)).records.isEmpty)
        #expect(h.refusal(.edit("a", 2, "back")) == APIError(.messageDeleted, field: "seq"))
    }

    @Test func onlyTheSendersOwnTextInTheWindowAndNothingForAnOutsider() throws {
        var features = CoreFeatures()
        features.editWindowSeconds = 60
        let h = H(features: features)
        try h.commit(.text("a", "m1", "hello"))
        try h.commit(.text("a", "meal", #"{"name":"Oats","ingredients":[],"calories":1,"protein_g":1,"carbs_g":1,"fats_g":1,"meal_type":"lunch"}"#,
                           kind: .mealLog))
        #expect(h.refusal(.edit("k", 1, "coach's words")) == APIError(.messageNotChangeable, field: "seq"))
        #expect(h.refusal(.delete("k", 1)) == APIError(.messageNotChangeable, field: "seq"))
        #expect(h.refusal(.delete("b", 1)) == APIError(.forbidden, field: "thread_id"))  // a client of the same coach
        #expect(h.refusal(.delete("x", 1)) == APIError(.forbidden, field: "thread_id"))
        #expect(h.refusal(.edit("a", 2, "not a meal")) == APIError(.messageNotChangeable, field: "seq"))
        for seq: Int64 in [0, -1, 3, .max, .min] {
            #expect(h.refusal(.delete("a", seq)) == APIError(.notFound, field: "seq"))
        }
        h.now += 61
        #expect(h.refusal(.edit("a", 1, "late")) == APIError(.editWindowClosed, field: "seq"))
        #expect(try h.commit(.delete("a", 1)).records.count == 1)
        // An admin deletes for moderation (not a participant), and may not edit.
        #expect(try h.commit(.delete("admin", 2, admin: true)).records.first?.content.change?.change == .delete(by: .admin))
    }

    /// A message whose stored time is at the edge of Int64 (a row from another process or an old database): the window
    /// is checked without overflowing — Int64.min is long past, Int64.max not yet.
    @Test func aStoredTimeAtTheEdgeOfInt64NeitherCrashesNorOpensTheWindow() throws {
        let h = H()
        h.follow([h.foreignMessage(1, side: .client, ref: "old", at: .min)])
        h.follow([h.foreignMessage(1, side: .client, ref: "new", at: .max)])
        #expect(h.refusal(.edit("a", 1, "x")) == APIError(.editWindowClosed, field: "seq"))
        #expect(try decode(MessageView.self, try h.commit(.edit("a", 2, "y")).reply).text == "y")
        #expect(try h.commit(.delete("a", 1)).records.count == 1)
    }

    /// Two changes decided before the first is durable: the edit decided after a delete is refused from memory,
    /// though the read it made came before the delete's row was rewritten.
    @Test func anEditDecidedAfterADeleteIsRefusedBeforeTheDeleteIsCommitted() throws {
        let h = H()
        try h.commit(.text("a", "m1", "oops"))
        guard case .read(let read) = h.core.decide(.edit("a", 1, "fixed"), h.context),
              case .original(let stale) = h.log.answer(read) else { Issue.record("no read asked"); return }
        var remove = MessageChangeRequest(actorID: "a", threadID: "t1", seq: 1, text: nil)
        remove.target = .read(stale)
        guard case .commit(let delete) = h.core.decide(.changeMessage(remove), h.context) else {
            Issue.record("the delete was not decided"); return
        }
        var edit = MessageChangeRequest(actorID: "a", threadID: "t1", seq: 1, text: "fixed")
        edit.target = .read(stale)
        guard case .refuse(let error) = h.core.decide(.changeMessage(edit), h.context) else { Issue.record("the edit was decided"); return }
        #expect(error == APIError(.messageDeleted, field: "seq") && delete.records.count == 1)
    }

    @Test func aChangeFollowedFromAnotherProcessMovesThePreviewAndTellsBothSides() throws {
        let log = FakeLog()
        let here = H(log: log), there = H(log: log)
        let sent = try there.commit(.text("a", "m1", "words"))
        _ = here.core.apply(sent.records, origin: .elsewhere, here.context)
        #expect(here.thread("t1").lastPreview == "words")
        let deleted = try there.commit(.delete("a", 1))
        let applied = here.core.apply(deleted.records, origin: .elsewhere, here.context)
        #expect(here.thread("t1").lastPreview == ChatState.deletedPreview)
        #expect(applied.loggedTypes == ["k:message.deleted", "a:message.deleted"])
        // And an edit there of a message this process never saw is refused there, not here.
        #expect(here.refusal(.edit("a", 1, "again")) == APIError(.messageDeleted, field: "seq"))
    }

    @Test func anErasureForgetsTheUsersPreviewNameAndCoachingRecord() throws {
        let h = H()
        try h.commit(.text("k", "k1", "coach says hi"))
        try h.commit(.text("a", "a1", "my secret"))
        let created = try h.commit(.record(userID: "k", .createChallenge(CoachingCoreRecordTests.challenge())))
        let challenge = try #require(created.records.first?.content.coaching?.itemID)
        #expect(h.core.coaching.challenges[challenge] != nil)
        let erased = try h.commit(.eraseUser(userID: "a"))
        #expect(erased.records.first?.threadNo == 0 && erased.records.first?.content.erasure?.userID == "a")
        #expect(erased.applied.loggedTypes == ["k:user.erased"])
        #expect(h.thread("t1").lastPreview == ChatState.deletedPreview && h.core.chat.names["a"] == nil)
        #expect(h.core.coaching.challenges[challenge] == nil)
        // Thread 2 (another client of the same coach) keeps its words.
        try h.commit(.text("b", "b1", "still here", thread: "t2"))
        #expect(h.thread("t2").lastPreview == "still here")
    }
}

/// Seed 001 "Monetization": the Free tier keeps 5 progress photos, paid tiers any number (`--tiers`).
@Suite("CoachingCore: progress photos per tier")
struct CoachingCoreProgressPhotoTests {
    typealias H = CoreHarness

    static func checkIn(thread: String, _ photos: [String]) -> RecordChange {
        var command = CheckInSubmitCommand()
        command.threadId = thread
        command.weight = 80
        command.photos = CheckInPhotos(front: photos.first, side: photos.dropFirst().first, back: photos.dropFirst(2).first)
        return .submitCheckIn(command, images: Set(photos))
    }

    @Test func freemiumKeepsFiveProgressPhotosAndPaidTiersAnyNumber() throws {
        var features = CoreFeatures()
        features.tiers = true
        let h = H(features: features)
        try h.commit(.record(userID: "a", Self.checkIn(thread: "t1", ["f1", "s1", "b1"])))
        try h.commit(.record(userID: "a", Self.checkIn(thread: "t1", ["f2", "s2"])))  // 5 kept: the limit
        let refused = h.refusal(.record(userID: "a", Self.checkIn(thread: "t1", ["f3"])))
        #expect(refused == APIError(.planUpgradeRequired, field: "photos", detail: .progressPhotos(limit: 5)))
        #expect(refused?.detail?.upgradeTo == "premium")
        // A check-in without photos still goes in; nothing of the refused one was kept.
        try h.commit(.record(userID: "a", Self.checkIn(thread: "t1", [])))
        #expect(h.core.coaching.checkIns(of: "a").count == 3)
        // Premium ("b"): no limit.
        for n in 0..<3 { try h.commit(.record(userID: "b", Self.checkIn(thread: "t2", ["f\(n)", "s\(n)", "b\(n)"]))) }
        #expect(h.core.coaching.checkIns(of: "b").count == 3)
    }

    @Test func withoutTiersNothingIsCounted() throws {
        let h = H()
        for n in 0..<3 { try h.commit(.record(userID: "a", Self.checkIn(thread: "t1", ["f\(n)", "s\(n)", "b\(n)"]))) }
        #expect(h.core.coaching.checkIns(of: "a").count == 3)
    }
}
