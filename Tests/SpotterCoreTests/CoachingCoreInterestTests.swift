import Foundation
import Testing
@testable import SpotterCore
import SpotterProtocol

private typealias H = CoreHarness

/// Interest by thread (cluster, issue 33 item 4): a process passes over another process's chat records of a thread
/// with no participant of its own, then brings the thread up to date from the store (`refresh`): the result is the
/// state of a process that applied everything.
@Suite("CoachingCore: a thread passed over, then refreshed")
struct CoachingCoreInterestTests {
    @Test func onlyChatRecordsMayBePassedOver() {
        let message = ChatRecord(threadNo: 1, side: .client, seq: 1, at: 0, .message(MessageRecord(kind: .text, clientMessageID: "m", body: "x")))
        #expect(message.content.concernsOnlyItsThread)
        #expect(!ChatRecord(threadNo: 1, side: .client, seq: 1, at: 0, .link(LinkChangeRecord(active: false))).content.concernsOnlyItsThread)
    }

    @Test func aRefreshedThreadEqualsOneThatAppliedEverything() throws {
        let log = FakeLog()
        let writer = CoreHarness(log: log)
        let everything = CoreHarness(log: log)   // applies every record
        let interested = CoreHarness(log: log)   // passes thread 1's over after the first
        let meal = #"{"meal_type":"lunch"}"#
        let first = try writer.commit(.text("a", "m1", "hello")).records
        _ = everything.core.apply(first, origin: .elsewhere, everything.context)
        _ = interested.core.apply(first, origin: .elsewhere, interested.context)
        // Interest in the client's counts: read once before the thread is let go.
        var passed: [ChatRecord] = []
        for (index, kind) in [MessageKind.text, .mealLog, .text].enumerated() {
            writer.now += H.hour
            let records = try writer.commit(.text("a", "p\(index)", kind == .mealLog ? meal : "x", kind: kind)).records
            _ = everything.core.apply(records, origin: .elsewhere, everything.context)
            for record in records { interested.core.passedOver(record) }
            passed += records
        }
        let reply = try writer.commit(.text("k", "r1", "reply")).records
        _ = everything.core.apply(reply, origin: .elsewhere, everything.context)
        passed += reply
        let stale = interested.core.chat.thread(no: 1)!
        #expect(stale.lastSeq == 1 && everything.core.chat.thread(no: 1)!.lastSeq == 5)

        // The store's view of the thread as it was at the first record, and everything after it as the tail (the
        // checkpoint's mark below the first passed-over record), the first record again included.
        let stored = ChatThread(ThreadRow(id: "t1", no: 1, coachID: "k", clientID: "a", createdAt: H.start - H.day, active: true))
        interested.core.refresh([stored], tail: first + passed)
        let here = interested.core.chat.thread(no: 1)!, there = everything.core.chat.thread(no: 1)!
        #expect(here.lastSeq == there.lastSeq && here.lastPos == there.lastPos && here.lastPreview == there.lastPreview)
        #expect(here.unread(.coach) == there.unread(.coach) && here.unread(.client) == there.unread(.client))
        #expect(interested.core.chat.totalUnread("k") == everything.core.chat.totalUnread("k"))
        // The meal log is timed once, like a process that applied it.
        #expect(interested.core.mealTimes == everything.core.mealTimes && interested.core.mealTimes[1]?.count == 1)
        // Refreshing again from the same snapshot changes nothing.
        interested.core.refresh([stored], tail: first + passed)
        #expect(interested.core.mealTimes[1]?.count == 1 && interested.core.chat.thread(no: 1)!.lastSeq == 5)
        // The next send here takes the thread's next seq (a stale view would give 2, which the store refuses).
        let next = try interested.commit(.text("k", "r2", "next")).records
        #expect(next.first?.seq == 6)
    }
}
