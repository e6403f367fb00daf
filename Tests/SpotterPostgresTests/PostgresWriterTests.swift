import Foundation
import Synchronization
import Testing
@testable import SpotterPostgres
import TestSupport

/// The writer's group commit: jobs that arrive while a batch runs share the next transaction, and a job that
/// throws rolls back only itself.
@Suite("PostgreSQL writer")
struct PostgresWriterTests {
    @Test func aFailingJobInASharedBatchRollsBackOnlyItself() throws {
        let url = try PostgresCluster.shared().makeDatabase()
        let store = try PostgresStore(url: url)
        defer { store.close() }
        let writer = store.writer
        _ = try writer.perform({ batch in try batch.connection.exec("CREATE TABLE note (id integer PRIMARY KEY)") }, afterCommit: { _ in })

        // Hold the writer in a first job while three more queue up: they then run as one batch.
        let release = DispatchSemaphore(value: 0)
        let held = DispatchSemaphore(value: 0)
        writer.submit({ _ in held.signal(); release.wait() }, completion: { _ in })
        held.wait()
        let results = Mutex<[Int: Bool]>([:])
        let done = DispatchGroup()
        for id in 1...3 {
            done.enter()
            writer.submit({ batch in
                try batch.connection.exec("INSERT INTO note (id) VALUES ($1)", [String(id)])
                if id == 2 { throw PostgresError(sqlState: nil, message: "job 2 refuses") }
            }, completion: { result in
                results.withLock { $0[id] = (try? result.get()) != nil }
                done.leave()
            })
        }
        let before = writer.totals
        release.signal()
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(results.withLock { $0 } == [1: true, 2: false, 3: true])
        // The three ran in one transaction after the holding job's (which committed on its own).
        #expect(writer.totals.batches - before.batches == 2)
        // Counted as committed: the holding job and the two that stuck, not the one that rolled back.
        #expect(writer.totals.jobs - before.jobs == 3)
        let stored = try PostgresCluster.shared().psql(String(url.split(separator: "/").last!), "SELECT id FROM note ORDER BY id")
        #expect(stored.split(separator: "\n").map(String.init) == ["1", "3"])
    }

    /// A job alone in its batch that wrote and then threw a Swift error (no SQL error, so the transaction is not
    /// aborted) must not have its writes committed: before, the batch's COMMIT kept them.
    @Test func aLoneJobThatThrowsAfterWritingKeepsNothing() throws {
        let url = try PostgresCluster.shared().makeDatabase()
        let store = try PostgresStore(url: url)
        defer { store.close() }
        let writer = store.writer
        _ = try writer.perform({ batch in try batch.connection.exec("CREATE TABLE note (id integer PRIMARY KEY)") }, afterCommit: { _ in })
        struct Refused: Error {}
        #expect(throws: Refused.self) {
            _ = try writer.perform({ batch in
                try batch.connection.exec("INSERT INTO note (id) VALUES (1)")
                throw Refused()
            }, afterCommit: { _ in })
        }
        // The next job commits normally on the same connection.
        _ = try writer.perform({ batch in try batch.connection.exec("INSERT INTO note (id) VALUES (2)") }, afterCommit: { _ in })
        let stored = try PostgresCluster.shared().psql(String(url.split(separator: "/").last!), "SELECT id FROM note ORDER BY id")
        #expect(stored.split(separator: "\n").map(String.init) == ["2"])
    }
}
