import Foundation
import SpotterClient

import Testing
import TestSupport

/// kill -9 of the server in the middle of a burst of 200 sends: every send is acknowledged once, in order, and the
/// peer's app sees each message exactly once. (Mutation-checked: without the outbox's resend after a reconnect, or
/// without the drop of events at or below the cursor, this fails.)
@Suite("SpotterClient: kill -9", .serialized)
struct ClientCrashTests {
    @Test func kill9MidBurstEverySendStoredOnceInOrder() async throws {
        let server = try LiveServer()
        defer { server.cleanup() }
        let (coach, client, thread) = try server.pair()
        let coachSide = server.client(coach)
        let clientSide = server.client(client)
        defer { Task { await coachSide.close(); await clientSide.close() } }
        let (coachHeard, clientHeard) = try await connectRecorded(coachSide, clientSide)

        let total = 200, frozenAt = 150
        let results = Locked<[Int: Message]>([:])
        let failures = Locked<[String]>([])
        var waits: [Task<Void, Never>] = []
        func sendOne(_ index: Int) async {
            let id = await clientSide.enqueue(.text("burst \(index)"), to: thread)
            waits.append(Task {
                do {
                    let message = try await clientSide.acknowledgement(of: id)
                    results.withLock { $0[index] = message }
                } catch {
                    failures.withLock { $0.append("\(index): \(error)") }
                }
            })
        }
        for index in 0..<frozenAt { await sendOne(index) }
        // Some acknowledged, many not yet. The server freezes (SIGSTOP), so the next sends are surely on the wire or
        // queued with no answer, then dies without a word (kill -9).
        try await eventually(30, "the first acknowledgements") { results.withLock { $0.count } >= 40 }
        server.signal(SIGSTOP)
        for index in frozenAt..<total { await sendOne(index) }
        try await Task.sleep(for: .milliseconds(200))
        server.kill9()
        let ackedBeforeKill = results.withLock { $0.count }
        #expect(ackedBeforeKill >= 40 && ackedBeforeKill < total, "acknowledged before the kill: \(ackedBeforeKill)")
        try await Task.sleep(for: .milliseconds(300))
        try server.start()
        try await eventually(90, "all \(total) acknowledged") { results.withLock { $0.count } + failures.withLock { $0.count } == total }
        for wait in waits { await wait.value }

        #expect(failures.withLock { $0 }.isEmpty)
        // Each send resolved once, with its own message, in the order it was queued: seq i + 1, text "burst i".
        let byIndex = results.withLock { $0 }
        #expect((0..<total).map { byIndex[$0]?.seq } == (1...total).map { Int64($0) })
        #expect((0..<total).map { byIndex[$0]?.text } == (0..<total).map { "burst \($0)" })
        // One acknowledgement event per message, never two.
        let acknowledged = clientHeard.acknowledged.map(\.clientMessageId)
        #expect(acknowledged.count == total)
        #expect(Set(acknowledged).count == total)
        // The coach's app saw each message exactly once (live, or replayed by the resume after the restart).
        try await eventually(30, "the coach to see all \(total)") { Set(coachHeard.messages.map(\.message.seq)).count == total }
        try await Task.sleep(for: .milliseconds(300))
        let seen = coachHeard.messages.map(\.message.seq)
        #expect(seen.count == total, "duplicates reached the coach's app: \(seen.count - total)")
        #expect(seen == Array(1...Int64(total)), "the coach saw them out of order")
        let cursors = coachHeard.cursors
        #expect(cursors == cursors.sorted() && Set(cursors).count == cursors.count, "cursors only grow")
        #expect(await clientSide.unacknowledged.isEmpty)
        #expect(!clientHeard.disconnects.isEmpty && !coachHeard.disconnects.isEmpty, "both sides lost the server and came back")
        // The history holds the 200 once each.
        var stored: [Message] = []
        var before: Int64?
        repeat {
            let page = try await coachSide.history(threadId: thread, beforeSeq: before, limit: 100)
            stored += page.messages
            before = page.hasMore ? page.messages.last?.seq : nil
        } while before != nil
        #expect(stored.count == total)
        #expect(Set(stored.map(\.clientMessageId)).count == total)
    }
}
