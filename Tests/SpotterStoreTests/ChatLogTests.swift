import Foundation
import GRDB
import Synchronization
import Testing
import SpotterCore
@testable import SpotterStore

/// The log on SQLite: appends, reads by thread, checkpoints and the start, the halt after a failed append, and
/// the migration that carried the old tables into the log.
@Suite("ChatLog on SQLite", .serialized)
struct ChatLogTests {
    let store: Store
    let writer: StoreWriter
    let log: ChatLog

    init() throws {
        store = try Store.inMemory()
        writer = StoreWriter(store: store)
        log = ChatLog(store: store, writer: writer)
        let accounts = AccountStore(store)
        for (id, role) in [("c", "coach"), ("d", "coach"), ("a", "client"), ("b", "client")] {
            try accounts.createUser(id: id, role: role, fullName: id.uppercased(), email: "\(id)@example.com", phone: nil,
                                    passwordHash: nil, now: 0)
        }
        _ = try wait { log.createLink(clientID: "a", coachID: "c", threadID: "t1", now: 10, completion: $0) }
        _ = try wait { log.createLink(clientID: "b", coachID: "d", threadID: "t2", now: 11, completion: $0) }
    }

    /// Runs an asynchronous store call and waits for its completion.
    func wait<T: Sendable>(_ call: (@escaping @Sendable (Result<T, any Error>) -> Void) -> Void) throws -> T {
        let box = Mutex<Result<T, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        call { result in
            box.withLock { $0 = result }
            done.signal()
        }
        #expect(done.wait(timeout: .now() + 10) == .success)
        return try box.withLock { $0! }.get()
    }

    func message(_ thread: Int64, _ side: Side, _ seq: Int64, _ ref: String) -> ChatRecord {
        ChatRecord(kind: .message, threadNo: thread, side: side, seq: seq, ref: ref, body: "body \(ref)", at: 1000 + seq)
    }

    @Test func linksAreLoggedAndThreadsNumbered() throws {
        let loaded = try log.load()
        #expect(loaded.threads.map(\.id) == ["t1", "t2"])
        #expect(loaded.threads.map(\.no) == [1, 2])
        #expect(loaded.threads.allSatisfy { $0.active })
        #expect(loaded.names["a"] == "A" && loaded.names["c"] == "C")
        // Each link made one `link` record; no checkpoint yet, so both are in the tail.
        #expect(loaded.tail.map(\.kind) == [.link, .link])
        #expect(loaded.tail.map(\.pos) == [1, 2])
        #expect(loaded.threads.map(\.lastPos) == [1, 2])
    }

    @Test func appendsGetIncreasingPositionsAndReadBackByThread() throws {
        let records = [message(1, .client, 1, "m1"), message(2, .coach, 1, "n1"), message(1, .coach, 2, "m2"),
                       ChatRecord(kind: .receipt, threadNo: 1, side: .client, seq: 2, a: 2, b: 2, ref: "read", at: 5),
                       message(1, .client, 3, "m3")]
        let positions = try wait { log.append(records, completion: $0) }
        #expect(positions == [3, 4, 5, 6, 7])
        let after = try log.records(threadNos: [1, 2], after: 3, limit: 10)
        #expect(after.map(\.pos) == [4, 5, 6, 7])
        #expect(after[2].kind == .receipt && after[2].a == 2 && after[2].ref == "read")
        #expect(try log.records(threadNos: [1, 2], after: 3, limit: 2).map(\.pos) == [4, 5])
        #expect(try log.records(threadNos: [2], after: 0, limit: 10).map(\.pos) == [2, 4])
        // History: messages only, newest first, before a seq.
        #expect(try log.history(threadNo: 1, beforeSeq: nil, limit: 10).map(\.seq) == [3, 2, 1])
        #expect(try log.history(threadNo: 1, beforeSeq: 3, limit: 1).map(\.ref) == ["m2"])
        // Ordered reads see every append before them.
        #expect(try wait { log.message(threadNo: 1, seq: 2, completion: $0) }?.body == "body m2")
        let window = try wait { log.recentSends(threadNo: 1, limit: 2, completion: $0) }
        #expect(window == [SentKey(side: .client, clientMessageID: "m3", seq: 3), SentKey(side: .coach, clientMessageID: "m2", seq: 2)])
    }

    @Test func aStartLoadsTheCheckpointAndReplaysOnlyWhatCameAfter() throws {
        let state = try log.load().makeState()
        var records = [message(1, .client, 1, "m1"), message(1, .coach, 2, "m2")]
        for record in records { state.apply(record) }
        let positions = try wait { log.append(records, completion: $0) }
        for index in records.indices { records[index].pos = positions[index] }
        let snapshots = state.takeDirty()
        // Two parts: the mark is taken by the first and saved by the last.
        _ = try wait { log.checkpoint(Array(snapshots.prefix(1)), first: true, last: false, completion: $0) }
        let late = message(1, .client, 3, "m3")
        state.apply(late)
        _ = try wait { log.append([late], completion: $0) }
        let mark = try wait { log.checkpoint(Array(snapshots.dropFirst()), first: false, last: true, completion: $0) }
        #expect(mark == positions.last)

        let loaded = try log.load()
        #expect(loaded.tail.map(\.ref) == ["m3"])
        let t1 = try #require(loaded.threads.first { $0.id == "t1" })
        #expect(t1.lastSeq == 2 && t1.lastPreview == "body m2" && t1.lastSide == .coach)
        #expect(t1.coach.read == 2 && t1.client.read == 1)
        let restarted = loaded.makeState()
        let thread = try #require(restarted.thread(id: "t1"))
        #expect(thread.lastSeq == 3 && thread.committedSeq == 3 && thread.readSeq(.client) == 3)
        #expect(restarted.totalUnread("c") == 1)
    }

    @Test func aFailedAppendHaltsTheLogUntilResumed() throws {
        _ = try wait { writer.submit({ db in try db.execute(sql: "ALTER TABLE log RENAME TO logAway") }, completion: $0) }
        #expect(throws: (any Error).self) { try wait { log.append([message(1, .client, 1, "x")], completion: $0) } }
        _ = try wait { writer.submit({ db in try db.execute(sql: "ALTER TABLE logAway RENAME TO log") }, completion: $0) }
        // The table is back, but seqs were given out after the lost record: nothing is appended until resumed.
        #expect(throws: ChatLogError.halted) { try wait { log.append([message(1, .client, 2, "y")], completion: $0) } }
        log.resume()
        #expect(try wait { log.append([message(1, .client, 1, "x")], completion: $0) }.count == 1)
    }
}

/// The v5 migration against a database made by the previous version.
@Suite("v5-log migration")
struct LogMigrationTests {
    @Test func messagesMoveIntoTheLogAndOldCursorsCannotResume() throws {
        let directory = NSTemporaryDirectory() + "spotter-migration-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        do {
            let queue = try DatabaseQueue(path: directory + "/spotter.sqlite")
            try Store.migrator.migrate(queue, upTo: "v4-revocations")
            try queue.write { db in
                for (id, role) in [("c", "coach"), ("a", "client")] {
                    try db.execute(sql: #"INSERT INTO "user" (id, role, fullName, email, createdAt) VALUES (?, ?, ?, ?, 0)"#,
                                   arguments: [id, role, id.uppercased(), "\(id)@x.com"])
                }
                try db.execute(sql: "INSERT INTO coach (userId) VALUES ('c')")
                try db.execute(sql: "INSERT INTO coachClientLink (clientId, coachId, createdAt) VALUES ('a', 'c', 0)")
                try db.execute(sql: "INSERT INTO thread (id, coachId, clientId, createdAt, lastSeq) VALUES ('t', 'c', 'a', 0, 3)")
                for seq in 1...3 {
                    try db.execute(sql: """
                        INSERT INTO message (threadId, seq, senderId, clientMessageId, kind, body, createdAt)
                        VALUES ('t', ?, ?, ?, 'text', ?, ?)
                        """, arguments: [seq, seq == 2 ? "c" : "a", "m\(seq)", "old \(seq)", 100 + seq])
                }
                try db.execute(sql: "INSERT INTO userEvent (userId, cursor, kind, payload, createdAt) VALUES ('c', 57, 'message', '{}', 0)")
            }
        }
        let store = try Store.open(directory: directory)
        let writer = StoreWriter(store: store)
        defer { writer.stop() }
        let log = ChatLog(store: store, writer: writer)
        let loaded = try log.load()
        #expect(loaded.resumeFloor == 60)  // above the old cursor 57, after the placeholder and 3 messages
        #expect(loaded.tail.isEmpty)
        let history = try log.history(threadNo: 1, beforeSeq: nil, limit: 10)
        #expect(history.map(\.seq) == [3, 2, 1])
        #expect(history.map(\.side) == [.client, .coach, .client])
        #expect(history.first?.body == "old 3" && history.first?.ref == "m3")
        #expect(loaded.threads.first?.lastPos == 60)
        // New records come after everything an old cursor could name.
        let box = Mutex<[Int64]>([])
        let done = DispatchSemaphore(value: 0)
        log.append([ChatRecord(kind: .message, threadNo: 1, side: .client, seq: 4, ref: "m4", body: "new", at: 200)]) { result in
            box.withLock { $0 = (try? result.get()) ?? [] }
            done.signal()
        }
        done.wait()
        #expect(box.withLock { $0 } == [61])
    }
}
