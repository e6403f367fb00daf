import Foundation
import Synchronization
import Testing
import SpotterPorts

/// The writer skeleton both engines run on, driven by a committer that does what each test scripts: no database,
/// so the paths an engine reaches only on a failing disk or a lost connection run here on demand.
@Suite("BatchWriter: the writer skeleton")
struct BatchWriterTests {
    private struct Aborted: Error, Equatable {}
    private struct AroundTheWork: Error, Equatable {}
    private struct Stopped: Error, Equatable {}
    private struct NeverRan: Error, Equatable {}

    /// What the committer does with one batch.
    private struct Plan {
        /// How many jobs to run (nil: all); the rest are handed back.
        var run: Int?
        /// Jobs (by index in the batch) to fail after their work returned.
        var fail: Set<Int> = []
        /// Run nothing, yet report every job as run.
        var skipWork = false
        var error: (any Error)?
    }

    private final class ScriptedCommitter: BatchCommitter {
        private let plans: Mutex<[Plan]>
        let batchSizes = Mutex<[Int]>([])
        let closes = Mutex(0)

        init(_ plans: [Plan]) {
            self.plans = Mutex(plans)
        }

        func commit(_ jobs: [WriterJob<Void>]) -> BatchOutcome {
            batchSizes.withLock { $0.append(jobs.count) }
            let plan = plans.withLock { $0.isEmpty ? Plan() : $0.removeFirst() }
            let ran = min(plan.run ?? jobs.count, jobs.count)
            if !plan.skipWork {
                for (index, job) in jobs[..<ran].enumerated() {
                    try? job.run(())
                    if plan.fail.contains(index) { job.fail(AroundTheWork()) }
                }
            }
            return BatchOutcome(ran: ran, error: plan.error)
        }

        func close() {
            closes.withLock { $0 += 1 }
        }
    }

    /// Completions in the order they came, by name.
    private final class Log: Sendable {
        private let entries = Mutex<[(name: String, result: Result<String, any Error>)]>([])
        private let arrived = DispatchSemaphore(value: 0)

        func completion(_ name: String) -> @Sendable (Result<String, any Error>) -> Void {
            { [self] result in
                entries.withLock { $0.append((name, result)) }
                arrived.signal()
            }
        }

        func wait(for count: Int) -> Bool {
            for _ in 0..<count where arrived.wait(timeout: .now() + 30) == .timedOut { return false }
            return true
        }

        var names: [String] { entries.withLock { $0.map(\.name) } }
        func result(_ name: String) -> Result<String, any Error>? { entries.withLock { $0.first { $0.name == name }?.result } }
    }

    private func writer(_ committer: ScriptedCommitter, maxBatch: Int = 64) -> BatchWriter<ScriptedCommitter> {
        BatchWriter(name: "test.writer", maxBatch: maxBatch, committer: committer, refusedAfterStop: Stopped(), neverRan: NeverRan())
    }

    /// Holds the writer thread inside a first job ("gate", a batch of its own) until the returned semaphore is
    /// signalled, so that what is submitted meanwhile queues up as the next batch.
    private func hold(_ writer: BatchWriter<ScriptedCommitter>, _ log: Log) -> DispatchSemaphore {
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        writer.submit({ _ in
            entered.signal()
            _ = release.wait(timeout: .now() + 30)
            return "gate"
        }, completion: log.completion("gate"))
        #expect(entered.wait(timeout: .now() + 30) == .success)
        return release
    }

    @Test func jobsAfterAnAbortRunInTheNextBatchAheadOfLaterSubmissions() throws {
        // Batch 1: the gate alone. Batch 2: a, b, c, of which only a runs before the transaction aborts; a submits
        // d while it runs. Batch 3 must be b, c, d: the jobs handed back go first.
        let committer = ScriptedCommitter([Plan(), Plan(run: 1, error: Aborted())])
        let writer = writer(committer)
        defer { writer.stop() }
        let log = Log()
        let gate = hold(writer, log)
        writer.submit({ _ in
            writer.submit({ _ in "d" }, completion: log.completion("d"))
            return "a"
        }, completion: log.completion("a"))
        for name in ["b", "c"] { writer.submit({ _ in name }, completion: log.completion(name)) }
        gate.signal()
        #expect(log.wait(for: 5))
        #expect(log.names == ["gate", "a", "b", "c", "d"])
        #expect(throws: Aborted.self) { try log.result("a")?.get() }
        for name in ["b", "c", "d"] { #expect(try log.result(name)?.get() == name) }
        #expect(committer.batchSizes.withLock { $0 } == [1, 3, 3])
        // The aborted batch is not counted; the gate's and the last one are.
        #expect(writer.totals.batches == 2)
        #expect(writer.totals.jobs == 4)
    }

    @Test func aJobFailedAroundItsWorkGetsTheCommittersErrorAndIsNotCounted() throws {
        // Batch 1: the gate alone. Batch 2: x, y, z; the committer fails y after its work returned (as SQLite's does
        // when the job's savepoint cannot be released).
        let committer = ScriptedCommitter([Plan(), Plan(fail: [1])])
        let writer = writer(committer)
        defer { writer.stop() }
        let log = Log()
        let gate = hold(writer, log)
        for name in ["x", "y", "z"] { writer.submit({ _ in name }, completion: log.completion(name)) }
        gate.signal()
        #expect(log.wait(for: 4))
        #expect(log.names == ["gate", "x", "y", "z"])
        #expect(try log.result("x")?.get() == "x")
        #expect(throws: AroundTheWork.self) { try log.result("y")?.get() }
        #expect(try log.result("z")?.get() == "z")
        #expect(committer.batchSizes.withLock { $0 } == [1, 3])
        #expect(writer.totals.batches == 2)
        #expect(writer.totals.jobs == 3)
    }

    @Test func aCommittedJobWhoseWorkNeverRanGetsNeverRan() throws {
        let committer = ScriptedCommitter([Plan(skipWork: true)])
        let writer = writer(committer)
        let log = Log()
        writer.submit({ _ in "never" }, completion: log.completion("never"))
        #expect(log.wait(for: 1))
        writer.stop()
        #expect(throws: NeverRan.self) { try log.result("never")?.get() }
        #expect(writer.totals.batches == 1)
        #expect(writer.totals.jobs == 0)
    }

    @Test func afterStopJobsAreRefusedAndTheCommitterClosedOnce() throws {
        let committer = ScriptedCommitter([])
        let writer = writer(committer)
        let log = Log()
        writer.submit({ _ in "before" }, completion: log.completion("before"))
        writer.stop()
        writer.stop()
        #expect(try log.result("before")?.get() == "before")  // stop() drained the queue first
        writer.submit({ _ in "after" }, completion: log.completion("after"))
        #expect(log.wait(for: 2))
        #expect(throws: Stopped.self) { try log.result("after")?.get() }
        #expect(committer.closes.withLock { $0 } == 1)
    }

    @Test func performWaitsForTheCommitAndRunsAfterCommitFirst() throws {
        let committer = ScriptedCommitter([])
        let writer = writer(committer)
        defer { writer.stop() }
        let seen = Mutex<[String]>([])
        let value = try writer.perform({ _ in "done" }, afterCommit: { value in seen.withLock { $0.append(value) } })
        #expect(value == "done")
        #expect(seen.withLock { $0 } == ["done"])
        #expect(throws: Aborted.self) { try writer.perform({ _ -> String in throw Aborted() }) }
    }
}
