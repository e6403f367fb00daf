import Foundation
import GRDB
import Testing
import SpotterCore
@testable import SpotterPorts
@testable import SpotterStore
import TestSupport

/// The contract of `ConsumableLog` (what durable consumers read and save), held against every engine: the ones
/// `ChatLogConformanceTests` sets up, each with its two `link` records at positions 1 and 2.
@Suite("ConsumableLog conformance", .serialized)
struct LogConsumerConformanceTests {
    func consumable(_ under: EngineUnderTest) throws -> any ConsumableLog {
        try #require(under.engine as? any ConsumableLog, "\(under.name) is no ConsumableLog")
    }

    func message(_ thread: Int64, _ seq: Int64) -> ChatRecord {
        ChatRecord(threadNo: thread, side: .client, seq: seq, at: 100 + seq, .message(MessageRecord(clientMessageID: "m\(thread)-\(seq)", body: "b")))
    }

    @Test(arguments: try ChatLogConformanceTests.engines())
    func everyThreadsRecordsComeInLogOrderWithinTheBounds(_ under: EngineUnderTest) throws {
        let log = try consumable(under)
        #expect(try log.newestPosition() == 2)
        let positions = try waitFor { under.engine.append([message(1, 1), message(2, 1), message(1, 2), message(2, 2)], completion: $0) }
        #expect(positions == [3, 4, 5, 6])
        #expect(try log.newestPosition() == 6)
        #expect(try log.recordsAfter(0, through: nil, limit: 100).map(\.pos) == [1, 2, 3, 4, 5, 6])
        let page = try log.recordsAfter(2, through: 5, limit: 2)
        #expect(page.map(\.pos) == [3, 4])
        #expect(page.map(\.content.message?.clientMessageID) == ["m1-1", "m2-1"])
        #expect(page.map(\.threadNo) == [1, 2])
        #expect(try log.recordsAfter(4, through: 5, limit: 100).map(\.pos) == [5])
        #expect(try log.recordsAfter(6, through: nil, limit: 100).isEmpty)
        #expect(try log.recordsAfter(0, through: nil, limit: 0).isEmpty)
    }

    @Test(arguments: try ChatLogConformanceTests.engines())
    func aSavedPositionIsKeptByNameAndOnlyMovesForward(_ under: EngineUnderTest) throws {
        let log = try consumable(under)
        #expect(try log.consumerPosition("push") == nil)
        try log.saveConsumerPosition("push", 0)
        #expect(try log.consumerPosition("push") == 0)
        try log.saveConsumerPosition("push", 7)
        try log.saveConsumerPosition("tap", 3)
        #expect(try log.consumerPosition("push") == 7)
        #expect(try log.consumerPosition("tap") == 3)
        try log.saveConsumerPosition("push", 5)  // a late save from a slower pass
        #expect(try log.consumerPosition("push") == 7)
        try log.saveConsumerPosition("push", 9)
        #expect(try log.consumerPosition("push") == 9)
    }

    /// A database from before consumers ("v13-profile", as main wrote it until now, with the "v5-log" placeholder
    /// of an older one still) migrates, and its consumers start from nothing saved and skip the placeholder.
    @Test func anOldSQLiteDatabaseGetsConsumersAndItsPlaceholderIsNoRecord() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("spotter-consumers-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try StoreDirectory.make(directory)
        do {
            let old = try DatabaseQueue(path: directory + "/spotter.sqlite")
            try Store.migrator.migrate(old, upTo: "v13-profile")
            try old.write { db in
                try db.execute(sql: "INSERT INTO log (pos, kind, threadNo, side, seq, at) VALUES (40, \(LogSQL.placeholderKind), 0, 0, 0, 0)")
                try db.execute(sql: "INSERT INTO log (kind, threadNo, side, seq, ref, at) VALUES (0, 1, 1, 1, 'old', 5)")
                #expect(try !db.tableExists("logConsumer"))
            }
        }
        // Opened as a server opens it: the missing migration is applied.
        let store = try Store.open(directory: directory)
        let writer = StoreWriter(store: store)
        defer { writer.stop() }
        let log = ChatLog(store: store, writer: writer)
        #expect(try store.appliedMigrations().contains("v14-log-consumers"))
        #expect(try log.consumerPosition("tap") == nil)
        #expect(try log.newestPosition() == 41)
        let records = try log.recordsAfter(0, through: nil, limit: 10)
        #expect(records.map(\.pos) == [41])
        #expect(records.map(\.content.message?.clientMessageID) == ["old"])
        try log.saveConsumerPosition("tap", 41)
        #expect(try log.consumerPosition("tap") == 41)
    }
}
