import GRDB
import Testing
@testable import SpotterStore

/// The per-user ordered event log: cursors, paging, pruning and expiry.
@Suite("Messaging: user event log")
struct MessagingEventTests {
    let store: Store

    init() throws {
        store = try Store.inMemory()
    }

    private func write<T>(_ body: (Database) throws -> T) throws -> T {
        try store.writer.write { db in try body(db) }
    }

    @discardableResult
    private func append(_ user: String, _ payload: String, at time: Int64) throws -> Int64 {
        try write { db in try Messaging.appendEvent(db, userID: user, kind: "message", payload: payload, now: time) }
    }

    private func page(_ user: String, after cursor: Int64, limit: Int = 100) throws -> EventPage {
        try write { db in try Messaging.events(db, userID: user, after: cursor, limit: limit) }
    }

    private func cursors(_ page: EventPage) -> [Int64]? {
        if case .events(let events) = page { return events.map(\.cursor) }
        return nil
    }

    @Test("appendEvent hands out gapless cursors per user")
    func gaplessCursors() throws {
        var got: [String: [Int64]] = [:]
        for i in 0..<20 {
            let user = ["u1", "u2", "u1", "u3", "u1"][i % 5]
            got[user, default: []].append(try append(user, "p\(i)", at: Int64(i)))
        }
        #expect(got["u1"] == Array(1...12))
        #expect(got["u2"] == Array(1...4))
        #expect(got["u3"] == Array(1...4))
        try write { db throws in
            #expect(try Messaging.latestCursor(db, userID: "u1") == 12)
            #expect(try Messaging.latestCursor(db, userID: "u2") == 4)
            #expect(try Messaging.latestCursor(db, userID: "nobody") == 0)
        }
    }

    @Test("a rolled-back append does not burn its cursor")
    func rolledBackAppend() throws {
        try append("u1", "a", at: 1)
        #expect(throws: (any Error).self) {
            try write { db throws in
                try Messaging.appendEvent(db, userID: "u1", kind: "k", payload: "lost", now: 2)
                throw MessagingError.threadNotFound("abort")
            }
        }
        #expect(try append("u1", "b", at: 3) == 2)
    }

    @Test("events(after:) pages forward in cursor order and stores every field")
    func paging() throws {
        for i in 1...7 { try append("u1", "p\(i)", at: Int64(100 + i)) }
        try append("u2", "other", at: 1)
        #expect(try page("u1", after: 0, limit: 3) == .events([
            UserEventRecord(userID: "u1", cursor: 1, kind: "message", payload: "p1", createdAt: 101),
            UserEventRecord(userID: "u1", cursor: 2, kind: "message", payload: "p2", createdAt: 102),
            UserEventRecord(userID: "u1", cursor: 3, kind: "message", payload: "p3", createdAt: 103),
        ]))
        #expect(cursors(try page("u1", after: 3, limit: 3)) == [4, 5, 6])
        #expect(cursors(try page("u1", after: 6, limit: 3)) == [7])
        #expect(cursors(try page("u1", after: 7, limit: 3)) == [])
        #expect(cursors(try page("u1", after: 50, limit: 3)) == [])
        #expect(cursors(try page("u1", after: 2, limit: 0)) == [])
        #expect(cursors(try page("u2", after: 0)) == [1])
        #expect(cursors(try page("nobody", after: 0)) == [])
    }

    @Test("pruning deletes old events but keeps the newest; older cursors expire")
    func pruneAndExpire() throws {
        for i in 1...10 { try append("u1", "p\(i)", at: Int64(i)) }
        for i in 1...3 { try append("u2", "q\(i)", at: Int64(i)) }
        // u1: 1...5 are older than 6 and beyond the newest 2; u2: keepAtLeast 2 keeps 2...3.
        let deleted = try write { db in try Messaging.pruneEvents(db, olderThan: 6, keepAtLeast: 2) }
        #expect(deleted == 5 + 1)
        #expect(try page("u1", after: 3) == .expired(oldestAvailable: 6))
        #expect(try page("u1", after: 4) == .expired(oldestAvailable: 6))
        #expect(cursors(try page("u1", after: 5)) == [6, 7, 8, 9, 10])
        #expect(cursors(try page("u1", after: 8)) == [9, 10])
        #expect(try page("u2", after: 0) == .expired(oldestAvailable: 2))
        #expect(cursors(try page("u2", after: 1)) == [2, 3])

        // keepAtLeast wins over age.
        #expect(try write { db in try Messaging.pruneEvents(db, olderThan: 1_000, keepAtLeast: 3) } == 2 + 0)
        #expect(cursors(try page("u1", after: 7)) == [8, 9, 10])
        #expect(try page("u1", after: 6) == .expired(oldestAvailable: 8))
        // Nothing left to prune: a second run deletes nothing.
        #expect(try write { db in try Messaging.pruneEvents(db, olderThan: 1_000, keepAtLeast: 3) } == 0)
    }

    @Test("cursors are never reused after pruning, even when everything was pruned")
    func cursorNeverReused() throws {
        for i in 1...4 { try append("u1", "p\(i)", at: Int64(i)) }
        #expect(try write { db in try Messaging.pruneEvents(db, olderThan: 100, keepAtLeast: 0) } == 4)
        try write { db throws in #expect(try Messaging.latestCursor(db, userID: "u1") == 4) }
        // Caught up to 4: nothing missed, nothing to send. Behind 4: expired.
        #expect(cursors(try page("u1", after: 4)) == [])
        #expect(try page("u1", after: 3) == .expired(oldestAvailable: 5))
        #expect(try page("u1", after: 0) == .expired(oldestAvailable: 5))
        #expect(try append("u1", "p5", at: 200) == 5)
        #expect(cursors(try page("u1", after: 4)) == [5])
        #expect(try page("u1", after: 2) == .expired(oldestAvailable: 5))
    }

    @Test("pruning only removes a prefix, so the retained log has no gaps")
    func prunePrefixOnly() throws {
        // Event 2 is recent although 3 and 4 are old (clock skew): deleting 3 and 4 would leave a hole.
        for (i, time) in [Int64(1), 50, 2, 3, 60].enumerated() { try append("u1", "p\(i + 1)", at: time) }
        #expect(try write { db in try Messaging.pruneEvents(db, olderThan: 10, keepAtLeast: 0) } == 1)
        #expect(cursors(try page("u1", after: 1)) == [2, 3, 4, 5])
        #expect(try page("u1", after: 0) == .expired(oldestAvailable: 2))
    }
}
