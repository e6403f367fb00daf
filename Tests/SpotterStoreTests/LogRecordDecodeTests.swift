import Foundation
import Testing
import SpotterCore
@testable import SpotterPorts
@testable import SpotterStore
import TestSupport

/// Records read back column for column (issue 33: SQLite's reads decode by index from `LogSQL.recordColumns`, no
/// longer by name from `SELECT *`): every column at its edges — NULL and empty text, ±2^63 in every integer column,
/// a huge body, control characters, text outside ASCII — through every read that decodes records, on every engine.
@Suite("Log records decode by index", .serialized)
struct LogRecordDecodeTests {
    /// Text with every control character but NUL (which PostgreSQL's text refuses and the rules refuse too).
    static let controls = String((1...31).map { Character(Unicode.Scalar(UInt8($0))) }) + "\u{7f}"

    /// Rows of a kind this version does not know come back with all their columns (`Content.unknown`).
    static func raw(_ thread: Int64, seq: Int64, at: Int64, a: Int64, b: Int64, ref: String?, body: String?) -> ChatRecord {
        ChatRecord(threadNo: thread, side: .coach, seq: seq, at: at, .unknown(ChatRecord.Columns(kind: 99, a: a, b: b, ref: ref, body: body)))
    }

    @Test(arguments: try ChatLogConformanceTests.engines())
    func everyColumnComesBackAsWritten(_ under: EngineUnderTest) throws {
        let log = under.engine
        let consumable = try #require(log as? any ConsumableLog)
        let huge = String(repeating: "ج\(Self.controls)x", count: 40_000)
        // Seq never decreases along a thread (the per-thread reads rely on it): thread 2's Int64.max comes last.
        let written = [
            Self.raw(1, seq: Int64.min, at: Int64.min, a: Int64.min, b: Int64.max, ref: nil, body: nil),
            ChatRecord(threadNo: 2, side: .client, seq: 5, at: -7, .message(MessageRecord(
                kind: .mealLog, clientMessageID: "ref \(Self.controls)", body: "🍎 \(Self.controls) وجبة", hasAttachments: true))),
            Self.raw(1, seq: 0, at: 0, a: -1, b: 0, ref: Self.controls, body: huge),
            Self.raw(2, seq: Int64.max, at: Int64.max, a: Int64.max, b: Int64.min, ref: "", body: ""),
            ChatRecord(threadNo: 1, side: .coach, seq: 6, at: 1, .message(MessageRecord(clientMessageID: "", body: ""))),
        ]
        let positions = try waitFor { log.append(written, completion: $0) }
        var expected = written
        for index in expected.indices { expected[index].pos = positions[index] }

        let after = try consumable.recordsAfter(positions[0] - 1, through: nil, limit: 100)
        #expect(after == expected)
        #expect(after.map(\.content.columns) == written.map(\.content.columns))
        #expect(after[0].content.columns.ref == nil && after[0].content.columns.body == nil)
        #expect(after[3].content.columns.ref == "" && after[3].content.columns.body == "")
        #expect(after[2].content.columns.body?.utf8.count == huge.utf8.count)
        // The per-thread reads, the history, a message by seq and a start's load decode the same.
        #expect(try log.records(threadNos: [1, 2], after: positions[0] - 1, limit: 100) == expected.sorted { $0.pos < $1.pos })
        #expect(try log.history(threadNo: 2, beforeSeq: nil, limit: 10).first == expected[1])
        #expect(try log.history(threadNo: 1, beforeSeq: nil, limit: 10).first == expected[4])
        #expect(try waitFor { log.message(threadNo: 2, seq: 5, completion: $0) } == expected[1])
        #expect(try log.meals(threadNos: [2], before: nil, limit: 5) == [expected[1]])
        let loaded = try log.load()
        for record in expected { #expect(loaded.tail.contains(record)) }
    }

    /// A consumer of a few kinds (the purge) reads those only: `limit` counts them, `through` bounds them, the rest
    /// are passed over in the store; no kind reads nothing.
    @Test(arguments: try ChatLogConformanceTests.engines())
    func recordsOfSomeKindsOnly(_ under: EngineUnderTest) throws {
        let log = under.engine
        let consumable = try #require(log as? any ConsumableLog)
        func message(_ seq: Int64) -> ChatRecord {
            ChatRecord(threadNo: 1, side: .client, seq: seq, at: 100, .message(MessageRecord(clientMessageID: "k\(seq)", body: "b")))
        }
        let delete = ChatRecord(threadNo: 1, side: .client, seq: 2, at: 101,
                                .change(MessageChangeRecord(target: 1, change: .delete(by: .sender), wasLast: false)))
        let erasure = ChatRecord(threadNo: 0, side: .client, seq: 0, at: 102, .erasure(ErasureRecord(userID: "a")))
        let written = [message(1), delete, message(2), message(3), erasure, message(4)]
        let positions = try waitFor { log.append(written, completion: $0) }
        let start = positions[0] - 1
        let purge: Set<ChatRecord.Kind> = [.change, .erasure]
        #expect(try consumable.recordsAfter(start, through: nil, limit: 10, kinds: purge).map(\.pos) == [positions[1], positions[4]])
        #expect(try consumable.recordsAfter(start, through: nil, limit: 1, kinds: purge).map(\.pos) == [positions[1]])
        #expect(try consumable.recordsAfter(positions[1], through: nil, limit: 10, kinds: purge).map(\.pos) == [positions[4]])
        #expect(try consumable.recordsAfter(start, through: positions[3], limit: 10, kinds: purge).map(\.pos) == [positions[1]])
        #expect(try consumable.recordsAfter(start, through: nil, limit: 10, kinds: [.erasure]).first?.content == erasure.content)
        #expect(try consumable.recordsAfter(start, through: nil, limit: 10, kinds: []).isEmpty)
        #expect(try consumable.recordsAfter(start, through: nil, limit: 0, kinds: purge).isEmpty)
        #expect(try consumable.recordsAfter(start, through: nil, limit: 10, kinds: [.message]).count == 4)
    }
}
