import Foundation
import Testing
@testable import SpotterCore
import SpotterProtocol

/// The core's chat decisions driven through the harness (no server, no sockets): sends and their retries,
/// the monthly message quota (`--tiers`), rating prompts (`--ratings`) and receipts.
@Suite("CoachingCore: sends, quotas, rating prompts, receipts")
struct CoachingCoreChatTests {
    typealias H = CoreHarness

    static var tiers: CoreFeatures {
        var features = CoreFeatures()
        features.tiers = true
        return features
    }

    static var ratings: CoreFeatures {
        var features = CoreFeatures()
        features.ratings = true
        return features
    }

    static let utcMonth = QuotaMonth(at: H.start, in: TimeZoneRules.zone("UTC"))

    static func window(_ thread: String, _ no: Int64) -> CoreRead {
        .window(threadID: thread, threadNo: no, limit: ChatState.windowSize)
    }

    func quota(_ h: CoreHarness, _ user: String) -> QuotaView? {
        guard case .ready(let view) = h.core.quotaView(user, h.context) else { return nil }
        return view
    }

    // MARK: - Sends

    @Test func aNewMessageTakesTheNextSeqAndIsOneRecord() throws {
        let h = CoreHarness()
        let first = try h.commit(.text("a", "m1", "hello"))
        let record = try #require(first.records.first)
        #expect(first.records.count == 1)
        #expect(record.kind == .message && record.threadNo == 1 && record.side == .client && record.seq == 1)
        #expect(record.content == .message(MessageRecord(clientMessageID: "m1", body: "hello")) && record.pos == 1 && record.at == H.start)
        let reply = try decode(MessageView.self, first.reply)
        #expect(reply.threadId == "t1" && reply.seq == 1 && reply.senderId == "a" && reply.clientMessageId == "m1")
        #expect(reply.text == "hello" && reply.createdAt == H.start)
        // Both participants hear of it at its position; the coach has one unread, the writer none.
        #expect(first.applied.loggedTypes == ["k:message", "a:message"])
        #expect(first.applied.logged.map(\.cursor) == [1, 1])
        try #require(first.applied.logged.count == 2)
        #expect(try decode(MessageEvent.self, first.applied.logged[0].payload).unread == 1)
        #expect(try decode(MessageEvent.self, first.applied.logged[1].payload).unread == 0)

        // The same client_message_id from the other side is a new message.
        h.now += 5
        let second = try h.commit(.text("k", "m1", "hi back"))
        #expect(second.records.map(\.seq) == [2] && second.records[0].side == .coach && second.records[0].pos == 2)
        #expect(h.thread("t1").lastSeq == 2 && h.thread("t1").committedSeq == 2 && h.thread("t1").lastPos == 2)
        #expect(h.log.records.count == 2)
        // Another thread counts on its own.
        #expect(try h.commit(.text("b", "m1", thread: "t2")).records.map(\.seq) == [1])
    }

    /// A decision moves the state at once (the next send gets the next seq before the first is durable); what
    /// counts and badges show moves when the records are applied as committed.
    @Test func decisionsTakeSeqsAtOnceAndBadgesMoveWhenCommitted() throws {
        let h = CoreHarness()
        h.core.learn(.window(threadID: "t1", threadNo: 1, limit: 128), .window([]), h.context)
        guard case .commit(let first) = h.core.decide(.text("a", "m1"), h.context),
              case .commit(let second) = h.core.decide(.text("a", "m2"), h.context) else {
            Issue.record("expected two commits")
            return
        }
        #expect(first.records.map(\.seq) == [1] && second.records.map(\.seq) == [2])
        #expect(first.reply == .committedMessage)
        #expect(h.thread("t1").lastSeq == 2 && h.thread("t1").committedSeq == 0 && h.thread("t1").unread(.coach) == 0)
        let applied = h.core.apply(h.log.append(first.records), origin: .here, h.context)
        #expect(h.thread("t1").committedSeq == 1 && h.thread("t1").unread(.coach) == 1 && h.core.chat.totalUnread("k") == 1)
        #expect(try decode(MessageView.self, try #require(applied.messageJSON)).seq == 1)
        _ = h.core.apply(h.log.append(second.records), origin: .here, h.context)
        #expect(h.thread("t1").committedSeq == 2 && h.thread("t1").unread(.coach) == 2 && h.thread("t1").lastPos == 2)
    }

    @Test func aRetryReturnsTheOriginalAndAppendsNothing() throws {
        let h = CoreHarness()
        try h.commit(.text("a", "m1", "hello"))
        try h.commit(.text("a", "m2", "again"))
        _ = h.takeReads()
        h.now += 30
        let retry = try h.commit(.text("a", "m1", "hello"))
        #expect(retry.records.isEmpty && retry.applied.logged.isEmpty)
        #expect(h.takeReads() == [.original(threadNo: 1, seq: 1)])
        let view = try decode(MessageView.self, retry.reply)
        #expect(view.seq == 1 && view.text == "hello" && view.clientMessageId == "m1" && view.createdAt == H.start)
        #expect(h.log.records.count == 2 && h.thread("t1").lastSeq == 2)
        // The next new message goes on from where the thread was.
        #expect(try h.commit(.text("a", "m3")).records.map(\.seq) == [3])
    }

    @Test func theSameIDWithAnotherBodyIsAnIdempotencyConflict() throws {
        let h = CoreHarness()
        try h.commit(.text("a", "m1", "hello"))
        #expect(h.refusal(.text("a", "m1", "hello?")) == APIError(.idempotencyConflict, field: "client_message_id"))
        #expect(h.refusal(.text("a", "m1", "hello", kind: .mealLog)) == APIError(.idempotencyConflict, field: "client_message_id"))
        #expect(h.log.records.count == 1 && h.thread("t1").lastSeq == 1)
    }

    @Test func aColdThreadReadsItsWindowFirstAndThenKnowsEarlierSends() throws {
        let h = CoreHarness()
        // m1 was written before this core started (or by another process): the thread's window is not in memory.
        h.follow([h.foreignMessage(1, side: .client, ref: "m1")])
        guard case .read(let read) = h.core.decide(.text("a", "m2"), h.context) else {
            Issue.record("a cold thread decided without its window")
            return
        }
        #expect(read == Self.window("t1", 1))
        #expect(h.thread("t1").lastSeq == 1)  // no seq taken while cold
        // Once the window is read, m1 is known: a retry of it is answered from the log.
        let retry = try h.commit(.text("a", "m1", "from elsewhere"))
        #expect(retry.records.isEmpty)
        #expect(h.takeReads() == [Self.window("t1", 1), .original(threadNo: 1, seq: 1)])
        #expect(try decode(MessageView.self, retry.reply).seq == 1)
        // A window once read stays: the next send reads nothing.
        #expect(try h.commit(.text("a", "m2")).records.map(\.seq) == [2])
        #expect(h.takeReads().isEmpty)
    }

    @Test func outsidersAndEndedLinksCannotSend() {
        let h = CoreHarness()
        #expect(h.refusal(.text("x", "m1")) == APIError(.forbidden, field: "thread_id"))
        #expect(h.refusal(.text("b", "m1")) == APIError(.forbidden, field: "thread_id"))  // k's client, not of t1
        #expect(h.refusal(.text("a", "m1", thread: "nope")) == APIError(.forbidden, field: "thread_id"))
        #expect(h.refusal(.text("c", "m1", thread: "t3")) == APIError(.threadInactive, field: "thread_id"))
        #expect(h.refusal(.text("k0", "m1", thread: "t3")) == APIError(.threadInactive, field: "thread_id"))
        #expect(h.log.records.isEmpty && h.reads.isEmpty)
    }

    @Test func aSystemMessageIsNeitherChargedNorCounted() throws {
        var features = Self.tiers
        features.ratings = true
        let h = CoreHarness(features: features)
        let system = try h.commit(.text("a", "sys-1", "Badge earned", kind: .system))
        #expect(system.records.map(\.content.message?.kind) == [.system])
        #expect(system.commit.quotaChanged.isEmpty)
        #expect(h.takeReads() == [Self.window("t1", 1)])  // no count asked for
        #expect(!h.core.quotas.isLoaded("a") && h.core.sentEver["a"] == nil)
        // The count read from the log leaves it out too.
        try h.commit(.text("a", "m1"))
        #expect(quota(h, "a")?.messages.used == 1 && h.core.sentEver["a"] == 1)
    }

    // MARK: - The monthly quota (`--tiers`)

    @Test func aClientsFirstSendReadsTheMonthsCountThenSendsAreChargedInMemory() throws {
        let h = CoreHarness(features: Self.tiers)
        // Earlier messages: 3 last month, 5 this month (before a restart), and the coach's, which do not count.
        for index in 1...3 { h.follow([h.foreignMessage(1, side: .client, ref: "old-\(index)", at: Self.utcMonth.startsAt - 100)]) }
        for index in 1...5 { h.follow([h.foreignMessage(1, side: .client, ref: "new-\(index)", at: Self.utcMonth.startsAt + 100)]) }
        h.follow([h.foreignMessage(1, side: .coach, ref: "k-1")])
        let counts = CoreRead.counts(userID: "a", threadNos: [1], since: Self.utcMonth.startsAt, ever: false,
                                     generation: h.core.countGenerations["a", default: 0])
        guard case .read(let asked) = h.core.quotaView("a", h.context) else {
            Issue.record("the quota was shown without its count")
            return
        }
        #expect(asked == counts)

        let first = try h.commit(.text("a", "m1"))
        #expect(h.takeReads() == [counts, Self.window("t1", 1)])
        #expect(first.commit.quotaChanged == ["a"])
        #expect(quota(h, "a")?.messages == QuotaAllowance(used: 6, limit: 20, left: 14, band: "green"))
        #expect(quota(h, "a")?.resetsAt == Self.utcMonth.resetsAt)
        try h.commit(.text("a", "m2"))
        #expect(h.takeReads().isEmpty)
        #expect(quota(h, "a")?.messages.used == 7)
    }

    @Test func atTheTierLimitASendIsRefusedAndTakesNothing() throws {
        let h = CoreHarness(features: Self.tiers)
        for index in 1...18 { h.follow([h.foreignMessage(1, side: .client, ref: "old-\(index)")]) }
        try h.commit(.text("a", "m19"))
        let twentieth = try h.commit(.text("a", "m20"))
        #expect(twentieth.records.count == 1)
        #expect(quota(h, "a")?.messages == QuotaAllowance(used: 20, limit: 20, left: 0, band: "red"))
        #expect(h.refusal(.text("a", "m21")) == APIError(.quotaExceeded, field: "text", detail: .messageQuota(tier: "freemium")))
        #expect(h.thread("t1").lastSeq == 20 && h.log.records.count == 20)
        // A retry of a message already sent is answered, not refused.
        #expect(try h.commit(.text("a", "m20")).records.isEmpty)
        // Coaches are not metered: no count, no limit.
        _ = h.takeReads()
        for index in 1...25 { try h.commit(.text("k", "k-\(index)")) }
        #expect(h.takeReads().isEmpty)
        #expect(h.thread("t1").lastSeq == 45)
        #expect(quota(h, "k") == nil && !h.core.quotas.isLoaded("k"))
        // The premium client's limit is theirs.
        #expect(try h.commit(.text("b", "m1", thread: "t2")).records.count == 1)
        #expect(quota(h, "b")?.messages.limit == 200)
    }

    @Test func aNewMonthInTheClientsZoneStartsTheCountAgainWithoutARead() throws {
        let h = CoreHarness(features: Self.tiers)
        h.people["b"]?.tier = "freemium"  // Riyadh, UTC+3
        for index in 1...20 { try h.commit(.text("b", "m\(index)", thread: "t2")) }
        let riyadh = QuotaMonth(at: h.now, in: TimeZoneRules.zone("Asia/Riyadh"))
        #expect(riyadh.resetsAt == Self.utcMonth.resetsAt - 3 * H.hour)
        h.now = riyadh.resetsAt - 1
        #expect(h.refusal(.text("b", "m21", thread: "t2"))?.code == .quotaExceeded)
        _ = h.takeReads()
        // Still January in UTC, February in Riyadh.
        h.now = riyadh.resetsAt
        let sent = try h.commit(.text("b", "m21", thread: "t2"))
        #expect(sent.records.count == 1)
        #expect(h.takeReads().isEmpty)
        let view = try #require(quota(h, "b"))
        #expect(view.messages.used == 1 && view.resetsAt == QuotaMonth(at: h.now, in: TimeZoneRules.zone("Asia/Riyadh")).resetsAt)
        // A UTC client is still in January.
        h.people["a"]?.tier = "freemium"
        #expect(quota(h, "a") == nil)  // not loaded yet: the view asks for a read
        guard case .read(.counts(_, _, let since, _, _)) = h.core.quotaView("a", h.context) else {
            Issue.record("expected a count read")
            return
        }
        #expect(since == Self.utcMonth.startsAt)
    }

    @Test func aFollowedClientMessageMakesTheCountsBeReadAgain() throws {
        var features = Self.tiers
        features.ratings = true
        let h = CoreHarness(features: features)
        try h.commit(.text("a", "m1"))
        #expect(h.core.quotas.isLoaded("a") && h.core.sentEver["a"] == 1)
        // The coach's message and a system message (followed) charge no one.
        h.follow([h.foreignMessage(1, side: .coach, ref: "k-1")])
        h.follow([h.foreignMessage(1, side: .client, ref: "sys", kind: .system)])
        #expect(h.core.quotas.isLoaded("a") && h.core.sentEver["a"] == 1)
        // Another process charged the client: both counts are read again when next needed.
        h.follow([h.foreignMessage(1, side: .client, ref: "m2")])
        #expect(!h.core.quotas.isLoaded("a") && h.core.sentEver["a"] == nil)
        _ = h.takeReads()
        try h.commit(.text("a", "m3"))
        #expect(h.takeReads() == [.counts(userID: "a", threadNos: [1], since: Self.utcMonth.startsAt, ever: true, generation: h.core.countGenerations["a", default: 0])])
        #expect(quota(h, "a")?.messages.used == 3 && h.core.sentEver["a"] == 3)
    }

    @Test func aTierChangeIsLoggedOnTheCurrentThreadAndForgetsTheCount() throws {
        let h = CoreHarness(features: Self.tiers)
        try h.commit(.text("a", "m1"))
        #expect(h.core.quotas.isLoaded("a"))
        h.people["a"]?.tier = "premium"  // the accounts saved it first
        let set = try h.commit(.tierSet(clientID: "a", tier: "premium"))
        let record = try #require(set.records.first)
        #expect(set.records.count == 1)
        #expect(record.content == .tier(TierRecord(tier: "premium")) && record.threadNo == 1 && record.side == .client && record.seq == 1)
        #expect(set.commit.quotaChanged == ["a"] && set.commit.reply == .none)
        #expect(set.applied.loggedTypes == ["a:tier"])
        #expect(!h.core.quotas.isLoaded("a"))
        _ = h.takeReads()
        try h.commit(.text("a", "m2"))
        #expect(h.takeReads() == [.counts(userID: "a", threadNos: [1], since: Self.utcMonth.startsAt, ever: false, generation: h.core.countGenerations["a", default: 0])])
        #expect(quota(h, "a")?.tier == "premium")
        #expect(quota(h, "a")?.messages == QuotaAllowance(used: 2, limit: 200, left: 198, band: "green"))
        // Another process's tier record forgets the count too.
        h.follow([ChatRecord(threadNo: 1, side: .client, seq: 2, at: h.now, .tier(TierRecord(tier: "smart_premium")))])
        #expect(!h.core.quotas.isLoaded("a"))
        // No thread to log it on (no current thread, or no --tiers): an account record on no thread, which the
        // other processes of a cluster follow, with no event.
        let account = ChatRecord.Content.account(AccountChangeRecord(userID: "c", .profile(AccountProfile(tier: "premium"))))
        let noThread = try h.commit(.tierSet(clientID: "c", tier: "premium"))
        #expect(noThread.records.map(\.content) == [account] && noThread.records.first?.threadNo == 0)
        #expect(noThread.applied.logged.isEmpty)
        let plain = CoreHarness()
        let unmetered = try plain.commit(.tierSet(clientID: "a", tier: "premium"))
        #expect(unmetered.records.map(\.threadNo) == [0] && unmetered.commit.quotaChanged == ["a"])
    }

    @Test func attachmentsNeedATierThatHasThem() {
        let h = CoreHarness(features: Self.tiers)
        let refusal = APIError(.planUpgradeRequired, field: "attachments", detail: .attachments)
        #expect(h.core.attachmentRefusal("a", field: "attachments", h.context) == refusal)
        #expect(h.core.attachmentRefusal("b", field: "attachments", h.context) == refusal)
        #expect(h.core.attachmentRefusal("s", field: "attachments", h.context) == nil)
        #expect(h.core.attachmentRefusal("k", field: "attachments", h.context) == nil)
        let plain = CoreHarness()
        #expect(plain.core.attachmentRefusal("a", field: "attachments", plain.context) == nil)
    }

    // MARK: - Rating prompts (`--ratings`)

    /// A count read asked for before the client's count was forgotten (another process charged them, a tier
    /// changed) may have been made before messages charged since: it is dropped when it lands, and the next step
    /// reads again (the simulator's finding 4: loaded, it under-counted the client, who could send past the tier).
    @Test func aCountReadAskedBeforeAForgetIsDropped() throws {
        let h = CoreHarness(features: Self.tiers)
        guard case .read(let stale) = h.core.quotaView("a", h.context) else { return #expect(Bool(false)) }
        h.follow([h.foreignMessage(1, side: .client, ref: "elsewhere")])  // charged by another process: forgotten
        h.core.learn(stale, .counts(usedSince: 0, ever: nil), h.context)
        #expect(!h.core.quotas.isLoaded("a"))
        guard case .read(let fresh) = h.core.quotaView("a", h.context) else { return #expect(Bool(false)) }
        #expect(fresh != stale)
        h.core.learn(fresh, .counts(usedSince: 1, ever: nil), h.context)
        #expect(h.core.quotas.isLoaded("a"))
    }

    @Test func everyTenthClientMessageAsksForARatingInTheSameCommit() throws {
        let h = CoreHarness(features: Self.ratings)
        // Eight messages ever, months ago: the count is of every message, not this month's.
        for index in 1...8 { h.follow([h.foreignMessage(1, side: .client, ref: "old-\(index)", at: H.start - 90 * H.day)]) }
        let ninth = try h.commit(.text("a", "m9"))
        #expect(h.takeReads().first == .counts(userID: "a", threadNos: [1], since: nil, ever: true, generation: h.core.countGenerations["a", default: 0]))
        #expect(ninth.records.map(\.kind) == [.message])
        let tenth = try h.commit(.text("a", "m10"))
        #expect(tenth.records.map(\.kind) == [.message, .ratingPrompt])
        try #require(tenth.records.count == 2 && tenth.applied.logged.count == 3)
        let message = tenth.records[0], prompt = tenth.records[1]
        #expect(prompt.content == .ratingPrompt(.afterMessages(sent: 10)) && prompt.side == .client && prompt.threadNo == 1)
        #expect(prompt.seq == message.seq && prompt.pos == message.pos + 1)
        #expect(tenth.applied.loggedTypes == ["k:message", "a:message", "a:rating_prompt"])
        let event = try decode(RatingPromptEvent.self, tenth.applied.logged[2].payload)
        #expect(event == RatingPromptEvent(threadId: "t1", coachId: "k", reason: "messages", messagesSent: 10, sessionId: nil))
        // The coach's messages do not count; the client's 20th asks again.
        for index in 1...5 { #expect(try h.commit(.text("k", "k-\(index)")).records.count == 1) }
        var prompts: [RatingPromptRecord] = []
        for index in 11...21 {
            prompts += try h.commit(.text("a", "m\(index)")).records.compactMap(\.content.ratingPrompt)
        }
        #expect(prompts == [.afterMessages(sent: 20)])
        #expect(h.core.sentEver["a"] == 21)
        // Without --ratings: no count, no prompt.
        let plain = CoreHarness()
        for index in 1...10 { #expect(try plain.commit(.text("a", "m\(index)")).records.count == 1) }
        #expect(plain.reads.allSatisfy { if case .counts = $0 { false } else { true } })
    }

    // MARK: - Receipts

    @Test func aReceiptThatMovesMakesARecordAndOneThatDoesNotStillReplies() throws {
        let h = CoreHarness()
        for index in 1...3 { try h.commit(.text("k", "k-\(index)")) }
        let read = try h.commit(.receipt(userID: "a", threadID: "t1", delivered: nil, read: 2))
        let record = try #require(read.records.first)
        #expect(read.records.count == 1)
        #expect(record.content == .receipt(ReceiptRecord(delivered: 2, read: 2, readMoved: true)) && record.side == .client)
        #expect(record.seq == 3 && record.pos == 4)
        #expect(try decode(ReceiptResult.self, read.reply)
            == ReceiptResult(threadId: "t1", deliveredSeq: 2, readSeq: 2, unread: 1, totalUnread: 1))
        // The peer hears of the receipt, the reader's other devices of their unread count.
        #expect(read.applied.loggedTypes == ["k:receipt", "a:unread"])
        try #require(read.applied.logged.count == 2)
        #expect(try decode(ReceiptEvent.self, read.applied.logged[0].payload)
            == ReceiptEvent(threadId: "t1", userId: "a", deliveredSeq: 2, readSeq: 2))
        #expect(try decode(UnreadEvent.self, read.applied.logged[1].payload)
            == UnreadEvent(threadId: "t1", unread: 1, totalUnread: 1, readSeq: 2))

        // Delivered only: a record, and only the peer hears of it.
        let delivered = try h.commit(.receipt(userID: "a", threadID: "t1", delivered: 3, read: nil))
        #expect(delivered.records.map(\.content) == [.receipt(ReceiptRecord(delivered: 3, read: 2, readMoved: false))])
        #expect(delivered.applied.loggedTypes == ["k:receipt"])

        // Nothing moves (positions only go forward): no record, no event, the reply still.
        let same = try h.commit(.receipt(userID: "a", threadID: "t1", delivered: 1, read: 2))
        #expect(same.records.isEmpty && same.applied.logged.isEmpty)
        #expect(try decode(ReceiptResult.self, same.reply)
            == ReceiptResult(threadId: "t1", deliveredSeq: 3, readSeq: 2, unread: 1, totalUnread: 1))

        // Past the last seq: up to the last seq.
        let beyond = try h.commit(.receipt(userID: "a", threadID: "t1", delivered: nil, read: 99))
        #expect(beyond.records.compactMap(\.content.receipt).map { [$0.delivered, $0.read] } == [[3, 3]])
        #expect(try decode(ReceiptResult.self, beyond.reply).unread == 0)
        #expect(h.log.records.count == 6)

        #expect(h.refusal(.receipt(userID: "x", threadID: "t1", delivered: 1, read: 1)) == APIError(.forbidden, field: "thread_id"))
        #expect(h.log.records.count == 6)
    }
}
