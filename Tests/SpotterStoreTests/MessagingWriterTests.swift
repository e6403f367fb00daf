import Foundation
import GRDB
import Testing
@testable import SpotterStore

/// The writer's write-through cache: whatever it answers from memory must be what SQLite says.
@Suite("Messaging: the writer's cache")
struct MessagingWriterTests {
    let store: Store

    /// Coach k1 with clients c1, c2 (threads t1, t2); coach k2 with client c3 (thread t3).
    init() throws {
        store = try Store.inMemory()
        let accounts = AccountStore(store)
        for id in ["k1", "k2"] {
            try accounts.createUser(id: id, role: "coach", fullName: id, email: "\(id)@example.com", phone: nil,
                                    passwordHash: nil, now: 0)
        }
        for id in ["c1", "c2", "c3"] {
            try accounts.createUser(id: id, role: "client", fullName: id, email: "\(id)@example.com", phone: nil,
                                    passwordHash: nil, now: 0)
        }
        try accounts.createLink(clientID: "c1", coachID: "k1", threadID: "t1", now: 1)
        try accounts.createLink(clientID: "c2", coachID: "k1", threadID: "t2", now: 2)
        try accounts.createLink(clientID: "c3", coachID: "k2", threadID: "t3", now: 3)
    }

    private let participants = ["t1": ["k1", "c1"], "t2": ["k1", "c2"], "t3": ["k2", "c3"]]

    /// Every cached answer equals a fresh read of the same connection.
    private func expectMatchesDatabase(_ cache: MessagingWriter, _ db: Database, _ step: Int) throws {
        for (threadID, users) in participants {
            #expect(try cache.thread(db, id: threadID) == Messaging.thread(db, id: threadID), "step \(step)")
            for user in users {
                #expect(try cache.receipt(db, threadID: threadID, userID: user)
                        == Messaging.receipt(db, threadID: threadID, userID: user), "step \(step)")
            }
        }
        for user in ["k1", "k2", "c1", "c2", "c3"] {
            #expect(try cache.totalUnread(db, userID: user) == Messaging.totalUnread(db, userID: user),
                    "step \(step) total of \(user)")
            #expect(try cache.latestCursor(db, userID: user) == Messaging.latestCursor(db, userID: user),
                    "step \(step) cursor of \(user)")
        }
    }

    @Test("after 600 random sends, receipts and appends every cached value matches SQLite", arguments: [1, 7, 200_000])
    func randomOperationsStayConsistent(capacity: Int) throws {
        var random = SystemRandomNumberGenerator()
        let cache = MessagingWriter(capacity: capacity)
        try store.writer.write { db in
            // Warm totals and receipts so the incremental paths (not just reloads) are checked.
            try expectMatchesDatabase(cache, db, -1)
            for step in 0..<600 {
                let threadID = ["t1", "t2", "t3"].randomElement(using: &random)!
                let user = participants[threadID]!.randomElement(using: &random)!
                switch Int.random(in: 0..<10, using: &random) {
                case 0..<5:
                    // Now and then a retry of an earlier id, or a system message.
                    let id = Bool.random(using: &random) ? "m\(step)" : "m\(Int.random(in: 0...max(step, 0), using: &random))"
                    let sender: String? = Int.random(in: 0..<8, using: &random) == 0 ? nil : user
                    let outcome = try cache.insertMessage(db, NewMessage(
                        threadID: threadID, senderID: sender, clientMessageID: id, kind: sender == nil ? "system" : "text",
                        body: "b\(step)", createdAt: Int64(step), preview: "b\(step)"))
                    let stored = try Messaging.message(db, threadID: threadID, senderID: sender, clientMessageID: id)
                    #expect(stored == outcome.message)
                case 5..<8:
                    let lastSeq = try Messaging.thread(db, id: threadID)!.lastSeq
                    let seq = Int64.random(in: 0...(lastSeq + 2), using: &random)
                    let read = Bool.random(using: &random)
                    _ = try cache.updateReceipt(db, threadID: threadID, userID: user, deliveredSeq: read ? nil : seq,
                                                readSeq: read ? seq : nil)
                default:
                    let before = try Messaging.latestCursor(db, userID: user)
                    #expect(try cache.appendEvent(db, userID: user, kind: "k", payload: "p", now: 0) == before + 1)
                }
                try expectMatchesDatabase(cache, db, step)
            }
            if capacity == 1 { #expect(cache.cachedEntries <= 4) }
        }
    }

    @Test("a retry is found by the idempotency index and moves nothing")
    func retryChangesNothing() throws {
        let cache = MessagingWriter()
        try store.writer.write { db in
            let first = try cache.insertMessage(db, NewMessage(threadID: "t1", senderID: "c1", clientMessageID: "x",
                                                               kind: "text", body: "hi", createdAt: 5, preview: "hi"))
            _ = try cache.totalUnread(db, userID: "k1")
            let again = try cache.insertMessage(db, NewMessage(threadID: "t1", senderID: "c1", clientMessageID: "x",
                                                               kind: "text", body: "other", createdAt: 9, preview: "o"))
            #expect(again == .duplicate(first.message))
            #expect(try cache.thread(db, id: "t1")?.lastSeq == 1)
            #expect(try cache.totalUnread(db, userID: "k1") == 1)
            try expectMatchesDatabase(cache, db, 0)
        }
    }

    @Test("appendEvents numbers each user's events consecutively, in the order given, in one statement")
    func appendEventsInterleaved() throws {
        let cache = MessagingWriter()
        try store.writer.write { db in
            _ = try cache.appendEvent(db, userID: "k1", kind: "k", payload: "first", now: 1)
            let cursors = try cache.appendEvents(db, [
                NewEvent(userID: "c1", kind: "message", payload: "a"), NewEvent(userID: "k1", kind: "message", payload: "b"),
                NewEvent(userID: "c1", kind: "unread", payload: "c"), NewEvent(userID: "k1", kind: "receipt", payload: ""),
                NewEvent(userID: "c2", kind: "message", payload: "d/e"),
            ], now: 7)
            #expect(cursors == [1, 2, 2, 3, 1])
            let rows = try Row.fetchAll(db, sql: "SELECT userId, cursor, kind, payload, createdAt FROM userEvent ORDER BY userId, cursor")
            #expect(rows.map { "\($0["userId"] as String)#\($0["cursor"] as Int64) \($0["kind"] as String) \($0["payload"] as String)" } == [
                "c1#1 message a", "c1#2 unread c", "c2#1 message d/e", "k1#1 k first", "k1#2 message b", "k1#3 receipt "])
            // An empty text is stored as '', not NULL; an empty list appends nothing.
            #expect(try String?.fetchOne(db, sql: "SELECT payload FROM userEvent WHERE userId = 'k1' AND cursor = 3") == "")
            #expect(try cache.appendEvents(db, [], now: 8) == [])
            try expectMatchesDatabase(cache, db, 0)
        }
    }

    @Test("a job that throws after writing drops the cache, so the next job gets the right seq and cursor")
    func rollbackInvalidates() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("spotter-mw-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let fileStore = try Store.open(directory: directory)
        let accounts = AccountStore(fileStore)
        try accounts.createUser(id: "k1", role: "coach", fullName: "K", email: "k@example.com", phone: nil,
                                passwordHash: nil, now: 0)
        try accounts.createUser(id: "c1", role: "client", fullName: "C", email: "c@example.com", phone: nil,
                                passwordHash: nil, now: 0)
        try accounts.createLink(clientID: "c1", coachID: "k1", threadID: "t1", now: 1)

        struct Refused: Error {}
        let cache = MessagingWriter()
        let writer = StoreWriter(store: fileStore, onRollback: { cache.invalidate() })
        defer { writer.stop() }
        let results = Results()
        func send(_ id: String, fail: Bool) {
            writer.submit({ db -> Int64 in
                let seq = try cache.insertMessage(db, NewMessage(threadID: "t1", senderID: "c1", clientMessageID: id,
                                                                 kind: "text", body: id, createdAt: 1, preview: id)).message.seq
                _ = try cache.appendEvent(db, userID: "k1", kind: "message", payload: id, now: 1)
                if fail { throw Refused() }
                return seq
            }, completion: { results.add(id, try? $0.get()) })
        }
        send("a", fail: false)
        send("b", fail: true)
        send("c", fail: false)
        #expect(results.wait(for: 3))
        #expect(results.values == ["a": 1, "b": nil, "c": 2])
        try fileStore.writer.read { db throws in
            #expect(try Messaging.latestCursor(db, userID: "k1") == 2)
            #expect(try Messaging.events(db, userID: "k1", after: 0, limit: 10) == .events([
                UserEventRecord(userID: "k1", cursor: 1, kind: "message", payload: "a", createdAt: 1),
                UserEventRecord(userID: "k1", cursor: 2, kind: "message", payload: "c", createdAt: 1),
            ]))
        }
    }
}

/// Completion results by key, waited for from the test thread.
private final class Results: @unchecked Sendable {
    private let condition = NSCondition()
    private var stored: [String: Int64?] = [:]

    func add(_ key: String, _ value: Int64?) {
        condition.lock()
        stored[key] = value
        condition.broadcast()
        condition.unlock()
    }

    func wait(for count: Int) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date().addingTimeInterval(10)
        while stored.count < count {
            if !condition.wait(until: deadline) { return false }
        }
        return true
    }

    var values: [String: Int64?] {
        condition.lock()
        defer { condition.unlock() }
        return stored
    }
}
