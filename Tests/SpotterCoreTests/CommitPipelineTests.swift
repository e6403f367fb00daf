import Testing
import SpotterCore
import SpotterProtocol

/// The commit pipeline with a log that completes appends when the test says: submissions complete in order with
/// their positions, what is in flight is bounded, and a failed append fails its whole batch.
@Suite("CommitPipeline")
struct CommitPipelineTests {
    /// A log whose appends wait for `complete` (in order, as the real log's writer completes them).
    final class PendingLog {
        var appends: [(records: [ChatRecord], done: (Result<[Int64], any Error>) -> Void)] = []
        var next: Int64 = 1

        func append(_ records: [ChatRecord], _ done: @escaping (Result<[Int64], any Error>) -> Void) {
            appends.append((records, done))
        }

        /// Completes the oldest append: durable at the next positions, or failed.
        func complete(failing error: (any Error)? = nil, sourceLocation: SourceLocation = #_sourceLocation) {
            guard !appends.isEmpty else {
                Issue.record("no append to complete", sourceLocation: sourceLocation)
                return
            }
            let (records, done) = appends.removeFirst()
            if let error { return done(.failure(error)) }
            let positions = records.indices.map { next + Int64($0) }
            next += Int64(records.count)
            done(.success(positions))
        }
    }

    struct DiskFull: Error {}

    /// What the pipeline told: each submission's outcome, tagged, in the order it was told, and the hooks.
    final class Journal {
        var said: [String] = []
        var positions: [String: [Int64]] = [:]
        var failures: [String: APIError] = [:]
        var completed: [[Int64]] = []
        var failed: [(count: Int, error: any Error)] = []

        func done(_ tag: String) -> (Result<[ChatRecord], APIError>) -> Void {
            { [self] result in
                switch result {
                case .success(let records):
                    said.append("\(tag):ok")
                    positions[tag] = records.map(\.pos)
                case .failure(let error):
                    said.append("\(tag):failed")
                    failures[tag] = error
                }
            }
        }
    }

    static func records(_ count: Int, thread: Int64 = 1) -> [ChatRecord] {
        (0..<count).map {
            ChatRecord(threadNo: thread, side: .client, seq: Int64($0 + 1), at: 0, .message(MessageRecord(clientMessageID: "m\($0)", body: "")))
        }
    }

    func make(maxInFlight: Int = 100, committedThrough: Int64 = 0) -> (CommitPipeline, PendingLog, Journal) {
        let log = PendingLog(), journal = Journal()
        var hooks = CommitPipeline.Hooks()
        hooks.durable = { journal.said.append("durable") }
        hooks.completed = { journal.completed.append($0.map(\.pos)) }
        hooks.failed = { journal.failed.append(($0.count, $1)) }
        hooks.quiet = { journal.said.append("quiet") }
        let pipeline = CommitPipeline(maxInFlight: maxInFlight, committedThrough: committedThrough, hooks: hooks,
                                      append: log.append)
        return (pipeline, log, journal)
    }

    @Test func oneFlushIsOneAppendAndSubmissionsCompleteInOrderWithPositions() {
        let (pipeline, log, journal) = make()
        pipeline.submit(Self.records(2), done: journal.done("a"))
        pipeline.submit([], done: journal.done("b"))
        pipeline.submit(Self.records(1, thread: 2), done: journal.done("c"))
        #expect(pipeline.inFlight == 3 && log.appends.isEmpty)
        pipeline.flush()
        #expect(log.appends.map(\.records.count) == [3])
        #expect(journal.said.isEmpty)  // nothing is told before the log says durable
        pipeline.flush()  // nothing more gathered: no append
        #expect(log.appends.count == 1)
        log.complete()
        #expect(journal.said == ["durable", "a:ok", "b:ok", "c:ok"])
        #expect(journal.positions == ["a": [1, 2], "b": [], "c": [3]])
        #expect(journal.completed == [[1, 2, 3]])
        #expect(pipeline.committedThrough == 3 && pipeline.inFlight == 0)
    }

    @Test func anEmptySubmissionWaitsForTheAppendsBeforeIt() {
        let (pipeline, log, journal) = make()
        pipeline.submit(Self.records(1), done: journal.done("a"))
        pipeline.flush()
        pipeline.submit([], done: journal.done("b"))
        #expect(pipeline.inFlight == 1)
        pipeline.flush()
        // The empty submission goes to the log behind the first append, and is told only after it.
        #expect(log.appends.map(\.records.count) == [1, 0])
        #expect(journal.said.isEmpty)
        log.complete()
        #expect(journal.said == ["durable", "a:ok"])
        log.complete()
        #expect(journal.said == ["durable", "a:ok", "durable", "b:ok"])
        #expect(pipeline.committedThrough == 1)
    }

    @Test func writesAreRefusedPastTheBoundAndWhileRecovering() {
        let (pipeline, log, journal) = make(maxInFlight: 3)
        #expect(pipeline.refusal == nil && !pipeline.isOverloaded)
        pipeline.submit(Self.records(2), done: journal.done("a"))
        #expect(pipeline.refusal == nil)
        pipeline.submit(Self.records(1), done: journal.done("b"))
        #expect(pipeline.refusal == APIError(.rateLimited, retryAfterSeconds: 1) && pipeline.isOverloaded)
        pipeline.flush()
        #expect(pipeline.refusal == APIError(.rateLimited, retryAfterSeconds: 1))  // in the log, not yet back
        log.complete()
        #expect(pipeline.refusal == nil && pipeline.inFlight == 0)
        pipeline.recovering = true
        #expect(pipeline.refusal == APIError(.unavailable, retryAfterSeconds: 1) && pipeline.isOverloaded)
        pipeline.recovering = false
        #expect(pipeline.refusal == nil)
    }

    @Test func aFailedAppendFailsItsWholeBatchAndTellsTheShell() {
        let (pipeline, log, journal) = make(committedThrough: 10)
        pipeline.submit(Self.records(2), done: journal.done("a"))
        pipeline.submit([], done: journal.done("b"))
        pipeline.submit(Self.records(1, thread: 2), done: journal.done("c"))
        pipeline.flush()
        log.complete(failing: DiskFull())
        #expect(journal.said == ["a:failed", "b:failed", "c:failed"])
        #expect(journal.failures.values.allSatisfy { $0 == APIError(.unavailable, retryAfterSeconds: 1) })
        #expect(journal.failed.count == 1 && journal.failed[0].count == 3 && journal.failed[0].error is DiskFull)
        #expect(journal.completed.isEmpty && pipeline.committedThrough == 10 && pipeline.inFlight == 0)
        // The next batch goes on (the shell recovers in between).
        pipeline.submit(Self.records(1), done: journal.done("d"))
        pipeline.flush()
        log.complete()
        #expect(journal.positions["d"] == [1] && pipeline.committedThrough == 10)
    }

    @Test func committedThroughOnlyMovesForward() {
        let (pipeline, log, journal) = make(committedThrough: 5)
        pipeline.caughtUp(to: 9)
        #expect(pipeline.committedThrough == 9)
        pipeline.caughtUp(to: 7)
        #expect(pipeline.committedThrough == 9)
        log.next = 10
        pipeline.submit(Self.records(3), done: journal.done("a"))
        pipeline.flush()
        log.complete()
        #expect(pipeline.committedThrough == 12 && journal.positions["a"] == [10, 11, 12])
    }

    /// A stale append (submitted before a resume) fails, and the shell starts recovering while a batch submitted
    /// after the resume is still in flight; that batch then commits. The shell hears `quiet` once the success
    /// brings what is in flight to zero — before the fix it heard nothing, waited for a failure that never came
    /// and refused every write from then on (a cluster process seen stuck this way under seq conflicts).
    @Test func aRecoveryHearsQuietWhenTheLastAppendBackSucceeded() {
        let (pipeline, log, journal) = make()
        pipeline.submit(Self.records(1), done: journal.done("stale"))
        pipeline.flush()
        pipeline.submit(Self.records(2, thread: 2), done: journal.done("fresh"))
        pipeline.flush()
        log.complete(failing: DiskFull())
        pipeline.recovering = true  // what the shell's `failed` does
        #expect(journal.said == ["stale:failed"], "one append still in flight: not quiet yet")
        log.complete()
        #expect(journal.said == ["stale:failed", "durable", "fresh:ok", "quiet"])
        #expect(pipeline.inFlight == 0)
    }

    /// Not recovering, nothing is said however the in-flight count falls; recovering with more still in flight,
    /// nothing either: `quiet` is the one moment the rebuild may start.
    @Test func quietIsSaidOnlyWhileRecoveringAndOnlyAtZero() {
        let (pipeline, log, journal) = make()
        pipeline.submit(Self.records(1), done: journal.done("a"))
        pipeline.flush()
        log.complete()
        #expect(!journal.said.contains("quiet"))
        pipeline.submit(Self.records(1), done: journal.done("b"))
        pipeline.flush()
        pipeline.submit(Self.records(1), done: journal.done("c"))
        pipeline.flush()
        pipeline.recovering = true
        log.complete(failing: DiskFull())
        #expect(!journal.said.contains("quiet"), "c is still in flight")
        log.complete(failing: DiskFull())
        #expect(journal.said.last == "quiet" && journal.said.filter { $0 == "quiet" }.count == 1)
    }
}
