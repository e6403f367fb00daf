import Foundation
import GRDB
import Synchronization
import Testing
@testable import SpotterStore

/// Collects completions from the writer thread and lets the test wait for them.
private final class Completions<T: Sendable>: Sendable {
    private let state = Mutex<[(key: Int, result: Result<T, any Error>)]>([])
    private let arrived = DispatchSemaphore(value: 0)

    func record(_ key: Int, _ result: Result<T, any Error>) {
        state.withLock { $0.append((key, result)) }
        arrived.signal()
    }

    /// Waits for `count` completions (30 s at most for each); false on timeout.
    func wait(for count: Int) -> Bool {
        for _ in 0..<count where arrived.wait(timeout: .now() + 30) == .timedOut { return false }
        return true
    }

    var all: [(key: Int, result: Result<T, any Error>)] { state.withLock { $0 } }
}

/// Holds the writer thread inside a job until the test releases it, so later jobs queue up.
private final class Gate: Sendable {
    private let entered = DispatchSemaphore(value: 0)
    private let released = DispatchSemaphore(value: 0)

    private func job(_ db: Database) throws -> Int {
        entered.signal()
        _ = released.wait(timeout: .now() + 30)
        return 0
    }

    /// Submits the gate's job to `writer` and waits until the writer thread is inside it: what is submitted next
    /// queues up behind it. False if the thread did not get there within 30 s.
    func hold(_ writer: StoreWriter) -> Bool {
        writer.submit(job) { _ in }
        return entered.wait(timeout: .now() + 30) == .success
    }

    func release() { released.signal() }
}

private struct Refused: Error, Equatable {}

@Suite("StoreWriter: group commit")
struct StoreWriterTests {
    let directory: String
    let store: Store

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("spotter-writer-\(UUID().uuidString)").path
        store = try Store.open(directory: directory)
    }

    private func cleanUp() {
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func payloads(_ user: String, in store: Store) throws -> [String] {
        try store.writer.read { db in
            guard try TestLog.latest(db, user: user) > 0 else { return [] }
            return try String.fetchAll(db, sql: "SELECT payload FROM testLog WHERE userId = ? ORDER BY cursor", arguments: [user])
        }
    }

    @Test("Store.open sets synchronous = FULL on every connection")
    func synchronousFull() throws {
        defer { cleanUp() }
        #expect(try store.writer.write { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") } == 2)
        #expect(try store.writer.read { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") } == 2)
        #expect(try store.appliedMigrations().contains("v14-log-consumers"))
        // Without it, GRDB's WAL default (NORMAL) stays on the writer.
        let other = FileManager.default.temporaryDirectory.appendingPathComponent("spotter-writer-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: other) }
        let normal = try Store.open(directory: other, synchronousFull: false)
        #expect(try normal.writer.write { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") } == 1)
    }

    @Test("2,000 jobs from 4 threads complete exactly once, with their results, in far fewer commits")
    func manyJobs() throws {
        defer { cleanUp() }
        let writer = StoreWriter(store: store)
        defer { writer.stop() }
        let gate = Gate(), completions = Completions<Int64>()
        // Hold the writer so that the 2,000 jobs queue up behind the gate and must be grouped.
        #expect(gate.hold(writer))
        let threads = 4, perThread = 500
        DispatchQueue.concurrentPerform(iterations: threads) { t in
            for i in 0..<perThread {
                writer.submit({ db in
                    try TestLog.append(db, user: "u\(t)", payload: "\(i)")
                }, completion: { result in completions.record(t * perThread + i, result) })
            }
        }
        gate.release()
        #expect(completions.wait(for: threads * perThread))

        let all = completions.all
        #expect(all.count == threads * perThread)
        #expect(Set(all.map(\.key)).count == threads * perThread)   // each exactly once
        for (key, result) in all {
            // Each submitter's jobs run in its submission order, so job i of a thread gets cursor i + 1.
            #expect((try? result.get()) == Int64(key % perThread + 1), "job \(key)")
        }
        // Completions come in submission order: per submitter, keys ascend.
        for t in 0..<threads {
            let keys = all.map(\.key).filter { $0 / perThread == t }
            #expect(keys == keys.sorted())
        }
        #expect(writer.jobsCommitted == threads * perThread + 1)
        #expect(writer.batchesCommitted >= 2)
        #expect(writer.batchesCommitted < threads * perThread / 100)
        for t in 0..<threads {
            #expect(try payloads("u\(t)", in: store) == (0..<perThread).map { "\($0)" })
        }
    }

    @Test("a throwing job fails alone; the rest of its batch commits")
    func throwingJobFailsAlone() throws {
        defer { cleanUp() }
        let writer = StoreWriter(store: store)
        defer { writer.stop() }
        let gate = Gate(), completions = Completions<Int64>()
        #expect(gate.hold(writer))
        for (key, payload) in ["a", "bad", "c"].enumerated() {
            writer.submit({ db in
                let cursor = try TestLog.append(db, user: "x", payload: payload)
                if payload == "bad" { throw Refused() }
                return cursor
            }, completion: { result in completions.record(key, result) })
        }
        gate.release()
        #expect(completions.wait(for: 3))
        let results = completions.all
        #expect(results.map(\.key) == [0, 1, 2])
        #expect((try? results[0].result.get()) == 1)
        #expect(throws: Refused.self) { try results[1].result.get() }
        #expect((try? results[2].result.get()) == 2)   // the failed job's cursor was rolled back with it
        #expect(try payloads("x", in: store) == ["a", "c"])
        #expect(writer.jobsCommitted == 1 + 2)
        #expect(writer.batchesCommitted <= 2)          // the three jobs shared one batch
    }

    @Test("if COMMIT fails, every job of the batch gets the error and nothing is stored")
    func commitFailure() throws {
        defer { cleanUp() }
        let writer = StoreWriter(store: store)
        defer { writer.stop() }
        let gate = Gate(), completions = Completions<Int64>()
        #expect(gate.hold(writer))
        writer.submit({ db in try TestLog.append(db, user: "y", payload: "a") },
                      completion: { completions.record(0, $0) })
        // A deferred foreign-key violation passes its savepoint but makes the COMMIT fail.
        writer.submit({ db -> Int64 in
            try db.execute(sql: "PRAGMA defer_foreign_keys = ON")
            try db.execute(sql: """
                INSERT INTO threadMute (userId, threadId, mutedUntil, ordinal) VALUES ('no-such-user', 't', NULL, 1)
                """)
            return 0
        }, completion: { completions.record(1, $0) })
        writer.submit({ db in try TestLog.append(db, user: "y", payload: "c") },
                      completion: { completions.record(2, $0) })
        gate.release()
        #expect(completions.wait(for: 3))
        let results = completions.all
        #expect(results.map(\.key) == [0, 1, 2])
        for (_, result) in results {
            #expect(throws: DatabaseError.self) { try result.get() }
        }
        #expect(try payloads("y", in: store) == [])
        // The writer carries on with the next batch.
        let after = Completions<Int64>()
        writer.submit({ db in try TestLog.append(db, user: "y", payload: "d") },
                      completion: { after.record(0, $0) })
        #expect(after.wait(for: 1))
        #expect((try? after.all.first?.result.get()) == 1)
        #expect(try payloads("y", in: store) == ["d"])
    }

    @Test("completions run only after COMMIT: another connection already sees the row")
    func completionAfterCommit() throws {
        defer { cleanUp() }
        let observer = try Store.open(directory: directory)   // a separate pool: separate connections
        let writer = StoreWriter(store: store, maxBatch: 16)
        defer { writer.stop() }
        let completions = Completions<Bool>()
        let jobs = 200
        for i in 0..<jobs {
            writer.submit({ db in
                try TestLog.append(db, user: "z", payload: "\(i)")
            }, completion: { result in
                completions.record(i, Result {
                    let cursor = try result.get()
                    let seen = try observer.writer.read { db in
                        try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM testLog WHERE userId = 'z' AND cursor = ?",
                                         arguments: [cursor])
                    }
                    return seen == 1
                })
            })
        }
        #expect(completions.wait(for: jobs))
        let results = completions.all
        #expect(results.map(\.key) == Array(0..<jobs))   // submission order
        for (key, result) in results {
            #expect((try? result.get()) == true, "job \(key) was acknowledged before another connection could see it")
        }
    }

    @Test("every acknowledged job survives stop() and reopening the file; later jobs are refused")
    func survivesReopen() throws {
        defer { cleanUp() }
        let completions = Completions<Int64>()
        do {
            let writer = StoreWriter(store: store, maxBatch: 32)
            for t in 0..<3 {
                DispatchQueue.global().async {
                    for i in 0..<100 {
                        writer.submit({ db in
                            try TestLog.append(db, user: "s\(t)", payload: "\(i)")
                        }, completion: { completions.record(t * 100 + i, $0) })
                    }
                }
            }
            #expect(completions.wait(for: 300))
            writer.stop()
            writer.stop()   // idempotent
            let refused = Completions<Int64>()
            writer.submit({ _ in 1 }, completion: { refused.record(0, $0) })
            #expect(refused.wait(for: 1))
            #expect(throws: StoreWriterError.stopped) { try refused.all.first?.result.get() }
            #expect(writer.jobsCommitted == 300)
        }
        let reopened = try Store.open(directory: directory)
        for (key, result) in completions.all {
            guard let cursor = try? result.get() else {
                Issue.record("job \(key) failed")
                continue
            }
            let payload = try reopened.writer.read { db in
                try String.fetchOne(db, sql: "SELECT payload FROM testLog WHERE userId = ? AND cursor = ?",
                                    arguments: ["s\(key / 100)", cursor])
            }
            #expect(payload == "\(key % 100)", "job \(key)")
        }
        for t in 0..<3 {
            #expect(try reopened.writer.read { db in try TestLog.latest(db, user: "s\(t)") } == 100)
        }
    }

    @Test("stop() finishes the jobs already queued before it returns")
    func stopDrainsQueue() throws {
        defer { cleanUp() }
        let writer = StoreWriter(store: store, maxBatch: 8)
        let gate = Gate(), completions = Completions<Int64>()
        #expect(gate.hold(writer))
        for i in 0..<50 {
            writer.submit({ db in try TestLog.append(db, user: "d", payload: "\(i)") },
                          completion: { completions.record(i, $0) })
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.1) { gate.release() }
        writer.stop()
        #expect(completions.all.count == 50)   // all completed by the time stop() returned
        #expect(completions.all.allSatisfy { (try? $0.result.get()) != nil })
        #expect(try payloads("d", in: store).count == 50)
        #expect(writer.batchesCommitted >= 1 + 50 / 8)
    }

    @Test("a job in an in-memory store works too, and stop() from a completion does not deadlock")
    func inMemoryAndStopFromCompletion() throws {
        defer { cleanUp() }
        let memory = try Store.inMemory()
        let writer = StoreWriter(store: memory)
        let completions = Completions<Int64>()
        writer.submit({ db in try TestLog.append(db, user: "m", payload: "a") },
                      completion: { result in
                          writer.stop()
                          completions.record(0, result)
                      })
        #expect(completions.wait(for: 1))
        writer.stop()
        #expect((try? completions.all.first?.result.get()) == 1)
        let refused = Completions<Int64>()
        writer.submit({ _ in 1 }, completion: { refused.record(0, $0) })
        #expect(refused.wait(for: 1))
        #expect(throws: StoreWriterError.stopped) { try refused.all.first?.result.get() }
    }

    @Test("the checkpoint thread copies committed pages into the database file while the writer keeps going")
    func checkpointThreadCopiesPages() throws {
        defer { cleanUp() }
        // Switch the writer's own automatic checkpoint off: only the checkpoint thread copies pages now.
        try store.writer.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_autocheckpoint = 0") }
        let databaseFile = directory + "/spotter.sqlite"
        func fileSize() throws -> Int {
            try (FileManager.default.attributesOfItem(atPath: databaseFile)[.size] as? NSNumber)?.intValue ?? -1
        }
        let before = try fileSize()
        let writer = StoreWriter(store: store)
        defer { writer.stop() }
        let completions = Completions<Int64>()
        let payload = String(repeating: "x", count: 2_000)
        for i in 0..<400 {
            writer.submit({ db in try TestLog.append(db, user: "c\(i % 40)", payload: payload) },
                          completion: { completions.record(i, $0) })
        }
        #expect(completions.wait(for: 400))
        // 400 × 2 KB is in the WAL; within a few passes (0.1 s apart) it is in the database file too. (A pass
        // is counted when it returns, after its fsync, so the file can grow before the count does.)
        let deadline = Date().addingTimeInterval(10)
        while try fileSize() < before + 400 * 2_000 || writer.checkpointPasses == 0, Date() < deadline {
            Thread.sleep(forTimeInterval: 0.05)
        }
        #expect(try fileSize() >= before + 400 * 2_000)
        #expect(writer.checkpointPasses > 0)
        #expect(try payloads("c7", in: store).count == 10)
    }
}

/// A per-user numbered log in a scratch table: jobs that write and number rows, as the writer's real jobs do.
enum TestLog {
    @discardableResult
    static func append(_ db: Database, user: String, payload: String) throws -> Int64 {
        try db.execute(sql: """
            CREATE TABLE IF NOT EXISTS testLog (userId TEXT NOT NULL, cursor INTEGER NOT NULL, payload TEXT NOT NULL,
                                                PRIMARY KEY (userId, cursor))
            """)
        let cursor = try latest(db, user: user) + 1
        try db.execute(sql: "INSERT INTO testLog (userId, cursor, payload) VALUES (?, ?, ?)", arguments: [user, cursor, payload])
        return cursor
    }

    static func latest(_ db: Database, user: String) throws -> Int64 {
        let exists = try Bool.fetchOne(db, sql: "SELECT COUNT(*) > 0 FROM sqlite_master WHERE name = 'testLog'") ?? false
        guard exists else { return 0 }
        return try Int64.fetchOne(db, sql: "SELECT COALESCE(MAX(cursor), 0) FROM testLog WHERE userId = ?", arguments: [user]) ?? 0
    }
}
