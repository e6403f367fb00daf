import Foundation
import GRDB
import Testing
import SpotterCore
@testable import SpotterStore

/// "v30-receipt-by-number": a database whose checkpointed receipts are keyed by (thread id, user id) reads the
/// same views after they move to (thread number, side); and the checkpoint writes and reads the new table.
@Suite("v30-receipt-by-number migration")
struct ReceiptMigrationTests {
    @Test func oldReceiptsReadTheSameAfterTheMigration() throws {
        let directory = NSTemporaryDirectory() + "spotter-receipts-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // Thread ids in an order unlike their numbers; receipts at the edges (0, 1, Int64.max), one side only,
        // and a row for a user on neither side (never written by the server; not carried over).
        let threads: [(id: String, coach: String, client: String)] = [("z-thread", "c1", "a1"), ("a-thread", "c1", "a2"),
                                                                    ("m-thread", "c2", "a3"), ("b-thread", "c2", "a4")]
        let receipts: [(thread: String, user: String, delivered: Int64, read: Int64)] = [
            ("z-thread", "c1", 5, 4), ("z-thread", "a1", 5, 5), ("a-thread", "a2", Int64.max, Int64.max - 1),
            ("m-thread", "c2", 0, 0), ("m-thread", "a3", 1, 0), ("b-thread", "c2", 7, 7), ("b-thread", "stranger", 9, 9),
        ]
        do {
            let queue = try DatabaseQueue(path: directory + "/spotter.sqlite")
            try Store.migrator.migrate(queue, upTo: "v29-goal-preferences")
            try queue.write { db in
                for (id, role) in [("c1", "coach"), ("c2", "coach"), ("a1", "client"), ("a2", "client"), ("a3", "client"),
                                   ("a4", "client"), ("stranger", "client")] {
                    try db.execute(sql: #"INSERT INTO "user" (id, role, fullName, email, createdAt) VALUES (?, ?, ?, ?, 0)"#,
                                   arguments: [id, role, id.uppercased(), "\(id)@x.com"])
                }
                for coach in ["c1", "c2"] { try db.execute(sql: "INSERT INTO coach (userId) VALUES (?)", arguments: [coach]) }
                for thread in threads {
                    try db.execute(sql: "INSERT INTO coachClientLink (clientId, coachId, createdAt) VALUES (?, ?, 0)",
                                   arguments: [thread.client, thread.coach])
                    try db.execute(sql: "INSERT INTO thread (id, coachId, clientId, createdAt) VALUES (?, ?, ?, 0)",
                                   arguments: [thread.id, thread.coach, thread.client])
                }
                for receipt in receipts {
                    try db.execute(sql: "INSERT INTO receipt (threadId, userId, deliveredSeq, readSeq) VALUES (?, ?, ?, ?)",
                                   arguments: [receipt.thread, receipt.user, receipt.delivered, receipt.read])
                }
            }
        }
        let store = try Store.open(directory: directory)
        #expect(try store.appliedMigrations().last == "v30-receipt-by-number")
        #expect(try store.writer.read { db in try db.tableExists("receipt") } == false)
        #expect(try store.writer.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM threadReceipt") } == 6)
        let writer = StoreWriter(store: store)
        defer { writer.stop() }
        let loaded = try ChatLog(store: store, writer: writer).load()
        func views(_ id: String) -> [Int64]? {
            loaded.threads.first { $0.id == id }.map { [$0.coach.delivered, $0.coach.read, $0.client.delivered, $0.client.read] }
        }
        #expect(loaded.threads.map(\.no) == [1, 2, 3, 4])
        #expect(views("z-thread") == [5, 4, 5, 5])
        #expect(views("a-thread") == [0, 0, Int64.max, Int64.max - 1])
        #expect(views("m-thread") == [0, 0, 1, 0])
        #expect(views("b-thread") == [7, 7, 0, 0])
    }

    @Test func aCheckpointSavesBothSidesByNumberAndAStartReadsThem() throws {
        let directory = NSTemporaryDirectory() + "spotter-receipts-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try Store.open(directory: directory)
        try store.writer.write { db in
            for (id, role) in [("c", "coach"), ("a", "client"), ("b", "client")] {
                try db.execute(sql: #"INSERT INTO "user" (id, role, fullName, email, createdAt) VALUES (?, ?, ?, ?, 0)"#,
                               arguments: [id, role, id.uppercased(), "\(id)@x.com"])
            }
            try db.execute(sql: "INSERT INTO coach (userId) VALUES ('c')")
            for (id, client) in [("t-b", "b"), ("t-a", "a")] {
                try db.execute(sql: "INSERT INTO thread (id, coachId, clientId, createdAt) VALUES (?, 'c', ?, 0)", arguments: [id, client])
            }
        }
        let writer = StoreWriter(store: store)
        let log = ChatLog(store: store, writer: writer)
        // Given out of number order; the second save of thread 1 overwrites the first.
        let snapshots = [
            ThreadSnapshot(no: 2, lastSeq: 3, lastMessageAt: 30, lastPreview: "p2", lastSide: .coach,
                           coachDelivered: 3, coachRead: 2, clientDelivered: Int64.max, clientRead: 0),
            ThreadSnapshot(no: 1, lastSeq: 9, lastMessageAt: 90, lastPreview: "p1", lastSide: .client,
                           coachDelivered: 1, coachRead: 1, clientDelivered: 0, clientRead: 0),
        ]
        for (index, part) in [snapshots, [ThreadSnapshot(no: 1, lastSeq: 9, lastMessageAt: 90, lastPreview: "p1", lastSide: .client,
                                                         coachDelivered: 9, coachRead: 8, clientDelivered: 9, clientRead: 9)]].enumerated() {
            let done = DispatchSemaphore(value: 0)
            log.checkpoint(part, first: index == 0, last: index == 1, through: nil) { _ in done.signal() }
            done.wait()
        }
        writer.stop()
        let reopened = try Store.open(directory: directory)
        let rewriter = StoreWriter(store: reopened)
        defer { rewriter.stop() }
        let loaded = try ChatLog(store: reopened, writer: rewriter).load()
        let byNo = Dictionary(uniqueKeysWithValues: loaded.threads.map { ($0.no, $0) })
        #expect(byNo[1]?.coach == .init(delivered: 9, read: 8) && byNo[1]?.client == .init(delivered: 9, read: 9))
        #expect(byNo[2]?.coach == .init(delivered: 3, read: 2) && byNo[2]?.client == .init(delivered: Int64.max, read: 0))
        #expect(byNo[2]?.lastPreview == "p2" && byNo[1]?.lastSeq == 9)
    }
}
