import Foundation
import GRDB
import Testing
@testable import SpotterStore

/// Messages, receipts, summaries and presence against an in-memory store.
@Suite("Messaging: messages, receipts and summaries")
struct MessagingTests {
    let store: Store
    let accounts: AccountStore

    /// Coaches k1 (Khalid), k2 (Amal); clients c1 (Mona), c2 (Fahad), c3 (Lina), c4 (Sara).
    /// c1, c2, c3 are linked to k1 with threads t1, t2, t3 (created at 1, 2, 3); c4 is not linked.
    init() throws {
        store = try Store.inMemory()
        accounts = AccountStore(store)
        for (id, name) in [("k1", "Khalid"), ("k2", "Amal")] {
            try accounts.createUser(id: id, role: "coach", fullName: name, email: "\(id)@example.com", phone: nil,
                                    passwordHash: nil, now: 0)
        }
        for (id, name) in [("c1", "Mona"), ("c2", "Fahad"), ("c3", "Lina"), ("c4", "Sara")] {
            try accounts.createUser(id: id, role: "client", fullName: name, email: "\(id)@example.com", phone: nil,
                                    passwordHash: nil, now: 0)
        }
        try accounts.createUser(id: "admin", role: "admin", fullName: "Admin", email: "admin@example.com", phone: nil,
                                passwordHash: nil, now: 0)
        try accounts.createLink(clientID: "c1", coachID: "k1", threadID: "t1", now: 1)
        try accounts.createLink(clientID: "c2", coachID: "k1", threadID: "t2", now: 2)
        try accounts.createLink(clientID: "c3", coachID: "k1", threadID: "t3", now: 3)
    }

    private func write<T>(_ body: (Database) throws -> T) throws -> T {
        try store.writer.write { db in try body(db) }
    }

    private func read<T>(_ body: (Database) throws -> T) throws -> T {
        try store.writer.read { db in try body(db) }
    }

    @discardableResult
    private func send(_ thread: String, from sender: String?, _ id: String, body: String? = nil, at time: Int64 = 10,
                      kind: String = "text") throws -> InsertOutcome {
        let text = body ?? "body \(id)"
        return try write { db throws in
            try Messaging.insertMessage(db, NewMessage(threadID: thread, senderID: sender, clientMessageID: id,
                                                       kind: kind, body: text, createdAt: time,
                                                       preview: String(text.prefix(20))))
        }
    }

    private func messageCount(_ thread: String? = nil) throws -> Int {
        try read { db throws in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM message WHERE ?1 IS NULL OR threadId = ?1",
                             arguments: [thread]) ?? -1
        }
    }

    // MARK: Schema

    @Test("the v3-messaging migration is applied after v2-accounts")
    func migrationApplied() throws {
        #expect(try store.appliedMigrations() == ["v1-serverRun", "v2-accounts", "v3-messaging", "v4-revocations"])
        let thread = try read { db in try Messaging.thread(db, id: "t1") }
        #expect(thread == ThreadRecord(id: "t1", coachID: "k1", clientID: "c1", lastSeq: 0, lastMessageAt: nil,
                                       lastPreview: nil, lastSenderID: nil))
        #expect(try read { db in try Messaging.thread(db, id: "nope") } == nil)
    }

    @Test("an unknown message kind is refused by the schema")
    func kindChecked() throws {
        #expect(throws: (any Error).self) { try send("t1", from: "c1", "m1", kind: "video") }
        #expect(try messageCount() == 0)
        #expect(try read { db in try Messaging.thread(db, id: "t1") }?.lastSeq == 0)
    }

    // MARK: insertMessage

    @Test("seq is gapless per thread and independent across threads")
    func gaplessSeq() throws {
        var seqs: [String: [Int64]] = [:]
        for i in 0..<12 {
            let thread = ["t1", "t2", "t1", "t3"][i % 4]
            let sender = i % 3 == 0 ? "k1" : (thread == "t1" ? "c1" : thread == "t2" ? "c2" : "c3")
            guard case .inserted(let message) = try send(thread, from: sender, "m\(i)") else {
                Issue.record("message \(i) was not inserted")
                continue
            }
            seqs[thread, default: []].append(message.seq)
        }
        #expect(seqs["t1"] == [1, 2, 3, 4, 5, 6])
        #expect(seqs["t2"] == [1, 2, 3])
        #expect(seqs["t3"] == [1, 2, 3])
        let stored = try read { db in try Row.fetchAll(db, sql: "SELECT threadId, seq FROM message ORDER BY threadId, seq") }
        #expect(stored.map { "\($0["threadId"] as String)#\($0["seq"] as Int64)" } ==
                (1...6).map { "t1#\($0)" } + (1...3).map { "t2#\($0)" } + (1...3).map { "t3#\($0)" })
        #expect(try read { db in try Messaging.thread(db, id: "t1") }?.lastSeq == 6)
        #expect(try read { db in try Messaging.thread(db, id: "t2") }?.lastSeq == 3)
    }

    @Test("insertMessage stores every field and returns them")
    func storedFields() throws {
        let outcome = try send("t1", from: "c1", "abc", body: "hello coach", at: 42)
        let expected = StoredMessage(threadID: "t1", seq: 1, senderID: "c1", clientMessageID: "abc", kind: "text",
                                     body: "hello coach", createdAt: 42)
        #expect(outcome == .inserted(expected))
        #expect(outcome.message == expected)
        #expect(try read { db in try Messaging.history(db, threadID: "t1", beforeSeq: nil, limit: 10) } == [expected])
    }

    @Test("a duplicate clientMessageId returns the original and changes nothing")
    func duplicate() throws {
        let original = try send("t1", from: "c1", "same", body: "first", at: 10)
        try send("t1", from: "k1", "other", body: "reply", at: 11)
        let again = try send("t1", from: "c1", "same", body: "second try", at: 99)
        guard case .inserted(let first) = original else { Issue.record("not inserted"); return }
        #expect(again == .duplicate(first))
        #expect(try messageCount() == 2)
        let thread = try read { db in try Messaging.thread(db, id: "t1") }
        #expect(thread == ThreadRecord(id: "t1", coachID: "k1", clientID: "c1", lastSeq: 2, lastMessageAt: 11,
                                       lastPreview: "reply", lastSenderID: "k1"))
        // The same id from another sender, or in another thread, is a different message.
        #expect(try send("t1", from: "k1", "same").message.seq == 3)
        #expect(try send("t2", from: "c2", "same").message.seq == 1)
        #expect(try messageCount() == 4)
    }

    @Test("system messages (no sender) are idempotent too and move no receipt")
    func systemMessages() throws {
        let first = try send("t1", from: nil, "sys-1", body: "Coach joined", kind: "system")
        #expect(first.message.senderID == nil)
        #expect(try send("t1", from: nil, "sys-1", body: "Coach joined again", kind: "system") == .duplicate(first.message))
        #expect(try messageCount() == 1)
        #expect(try read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM receipt") } == 0)
        #expect(try read { db in try Messaging.thread(db, id: "t1") }?.lastSenderID == nil)
    }

    @Test("the sender's receipt moves up to its own message; the peer's does not")
    func senderReceipt() throws {
        try send("t1", from: "c1", "a")
        try send("t1", from: "c1", "b")
        try send("t1", from: "k1", "c")
        try read { db throws in
            #expect(try Messaging.receipt(db, threadID: "t1", userID: "c1")
                == ReceiptRecord(threadID: "t1", userID: "c1", deliveredSeq: 2, readSeq: 2))
            #expect(try Messaging.receipt(db, threadID: "t1", userID: "k1")
                == ReceiptRecord(threadID: "t1", userID: "k1", deliveredSeq: 3, readSeq: 3))
        }
        // A sender who is not a participant gets no receipt row.
        try send("t1", from: "admin", "d")
        #expect(try read { db throws in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM receipt WHERE userId = 'admin'")
        } == 0)
    }

    @Test("preview, lastMessageAt and lastSenderId follow the newest message")
    func threadPreview() throws {
        try send("t2", from: "c2", "a", body: "Did my workout", at: 100)
        #expect(try read { db in try Messaging.thread(db, id: "t2") } == ThreadRecord(
            id: "t2", coachID: "k1", clientID: "c2", lastSeq: 1, lastMessageAt: 100, lastPreview: "Did my workout",
            lastSenderID: "c2"))
        try send("t2", from: "k1", "b", body: "Great job, keep going!", at: 160)
        #expect(try read { db in try Messaging.thread(db, id: "t2") } == ThreadRecord(
            id: "t2", coachID: "k1", clientID: "c2", lastSeq: 2, lastMessageAt: 160,
            lastPreview: "Great job, keep goin", lastSenderID: "k1"))
    }

    @Test("a message to an unknown thread is refused and stores nothing")
    func unknownThread() throws {
        #expect(throws: MessagingError.threadNotFound("ghost")) { try send("ghost", from: "c1", "a") }
        #expect(try messageCount() == 0)
    }

    @Test("a failed insert inside a transaction leaves the seq for the next message")
    func rolledBackSeq() throws {
        try send("t1", from: "c1", "a")
        // The whole transaction is rolled back: the seq it took must not be lost.
        #expect(throws: (any Error).self) {
            try write { db throws in
                _ = try Messaging.insertMessage(db, NewMessage(threadID: "t1", senderID: "c1", clientMessageID: "b",
                                                               kind: "text", body: "x", createdAt: 1, preview: "x"))
                throw MessagingError.threadNotFound("abort")
            }
        }
        #expect(try send("t1", from: "c1", "c").message.seq == 2)
    }

    // MARK: history

    @Test("history pages backwards, newest first")
    func historyPaging() throws {
        for i in 1...25 { try send("t1", from: i % 2 == 0 ? "k1" : "c1", "m\(i)", at: Int64(i)) }
        try send("t2", from: "c2", "elsewhere")
        try read { db throws in
            let page1 = try Messaging.history(db, threadID: "t1", beforeSeq: nil, limit: 10)
            #expect(page1.map(\.seq) == Array((16...25).reversed()))
            #expect(page1.first?.clientMessageID == "m25")
            let page2 = try Messaging.history(db, threadID: "t1", beforeSeq: page1.last?.seq, limit: 10)
            #expect(page2.map(\.seq) == Array((6...15).reversed()))
            let page3 = try Messaging.history(db, threadID: "t1", beforeSeq: page2.last?.seq, limit: 10)
            #expect(page3.map(\.seq) == [5, 4, 3, 2, 1])
            #expect(try Messaging.history(db, threadID: "t1", beforeSeq: 1, limit: 10) == [])
            #expect(try Messaging.history(db, threadID: "t1", beforeSeq: 100, limit: 3).map(\.seq) == [25, 24, 23])
            #expect(try Messaging.history(db, threadID: "t1", beforeSeq: nil, limit: 0) == [])
            #expect(try Messaging.history(db, threadID: "t2", beforeSeq: nil, limit: 10).map(\.clientMessageID) == ["elsewhere"])
            #expect(try Messaging.history(db, threadID: "t3", beforeSeq: nil, limit: 10) == [])
        }
    }

    // MARK: Receipts

    @Test("updateReceipt raises, never lowers, caps at lastSeq and reports changes")
    func receiptRules() throws {
        for i in 1...5 { try send("t1", from: "k1", "m\(i)") }
        func update(delivered: Int64?, read: Int64?) throws -> (ReceiptRecord, Bool) {
            let result = try write { db throws in
                try Messaging.updateReceipt(db, threadID: "t1", userID: "c1", deliveredSeq: delivered, readSeq: read)
            }
            return (result.receipt, result.changed)
        }
        func receipt(_ delivered: Int64, _ read: Int64) -> ReceiptRecord {
            ReceiptRecord(threadID: "t1", userID: "c1", deliveredSeq: delivered, readSeq: read)
        }
        #expect(try read { db in try Messaging.receipt(db, threadID: "t1", userID: "c1") } == receipt(0, 0))
        #expect(try update(delivered: 2, read: nil) == (receipt(2, 0), true))
        #expect(try update(delivered: 2, read: nil) == (receipt(2, 0), false))
        #expect(try update(delivered: 1, read: nil) == (receipt(2, 0), false))      // never lowers
        #expect(try update(delivered: nil, read: 3) == (receipt(3, 3), true))       // read raises delivered
        #expect(try update(delivered: 1, read: 1) == (receipt(3, 3), false))
        #expect(try update(delivered: 4, read: nil) == (receipt(4, 3), true))
        #expect(try update(delivered: 99, read: 99) == (receipt(5, 5), true))       // capped at lastSeq
        #expect(try update(delivered: 99, read: nil) == (receipt(5, 5), false))
        #expect(try update(delivered: nil, read: nil) == (receipt(5, 5), false))
        #expect(try read { db in try Messaging.receipt(db, threadID: "t1", userID: "c1") } == receipt(5, 5))
        // The coach's receipt (moved by its own messages) is untouched.
        #expect(try read { db in try Messaging.receipt(db, threadID: "t1", userID: "k1") }.readSeq == 5)
        #expect(throws: MessagingError.threadNotFound("ghost")) {
            try write { db in try Messaging.updateReceipt(db, threadID: "ghost", userID: "c1", deliveredSeq: 1, readSeq: nil) }
        }
    }

    @Test("on an empty thread every receipt update is capped at 0")
    func receiptEmptyThread() throws {
        let result = try write { db throws in
            try Messaging.updateReceipt(db, threadID: "t3", userID: "c3", deliveredSeq: 7, readSeq: 7)
        }
        #expect(result.receipt == ReceiptRecord(threadID: "t3", userID: "c3", deliveredSeq: 0, readSeq: 0))
        #expect(result.changed == false)
    }

    // MARK: Summaries and unread

    @Test("summaries: most recent first, then empty threads by creation; unread and receipts per side")
    func summariesForCoach() throws {
        // c4 gets a coach later: its empty thread t4 is newer than the empty t3.
        try accounts.createLink(clientID: "c4", coachID: "k1", threadID: "t4", now: 4)
        try send("t1", from: "c1", "a", at: 100)
        try send("t1", from: "c1", "b", at: 101)
        try send("t1", from: "c1", "c", at: 102)
        try send("t2", from: "c2", "d", at: 200)
        try send("t2", from: "k1", "e", at: 150)   // lastMessageAt follows the newest insert
        try send("t2", from: "c2", "f", at: 210)
        try write { db throws in
            _ = try Messaging.updateReceipt(db, threadID: "t1", userID: "k1", deliveredSeq: 3, readSeq: 1)
            _ = try Messaging.updateReceipt(db, threadID: "t2", userID: "c2", deliveredSeq: nil, readSeq: 3)
            try Messaging.setLastSeen(db, userID: "c2", at: 555)
        }
        let summaries = try read { db in try Messaging.summaries(db, userID: "k1") }
        #expect(summaries.map(\.thread.id) == ["t2", "t1", "t4", "t3"])
        #expect(summaries.map(\.peerID) == ["c2", "c1", "c4", "c3"])
        #expect(summaries.map(\.peerName) == ["Fahad", "Mona", "Sara", "Lina"])
        #expect(summaries.map(\.peerLastSeenAt) == [555, nil, nil, nil])
        #expect(summaries.map(\.unread) == [1, 2, 0, 0])
        #expect(summaries.map(\.readSeq) == [2, 1, 0, 0])
        #expect(summaries.map(\.deliveredSeq) == [2, 3, 0, 0])
        #expect(summaries.map(\.peerReadSeq) == [3, 3, 0, 0])
        #expect(summaries.map(\.peerDeliveredSeq) == [3, 3, 0, 0])
        #expect(summaries[0].thread == ThreadRecord(id: "t2", coachID: "k1", clientID: "c2", lastSeq: 3,
                                                    lastMessageAt: 210, lastPreview: "body f", lastSenderID: "c2"))
        try read { db throws in
            #expect(try Messaging.totalUnread(db, userID: "k1") == 3)
            #expect(try Messaging.totalUnread(db, userID: "c1") == 0)
            #expect(try Messaging.totalUnread(db, userID: "c2") == 0)
            #expect(try Messaging.totalUnread(db, userID: "c4") == 0)
            #expect(try Messaging.totalUnread(db, userID: "nobody") == 0)
        }

        // The client sees the coach as its peer.
        try send("t1", from: "k1", "g", at: 300)
        let client = try read { db in try Messaging.summaries(db, userID: "c1") }
        #expect(client.count == 1)
        #expect(client.first?.peerID == "k1")
        #expect(client.first?.peerName == "Khalid")
        #expect(client.first?.unread == 1)
        #expect(client.first?.peerReadSeq == 4)       // the coach read what it wrote
        #expect(client.first?.peerDeliveredSeq == 4)
        #expect(try read { db in try Messaging.totalUnread(db, userID: "c1") } == 1)
        #expect(try read { db in try Messaging.summaries(db, userID: "c1") }.first?.thread.lastMessageAt == 300)
        #expect(try read { db in try Messaging.summaries(db, userID: "k1") }.map(\.thread.id) == ["t1", "t2", "t4", "t3"])
        #expect(try read { db in try Messaging.summaries(db, userID: "k2") } == [])
    }

    @Test("threads(userID:) lists the user's threads as coach or client")
    func threadsOfUser() throws {
        try read { db throws in
            #expect(try Messaging.threads(db, userID: "k1").map(\.id) == ["t1", "t2", "t3"])
            #expect(try Messaging.threads(db, userID: "c2").map(\.id) == ["t2"])
            #expect(try Messaging.threads(db, userID: "k2") == [])
        }
    }

    // MARK: Active threads

    @Test("after a coach change the old thread is readable but no longer active")
    func activeAfterCoachChange() throws {
        try send("t1", from: "c1", "before")
        let old = try #require(try read { db in try Messaging.thread(db, id: "t1") })
        #expect(try read { db in try Messaging.isActive(db, thread: old) })
        try accounts.createChangeRequest(id: "r1", clientID: "c1", toCoachID: "k2", reason: nil, now: 5)
        try accounts.decideChangeRequest(id: "r1", approve: true, adminID: "admin", threadID: "t9", now: 6)
        let new = try #require(try read { db in try Messaging.thread(db, id: "t9") })
        try read { db throws in
            #expect(try Messaging.isActive(db, thread: old) == false)
            #expect(try Messaging.isActive(db, thread: new))
            #expect(try Messaging.threads(db, userID: "c1").map(\.id) == ["t1", "t9"])
            #expect(try Messaging.history(db, threadID: "t1", beforeSeq: nil, limit: 10).map(\.clientMessageID) == ["before"])
        }
        // A rejected request changes nothing.
        try accounts.createChangeRequest(id: "r2", clientID: "c2", toCoachID: "k2", reason: nil, now: 7)
        try accounts.decideChangeRequest(id: "r2", approve: false, adminID: "admin", threadID: "t10", now: 8)
        let t2 = try #require(try read { db in try Messaging.thread(db, id: "t2") })
        #expect(try read { db in try Messaging.isActive(db, thread: t2) })
    }

    // MARK: Presence

    @Test("setLastSeen records the time on the user")
    func lastSeen() throws {
        try write { db in try Messaging.setLastSeen(db, userID: "c1", at: 1_700_000_000) }
        #expect(try read { db throws in
            try Int64.fetchOne(db, sql: #"SELECT lastSeenAt FROM "user" WHERE id = 'c1'"#)
        } == 1_700_000_000)
        #expect(try read { db throws in
            try Int64.fetchOne(db, sql: #"SELECT lastSeenAt FROM "user" WHERE id = 'c2'"#)
        } == nil)
    }
}
