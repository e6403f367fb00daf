import Foundation
import SeededRandom
import Testing
import SpotterCore

/// The ordering core of a process following the log from several writers.
@Suite("LogSequencer")
struct LogSequencerTests {
    func record(_ pos: Int64) -> ChatRecord {
        ChatRecord(pos: pos, threadNo: pos % 3 + 1, side: .client, seq: pos, at: 0, .message(MessageRecord(clientMessageID: "m\(pos)", body: "")))
    }

    @Test func recordsInOrderGoStraightThrough() {
        var sequencer = LogSequencer(after: 10)
        #expect(sequencer.receive([record(11), record(12)], now: 0).map(\.pos) == [11, 12])
        #expect(sequencer.receive([record(13)], now: 1).map(\.pos) == [13])
        #expect(sequencer.applied == 13 && sequencer.waitingCount == 0)
    }

    @Test(arguments: [1, 2, 3, 4, 5] as [UInt64])
    func anyOrderWithRepeatsComesOutInOrderOnce(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        let count: Int64 = 500
        // Every record arrives once from its writer, some a second time (a fill from the store, a republish).
        var arrivals = (1...count).map(record)
        arrivals += (1...count).filter { _ in random.next() % 5 == 0 }.map(record)
        arrivals.shuffle(using: &random)
        var sequencer = LogSequencer(after: 0)
        var out: [Int64] = []
        var index = 0
        var clock: UInt64 = 0
        while index < arrivals.count {
            let chunk = Int(random.next() % 7) + 1
            out += sequencer.receive(Array(arrivals[index..<min(index + chunk, arrivals.count)]), now: clock).map(\.pos)
            index += chunk
            clock += 1
        }
        #expect(out == Array(1...count))
        #expect(sequencer.applied == count && sequencer.waitingCount == 0)
        #expect(sequencer.gap(now: clock + 10_000, patience: 1) == nil)
    }

    @Test func recordsAlreadyHandedOnAreDropped() {
        var sequencer = LogSequencer(after: 5)
        #expect(sequencer.receive([record(3), record(5)], now: 0).isEmpty)
        #expect(sequencer.receive([record(6), record(6)], now: 0).map(\.pos) == [6])
        #expect(sequencer.receive([record(6)], now: 1).isEmpty)
    }

    @Test func aGapThatDoesNotCloseIsReportedAfterThePatienceAndFilled() {
        var sequencer = LogSequencer(after: 0)
        #expect(sequencer.receive([record(1), record(2), record(4), record(5)], now: 0).map(\.pos) == [1, 2])
        #expect(sequencer.waitingCount == 2)
        #expect(sequencer.gap(now: 99, patience: 100) == nil)
        let gap = sequencer.gap(now: 100, patience: 100)
        #expect(gap?.after == 2 && gap?.through == 3)
        // What the store answers for (2, 3] goes in like anything else.
        #expect(sequencer.receive([record(3)], now: 120).map(\.pos) == [3, 4, 5])
        #expect(sequencer.gap(now: 10_000, patience: 100) == nil)
    }

    @Test func thePatienceStartsAgainWhenTheGapMoves() {
        var sequencer = LogSequencer(after: 0)
        #expect(sequencer.receive([record(1), record(3)], now: 0).map(\.pos) == [1])
        #expect(sequencer.gap(now: 100, patience: 100)?.through == 2)
        // 2 arrives late, 5 is early: now 4 is missing, since 150.
        #expect(sequencer.receive([record(2), record(5)], now: 150).map(\.pos) == [2, 3])
        #expect(sequencer.gap(now: 200, patience: 100) == nil)
        let gap = sequencer.gap(now: 250, patience: 100)
        #expect(gap?.after == 3 && gap?.through == 4)
    }

    @Test func aGapWithNothingAfterItShowsNoSign() {
        var sequencer = LogSequencer(after: 0)
        _ = sequencer.receive([record(1)], now: 0)
        // Records 2… may exist in the store: only a read after `applied` finds them (the shell's periodic read).
        #expect(sequencer.gap(now: 1_000_000, patience: 1) == nil)
    }
}

/// Committed records between processes.
@Suite("LogStreamCodec")
struct LogStreamCodecTests {
    @Test func batchesRoundTripExactly() {
        let records = [
            ChatRecord(pos: 41, threadNo: 7, side: .coach, seq: 12, at: 1_800_000_000, .message(MessageRecord(
                kind: .mealLog, clientMessageID: "cm-1", body: #"{"kcal":[1,2],"note":"quote \" backslash \\ مرحبا 👋"}"#,
                hasAttachments: true))),
            ChatRecord(pos: 42, threadNo: 7, side: .client, seq: 12, at: 5, .receipt(ReceiptRecord(delivered: 12, read: 11, readMoved: true))),
            ChatRecord(pos: 43, threadNo: 8, side: .client, seq: 3, at: 6,
                       .session(SessionRecord(sessionID: "s1", isSystemMessage: true, byParticipant: false, json: "{}"))),
            ChatRecord(pos: 44, threadNo: 8, side: .client, seq: 3, at: 7, .link(LinkChangeRecord(active: false))),
            ChatRecord(pos: 45, threadNo: 8, side: .client, seq: 3, at: 8, .ratingPrompt(.afterMessages(sent: 20))),
            ChatRecord(pos: 46, threadNo: 8, side: .client, seq: 3, at: 9, .ratingPrompt(.afterSession(sessionID: "s1"))),
            ChatRecord(pos: 47, threadNo: 8, side: .client, seq: 3, at: 10, .tier(TierRecord(tier: "premium"))),
            ChatRecord(pos: 48, threadNo: 8, side: .coach, seq: 3, at: 11, .coaching(CoachingChangeRecord(itemID: "c1", json: "{}"))),
        ]
        #expect(LogStreamCodec.decode(LogStreamCodec.encode(records)) == records)
        #expect(LogStreamCodec.decode(LogStreamCodec.encode([])) == [])
    }

    /// The stream's format is the log's columns, as processes of the version before typed records published them:
    /// a cluster upgraded one process at a time reads its older peers' batches, and they read its.
    @Test func theFormatIsTheStoredColumns() throws {
        let old = #"[{"p":41,"k":0,"t":7,"s":0,"q":12,"a":1,"b":1,"r":"cm-1","y":"{}","at":5},"#
            + #"{"p":42,"k":1,"t":7,"s":1,"q":12,"a":12,"b":11,"r":"read","at":6},"#
            + #"{"p":43,"k":4,"t":7,"s":1,"q":12,"a":10,"b":0,"at":7}]"#
        let records = try #require(LogStreamCodec.decode(old))
        #expect(records.map(\.content) == [
            .message(MessageRecord(kind: .mealLog, clientMessageID: "cm-1", body: "{}", hasAttachments: true)),
            .receipt(ReceiptRecord(delivered: 12, read: 11, readMoved: true)),
            .ratingPrompt(.afterMessages(sent: 10)),
        ])
        #expect(records.map(\.pos) == [41, 42, 43] && records.map(\.side) == [.coach, .client, .client])
        // Encoded again: the same objects, key for key.
        func objects(_ text: String) throws -> NSArray {
            try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? NSArray)
        }
        #expect(try objects(LogStreamCodec.encode(records)) == objects(old))
    }

    @Test func anythingElseIsUnreadable() {
        #expect(LogStreamCodec.decode("") == nil)
        #expect(LogStreamCodec.decode("{}") == nil)
        #expect(LogStreamCodec.decode(#"[{"p":1}]"#) == nil)
        // A kind this version does not know: the whole batch goes back to the store.
        #expect(LogStreamCodec.decode(#"[{"p":1,"k":99,"t":1,"s":0,"q":1,"a":0,"b":0,"at":0}]"#) == nil)
    }
}
