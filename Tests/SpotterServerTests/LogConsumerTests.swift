import Foundation
import Logging
import Synchronization
import Testing
import SpotterCore
@testable import SpotterServer
import SpotterPorts
import SpotterStore
import TestSupport

/// A consumer for tests: records what it was handed; can fail a number of attempts first, or stall in `deliver`
/// until released.
final class RecordingConsumer: LogConsumer {
    let name: String
    let start: LogConsumerStart
    /// Every delivery handled, in the order handed over.
    let received = Mutex<[LogDelivery]>([])
    /// Every attempt (failed ones included): its first id, how many records, and the log's saved position during it.
    let attempts = Mutex<[(firstID: String, count: Int, saved: Int64?)]>([])
    private let failuresLeft: Atomic<Int>
    private let log: (any ConsumableLog)?
    /// When set, `deliver` waits for it (one signal per batch).
    let gate: DispatchSemaphore?
    let inside = Atomic<Bool>(false)

    init(name: String = "test", start: LogConsumerStart = .oldest, failing: Int = 0, log: (any ConsumableLog)? = nil,
         gate: DispatchSemaphore? = nil) {
        self.name = name
        self.start = start
        failuresLeft = Atomic(failing)
        self.log = log
        self.gate = gate
    }

    struct Refused: Error {}

    func deliver(_ deliveries: [LogDelivery]) throws {
        let saved = try log?.consumerPosition(name)
        attempts.withLock { $0.append((deliveries[0].id, deliveries.count, saved)) }
        inside.store(true, ordering: .releasing)
        defer { inside.store(false, ordering: .releasing) }
        gate?.wait()
        if failuresLeft.load(ordering: .acquiring) > 0 {
            failuresLeft.subtract(1, ordering: .acquiringAndReleasing)
            throw Refused()
        }
        received.withLock { $0.append(contentsOf: deliveries) }
    }

    var positions: [Int64] { received.withLock { $0.map(\.record.pos) } }
}

/// The runner of the log's durable consumers (`LogConsumerRunner`) on the in-memory log: no server, no sockets.
@Suite("Log consumers")
struct LogConsumerTests {
    static func log() -> MemoryChatLog {
        let thread = { (no: Int64) in
            ThreadRow(id: "t\(no)", no: no, coachID: "c\(no)", clientID: "a\(no)", createdAt: no, active: true, lastSeq: 0,
                      lastMessageAt: nil, lastPreview: nil, lastSide: nil, lastPos: 0,
                      coach: .init(delivered: 0, read: 0), client: .init(delivered: 0, read: 0))
        }
        return MemoryChatLog(threads: [thread(1), thread(2)])
    }

    static func append(_ log: MemoryChatLog, _ count: Int, from first: Int = 1) throws {
        let records = (first..<(first + count)).map { n in
            ChatRecord(threadNo: Int64(1 + n % 2), side: .client, seq: Int64(n), at: Int64(n), .message(MessageRecord(clientMessageID: "m\(n)", body: "b")))
        }
        _ = try waitFor { log.append(records, completion: $0) }
    }

    static func runner(_ log: MemoryChatLog, _ consumers: [any LogConsumer], batch: Int = 256) -> LogConsumerRunner {
        var timing = LogConsumerTiming()
        timing.pollMilliseconds = 5
        timing.batchLimit = batch
        var logger = Logger(label: "spotter.test")
        logger.logLevel = .critical
        let runner = LogConsumerRunner(log: log, consumers: consumers, timing: timing, failPoints: FailPoints(), logger: logger)
        runner.start()
        return runner
    }

    /// `SPOTTER_FAIL_POINT=consumer.delivered@<name>:n` counts one consumer's batches only (several run side by side);
    /// a malformed scope arms nothing.
    @Test func aFailPointScopedToAConsumerCountsThatConsumerAlone() {
        let scoped = FailPoints("consumer.delivered@log-tap:8")
        #expect(scoped?.counts("log-tap") == true && scoped?.counts("webhooks") == false && scoped?.at == 8)
        #expect(FailPoints("consumer.delivered:2")?.counts("anyone") == true)
        for bad in ["consumer.delivered@:3", "consumer.delivered@a@b:1", "nope@log-tap:1", "consumer.delivered@log-tap:0", "@log-tap"] {
            #expect(FailPoints(bad) == nil, "\(bad)")
        }
    }

    @Test func committedRecordsReachTheConsumerOnceInLogOrderInBoundedBatches() throws {
        let log = Self.log()
        let consumer = RecordingConsumer()
        let runner = Self.runner(log, [consumer], batch: 16)
        defer { _ = runner.stop() }
        for step in 0..<10 { try Self.append(log, 25, from: 1 + step * 25) }
        try waitUntil(10, "250 records delivered") { consumer.positions.count >= 250 }
        #expect(consumer.positions == Array(1...250))
        #expect(consumer.received.withLock { $0.map(\.id) } == (1...250).map { "pos:\($0)" })
        #expect(consumer.received.withLock { $0.map(\.record.content.message?.clientMessageID) } == (1...250).map { "m\($0)" })
        // Never more than a batch at once, however far behind the consumer started.
        #expect(consumer.attempts.withLock { $0.allSatisfy { $0.count <= 16 } })
        try waitUntil(5, "the position saved past the last batch") { (try? log.consumerPosition("test")) == 250 }
        #expect(runner.progress(newest: 250) == [ConsumerProgress(name: "test", lag: 0, delivered: 250, failures: 0)])
    }

    @Test func aRestartGoesOnFromTheSavedPositionWithNoGap() throws {
        let log = Self.log()
        try Self.append(log, 30)
        let first = RecordingConsumer()
        let before = Self.runner(log, [first])
        try waitUntil(5, "the first run caught up") { (try? log.consumerPosition("test")) == 30 }
        #expect(before.stop())
        try Self.append(log, 20, from: 31)
        let second = RecordingConsumer()
        let after = Self.runner(log, [second])
        defer { _ = after.stop() }
        try waitUntil(5, "the second run caught up") { second.positions.count >= 20 }
        #expect(first.positions == Array(1...30))
        #expect(second.positions == Array(31...50))
    }

    @Test func aNewConsumerThatStartsAtTheNewestSeesOnlyWhatComesAfterItsFirstRun() throws {
        let log = Self.log()
        try Self.append(log, 40)
        let consumer = RecordingConsumer(name: "push", start: .newest)
        let runner = Self.runner(log, [consumer])
        defer { _ = runner.stop() }
        try waitUntil(5, "the start saved") { (try? log.consumerPosition("push")) == 40 }
        try Self.append(log, 3, from: 41)
        try waitUntil(5, "the new records delivered") { consumer.positions.count >= 3 }
        #expect(consumer.positions == [41, 42, 43])
    }

    @Test func aFailingConsumerGetsTheSameRecordsAgainAndItsPositionWaits() throws {
        let log = Self.log()
        try Self.append(log, 10)
        let consumer = RecordingConsumer(failing: 3, log: log)
        let runner = Self.runner(log, [consumer])
        defer { _ = runner.stop() }
        try waitUntil(5, "delivered after the failures") { consumer.positions.count >= 10 }
        #expect(consumer.positions == Array(1...10))
        let attempts = consumer.attempts.withLock { $0 }
        #expect(attempts.count == 4)
        #expect(attempts.map(\.firstID) == ["pos:1", "pos:1", "pos:1", "pos:1"])
        // The oldest start is saved before the first attempt, and stays while the attempts fail.
        #expect(attempts.map(\.saved) == [0, 0, 0, 0])
        try waitUntil(5, "the position saved") { (try? log.consumerPosition("test")) == 10 }
        #expect(runner.progress(newest: 10).first?.failures == 3)
    }

    @Test func aConsumerStalledInDeliverHoldsNoAppendBackAndItsLagGrows() throws {
        let log = Self.log()
        let gate = DispatchSemaphore(value: 0)
        let stalled = RecordingConsumer(name: "stalled", gate: gate)
        let quick = RecordingConsumer(name: "quick")
        let runner = Self.runner(log, [stalled, quick], batch: 8)
        defer {
            for _ in 0..<100 { gate.signal() }
            _ = runner.stop()
        }
        try Self.append(log, 1)
        try waitUntil(5, "the stalled consumer inside deliver") { stalled.inside.load(ordering: .acquiring) }
        // Appends complete while it waits, and the other consumer goes on.
        try Self.append(log, 99, from: 2)
        try waitUntil(5, "the quick consumer caught up") { quick.positions.count >= 100 }
        #expect(try log.consumerPosition("stalled") == 0)
        #expect(runner.progress(newest: 100).first { $0.name == "stalled" }?.lag == 100)
        // Let it go: it catches up, a batch at a time.
        for _ in 0..<100 { gate.signal() }
        try waitUntil(5, "the stalled consumer caught up") { stalled.positions.count >= 100 }
        #expect(stalled.positions == Array(1...100))
        try waitUntil(5, "its position saved") { (try? log.consumerPosition("stalled")) == 100 }
        #expect(runner.progress(newest: 100).first { $0.name == "stalled" }?.lag == 0)
    }

    @Test func backOffDoublesFromThePollIntervalUpToItsBound() {
        var timing = LogConsumerTiming()
        timing.pollMilliseconds = 200
        timing.maxBackoffMilliseconds = 1000
        #expect((1...5).map { timing.backoff(afterFailures: $0) } == [200, 400, 800, 1000, 1000])
        #expect(timing.backoff(afterFailures: 500) == 1000)
    }
}
