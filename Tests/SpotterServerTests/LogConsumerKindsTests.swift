import Foundation
import Synchronization
import Testing
import SpotterCore
@testable import SpotterServer
import SpotterPorts
import SpotterStore
import TestSupport

/// A consumer that reads some kinds only (`LogConsumer.kinds`, the purge's edits and erasures) is handed those, in
/// log order, in batches of at most `batchLimit` of them, and its saved position still moves past everything
/// committed (issue 33: the purge no longer reads and decodes every message).
@Suite("Log consumers of some kinds")
struct LogConsumerKindsTests {
    final class KindsConsumer: LogConsumer {
        let name = "kinds"
        let start = LogConsumerStart.oldest
        let kinds: Set<ChatRecord.Kind>? = [.change]
        let received = Mutex<[[Int64]]>([])

        func deliver(_ deliveries: [LogDelivery]) throws {
            received.withLock { $0.append(deliveries.map(\.record.pos)) }
        }
    }

    @Test func onlyItsKindsAreHandedOverAndThePositionPassesTheRest() throws {
        let log = LogConsumerTests.log()
        let consumer = KindsConsumer()
        let runner = LogConsumerTests.runner(log, [consumer], batch: 2)
        defer { _ = runner.stop() }
        // Positions 1…20: messages, with a delete at every fourth.
        var records: [ChatRecord] = []
        for n in Int64(1)...20 {
            let content: ChatRecord.Content = n % 4 == 0
                ? .change(MessageChangeRecord(target: n - 1, change: .delete(by: .sender), wasLast: false))
                : .message(MessageRecord(clientMessageID: "m\(n)", body: "b"))
            records.append(ChatRecord(threadNo: 1, side: .client, seq: n, at: n, content))
        }
        _ = try waitFor { log.append(records, completion: $0) }
        try waitUntil(10, "the position past the last message") { (try? log.consumerPosition("kinds")) == 20 }
        let batches = consumer.received.withLock { $0 }
        #expect(batches.flatMap { $0 } == [4, 8, 12, 16, 20])
        #expect(batches.allSatisfy { !$0.isEmpty && $0.count <= 2 })
        // More messages and no change: nothing handed over, the position still moves.
        try LogConsumerTests.append(log, 5, from: 21)
        try waitUntil(10, "the position past the new messages") { (try? log.consumerPosition("kinds")) == 25 }
        #expect(consumer.received.withLock { $0.flatMap { $0 } } == [4, 8, 12, 16, 20])
    }
}
