import Foundation
import Testing
@testable import SpotterCore
import SpotterProtocol

// The core (`CoachingCore`) is tested without a server or sockets: `CoreHarness` (CoachingCoreHarness.swift)
// runs its decisions the way `CoreRunner` does over a log in memory, with a clock moved by hand. The suites:
// CoachingCoreChatTests (sends, quotas, rating prompts, receipts), CoachingCoreSessionTests, CoachingCoreRecordTests,
// this file (records followed from other processes, recovery decisions) and CommitPipelineTests.
//
// Mutation checks: a rule broken by hand in Sources/SpotterCore/Core (the core of 5f8634d), these suites run, the
// change reverted (`git diff Sources` empty after). Rule broken → the tests that failed:
// - CoachingCore.send: drop `quotas.charge` → aClientsFirstSendReadsTheMonthsCount…, atTheTierLimitASendIsRefused…,
//   aNewMonthInTheClientsZone…, aTierChangeIsLogged…, aSystemMessageIsNeither…, aFollowedClientMessageMakes… fail.
// - send: count system messages (`counted = true`) → aSystemMessageIsNeitherChargedNorCounted.
// - send: a rating count off by one (`+ 2`) → everyTenthClientMessageAsksForARating…, resetSetsAThreadBack…,
//   aSystemMessageIsNeither…, aFollowedClientMessageMakes….
// - month(at:zone:): reuse a zone's cached month after its `resetsAt` → aNewMonthInTheClientsZone…,
//   theClientsTierLimitsCallLengthAndCallsPerMonth.
// - apply(.elsewhere): a followed client message forgets no count → aFollowedClientMessageMakesTheCountsBeReadAgain;
//   a tier record forgets nothing → aTierChangeIsLoggedOnTheCurrentThreadAndForgetsTheCount.
// - apply(.elsewhere): skip `sessions.learn` → aFollowedSessionRecordUpdatesTheBook, applyingTheSameRecordsTwice…;
//   skip `coaching.apply` → aFollowedRecordBodyUpdatesTheCoachingRecord, applyingTheSameRecordsTwice….
// - apply: client cards for `.elsewhere` instead of `.here` → everyChangeIsOneRecordAndACardForTheCoach,
//   aFollowedRecordBodyUpdatesTheCoachingRecord.
// - recovery(after:clustered:): always `.threads`, or ignoring `clustered` →
//   recoveryRebuildsEverythingAloneAndSomeThreadsInACluster.
// - Sessions: a client's request not counted as a call (`countsNow: false`) → theClientsTierLimits…; no per-account
//   create limit → createsAndActsAreLimitedPerAccountAndMinute; an ended link's sessions still movable →
//   anEndedLinkCancelsItsOpenSessions; ratings asked without --ratings → aCompletedSessionAsksTheClientForARating.
// - Sessions reply: ignore `about` → keepingTheExistingSessionRepliesWithTheOneKeptOut; ignore `about` and reply
//   with the last changed session → also aClientsCancelRepliesWithTheirOwnSession…, anAnswerRepliesWithTheSession….
//   Dropping only the filter to the user's sessions survives: `about` always names one of theirs (equivalent).
// - Record: write the unchanged body of a retried task check → everyChangeIsOneRecordAndACardForTheCoach.
// - CommitPipeline: complete an empty submission at once → anEmptySubmissionWaits…, oneFlushIsOneAppend…,
//   aFailedAppendFails…; a failed batch's submissions not told → aFailedAppendFailsItsWholeBatchAndTellsTheShell;
//   `inFlight > maxInFlight` → writesAreRefusedPastTheBoundAndWhileRecovering; committedThrough not moved →
//   committedThroughOnlyMovesForward, oneFlushIsOneAppend…, anEmptySubmissionWaits….
//
// Found by these tests and fixed (aMealLogAppliedTwiceIsCountedOnce): `apply` appended a meal log's time to
// `mealTimes` each time the record was applied, so the same records applied twice doubled the dashboard's meal-log
// days; a record at or below its thread's applied position now adds nothing.

/// Records committed elsewhere (another process of a cluster, or read back from the log) and what to do after
/// a failed append.
@Suite("CoachingCore: followed records and recovery")
struct CoachingCoreTests {
    typealias H = CoreHarness
    static let at = H.start + 2 * H.day

    // MARK: - apply(.elsewhere)

    /// Two processes over one log: what one commits, the other follows.
    @Test func aFollowedSessionRecordUpdatesTheBook() throws {
        let log = FakeLog()
        let here = CoreHarness(log: log), there = CoreHarness(log: log)
        let invite = try there.commit(.invite(at: Self.at))
        let id = try #require(invite.records.first?.sessionID)
        let applied = here.core.apply(invite.records, origin: .elsewhere, here.context)
        #expect(here.core.sessions[id] == there.core.sessions[id] && here.core.sessions[id]?.status == .invited)
        #expect(applied.loggedTypes == ["k:session", "a:session"])
        #expect(applied.logged.map(\.cursor) == [1, 1])
        // The thread moved here too: the system message took seq 1, and it is durable.
        #expect(here.thread("t1").lastSeq == 1 && here.thread("t1").committedSeq == 1 && here.thread("t1").unread(.client) == 1)
        // The client answers through this process; the other follows.
        let accepted = try here.commit(.act("a", .accept, id))
        #expect(accepted.records.map(\.seq) == [2] && accepted.records.map(\.pos) == [2])
        _ = there.core.apply(accepted.records, origin: .elsewhere, there.context)
        #expect(there.core.sessions[id]?.status == .scheduled && there.core.sessions[id] == here.core.sessions[id])
        // And its calendar shows it.
        var page = SessionsCommand()
        page.from = H.start
        let sessions = try decode(SessionsResult.self, there.core.sessionsPage(page, by: "a", now: there.now, budget: 1 << 20).get())
        #expect(sessions.sessions.map(\.status) == ["scheduled"])
    }

    @Test func aFollowedRecordBodyUpdatesTheCoachingRecord() throws {
        let log = FakeLog()
        let here = CoreHarness(log: log), there = CoreHarness(log: log)
        let created = try there.commit(.record(userID: "k", .createChallenge(CoachingCoreRecordTests.challenge())))
        let id = try #require(created.records.first?.content.coaching?.itemID)
        let applied = here.core.apply(created.records, origin: .elsewhere, here.context)
        #expect(here.core.coaching.challenges[id] == there.core.coaching.challenges[id])
        #expect(here.core.coaching.challenges[id]?.name == "Hydration")
        #expect(applied.loggedTypes == ["k:record", "a:record"])
        #expect(applied.ephemeral.isEmpty)  // the card is the deciding process's to send
        // The client checks a task here: the challenge is known.
        let checked = try here.commit(.record(userID: "a", .checkTask(CoachingCoreRecordTests.check(id, day: 1))))
        #expect(checked.records.count == 1)
        _ = there.core.apply(checked.records, origin: .elsewhere, there.context)
        #expect(there.core.coaching.challenges[id]?.tasks[0].doneAt == H.start)
    }

    @Test func aFollowedLinkRecordReportsAnEndedLink() throws {
        let h = CoreHarness()
        let ended = h.follow([ChatRecord(threadNo: 1, side: .client, seq: 0, at: h.now, .link(LinkChangeRecord(active: false)))])
        #expect(ended.endedLinks == [1] && !h.thread("t1").active)
        #expect(h.refusal(.text("a", "m1")) == APIError(.threadInactive, field: "thread_id"))
        let linked = h.follow([ChatRecord(threadNo: 1, side: .client, seq: 0, at: h.now, .link(LinkChangeRecord(active: true)))])
        #expect(linked.endedLinks.isEmpty && h.thread("t1").active)
        let event = try decode(ThreadEvent.self, try #require(linked.logged.first).payload)
        #expect(event.threadId == "t1" && event.peerId == "a" && event.peerName == "Amal" && event.active)
        #expect(try h.commit(.text("a", "m1")).records.count == 1)
    }

    /// Comparable state of a core: what applying a record may move.
    struct Snapshot: Equatable {
        var threads: [[Int64]]
        var sessions: [String: Session]
        var challenges: [String: ChallengeView]
        var checkIns: [String: CheckInView]
        var mealTimes: [Int64: [Int64]]

        init(_ core: CoachingCore) {
            threads = [Int64(1), 2].map { no in
                let thread = core.chat.thread(no: no)!
                return [thread.lastSeq, thread.committedSeq, thread.lastPos, thread.readSeq(.coach), thread.readSeq(.client),
                        thread.deliveredSeq(.coach), thread.deliveredSeq(.client), thread.unread(.coach), thread.unread(.client)]
            }
            sessions = core.sessions.sessions
            challenges = core.coaching.challenges
            checkIns = core.coaching.checkIns
            mealTimes = core.mealTimes
        }
    }

    /// Every kind of record another process makes, in the order it made them.
    func othersRecords() throws -> (log: FakeLog, records: [ChatRecord]) {
        let log = FakeLog()
        let there = CoreHarness(log: log)
        try there.commit(.text("a", "m1", "hello"))
        try there.commit(.text("k", "k1", "hi"))
        try there.commit(.receipt(userID: "a", threadID: "t1", delivered: nil, read: 99))
        let session = try CoachingCoreSessionTests.id(there.commit(.invite(at: Self.at)))
        try there.commit(.act("a", .accept, session))
        try there.commit(.record(userID: "k", .createChallenge(CoachingCoreRecordTests.challenge())))
        try there.commit(.record(userID: "a", .submitCheckIn(CoachingCoreRecordTests.checkIn(), images: [])))
        try there.commit(.text("b", "m1", thread: "t2"))
        return (log, log.records)
    }

    @Test func applyingTheSameRecordsTwiceChangesNothing() throws {
        let (log, records) = try othersRecords()
        let here = CoreHarness(log: log)
        _ = here.core.apply(records, origin: .elsewhere, here.context)
        let once = Snapshot(here.core)
        #expect(once.sessions.count == 1 && once.challenges.count == 1 && once.checkIns.count == 1)
        #expect(once.threads[0][0] == 4 && once.threads[1][0] == 1)
        _ = here.core.apply(records, origin: .elsewhere, here.context)
        #expect(Snapshot(here.core) == once)
        // One at a time, each twice in a row, makes the same state.
        let other = CoreHarness(log: log)
        for record in records {
            _ = other.core.apply([record], origin: .elsewhere, other.context)
            _ = other.core.apply([record], origin: .elsewhere, other.context)
        }
        #expect(Snapshot(other.core) == once)
    }

    /// Known bug: `apply` appends a meal log's time to `mealTimes` each time it is applied, so applying the same
    /// records twice (which `apply` promises changes nothing) leaves the times out of order and doubles the
    /// dashboard's meal-log days.
    @Test func aMealLogAppliedTwiceIsCountedOnce() throws {
        let log = FakeLog()
        let there = CoreHarness(log: log)
        let meal = #"{"meal_type":"lunch"}"#
        there.now = H.start - H.day
        try there.commit(.text("a", "m1", meal, kind: .mealLog))
        there.now = H.start
        try there.commit(.text("a", "m2", meal, kind: .mealLog))
        let here = CoreHarness(log: log)
        let range = DashboardCommand.range(from: H.start - 9 * H.day, to: H.start + 1)
        func mealDays() throws -> Int? {
            try decode(DashboardResult.self, here.core.dashboard(range, by: "k", here.context).get()).analytics.mealLogDaysPercent
        }
        _ = here.core.apply(log.records, origin: .elsewhere, here.context)
        #expect(here.core.mealTimes == [1: [H.start - H.day, H.start]])
        #expect(try mealDays() == 10)  // 2 days of 2 clients × 10 days
        _ = here.core.apply(log.records, origin: .elsewhere, here.context)
        let times = here.core.mealTimes, percent = try mealDays()
        #expect(times == [1: [H.start - H.day, H.start]])
        #expect(percent == 10)
    }

    // MARK: - Recovery

    static func record(_ kind: ChatRecord.Kind, thread: Int64 = 1) -> ChatRecord {
        let content: ChatRecord.Content = switch kind {
        case .message: .message(MessageRecord(clientMessageID: "m", body: "b"))
        case .receipt: .receipt(ReceiptRecord(delivered: 1, read: 1, readMoved: true))
        case .link: .link(LinkChangeRecord(active: false))
        case .session: .session(SessionRecord(sessionID: "s", byParticipant: true, json: "{}"))
        case .ratingPrompt: .ratingPrompt(.afterMessages(sent: 10))
        case .tier: .tier(TierRecord(tier: "premium"))
        case .record: .coaching(CoachingChangeRecord(itemID: "i", json: "{}"))
        case .change: .change(MessageChangeRecord(target: 1, change: .delete(by: .sender), wasLast: true))
        case .erasure: .erasure(ErasureRecord(userID: "u"))
        case .account: .account(AccountChangeRecord(userID: "u", .sessionsRevoked(familyIDs: ["f"], revokedAt: H.start)))
        }
        return ChatRecord(threadNo: thread, side: .client, seq: 1, at: H.start, content)
    }

    @Test func recoveryRebuildsEverythingAloneAndSomeThreadsInACluster() {
        let chatOnly = [Self.record(.message), Self.record(.receipt, thread: 2), Self.record(.ratingPrompt, thread: 5)]
        // Alone, a failed append is a full disk or a lost connection: everything is read again.
        #expect(CoachingCore.recovery(after: [Self.record(.message)], clustered: false) == .everything)
        #expect(CoachingCore.recovery(after: chatOnly, clustered: false) == .everything)
        // In a cluster, another process took the seqs first: only those threads are set back.
        #expect(CoachingCore.recovery(after: chatOnly, clustered: true) == .threads([1, 2, 5]))
        #expect(CoachingCore.recovery(after: [Self.record(.message), Self.record(.message)], clustered: true) == .threads([1]))
        // Unless a book moved with the records.
        for kind in [ChatRecord.Kind.session, .record, .tier, .link, .account] {
            #expect(CoachingCore.recovery(after: chatOnly + [Self.record(kind, thread: 3)], clustered: true) == .everything)
        }
    }

    @Test func resetSetsAThreadBackAndItsCountsAreReadAgain() throws {
        var features = CoreFeatures()
        features.tiers = true
        features.ratings = true
        let h = CoreHarness(features: features)
        try h.commit(.text("a", "m1"))
        // A send decided here whose append failed: its seq was taken, the store never had it.
        guard case .commit(let lost) = h.core.decide(.text("a", "m2"), h.context) else {
            Issue.record("expected a commit")
            return
        }
        #expect(lost.records.map(\.seq) == [2] && h.thread("t1").lastSeq == 2)
        // What the store holds: the thread's saved view (seq 0) and its one record after it.
        let stored = ChatThread(ThreadRow(id: "t1", no: 1, coachID: "k", clientID: "a", createdAt: H.start - H.day, active: true))
        h.core.reset([stored], tail: h.log.records)
        #expect(h.thread("t1").lastSeq == 1 && h.thread("t1").committedSeq == 1)
        #expect(!h.core.quotas.isLoaded("a") && h.core.sentEver["a"] == nil)
        _ = h.takeReads()
        let again = try h.commit(.text("a", "m2"))
        #expect(again.records.map(\.seq) == [2])
        let month = QuotaMonth(at: H.start, in: TimeZoneRules.zone("UTC"))
        #expect(h.takeReads() == [.counts(userID: "a", threadNos: [1], since: month.startsAt, ever: true, generation: h.core.countGenerations["a", default: 0]),
                                  .window(threadID: "t1", threadNo: 1, limit: ChatState.windowSize)])
        #expect(h.core.sentEver["a"] == 2)
    }
}

extension DashboardCommand {
    static func range(from: Int64, to: Int64) -> DashboardCommand {
        var command = DashboardCommand()
        command.from = from
        command.to = to
        return command
    }
}
