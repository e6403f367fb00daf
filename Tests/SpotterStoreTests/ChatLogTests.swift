import Foundation
import GRDB
import Synchronization
import Testing
import SpotterCore
@testable import SpotterStore
import TestSupport

/// What only the SQLite engine does: links logged with the thread, numbered threads, and the migration that
/// carried the old tables into the log. The engine contract is `ChatLogConformanceTests`.
@Suite("ChatLog on SQLite", .serialized)
struct ChatLogTests {
    @Test func linksAreLoggedAndThreadsNumbered() throws {
        let loaded = try EngineUnderTest.sqlite().engine.load()  // two links made through the log
        #expect(loaded.threads.map(\.id) == ["t1", "t2"])
        #expect(loaded.threads.map(\.no) == [1, 2])
        #expect(loaded.threads.allSatisfy { $0.active })
        #expect(loaded.names["a"] == "A" && loaded.names["c"] == "C")
        // Each link made one `link` record; no checkpoint yet, so both are in the tail.
        #expect(loaded.tail.map(\.kind) == [.link, .link])
        #expect(loaded.tail.map(\.pos) == [1, 2])
        #expect(loaded.threads.map(\.lastPos) == [1, 2])
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
        #expect(history.first?.content == .message(MessageRecord(clientMessageID: "m3", body: "old 3")))
        #expect(loaded.threads.first?.lastPos == 60)
        // New records come after everything an old cursor could name.
        let box = Mutex<[Int64]>([])
        let done = DispatchSemaphore(value: 0)
        log.append([ChatRecord(threadNo: 1, side: .client, seq: 4, at: 200, .message(MessageRecord(clientMessageID: "m4", body: "new")))]) { result in
            box.withLock { $0 = (try? result.get()) ?? [] }
            done.signal()
        }
        done.wait()
        #expect(box.withLock { $0 } == [61])
    }
}

