import Foundation
import Testing
import SpotterCore
import SpotterPostgres
import SpotterPorts
import TestSupport

/// Seqs given by the database (`SeqGivingLog`, issue 33 item 4): two engines on one database — two processes of a
/// cluster — that guess the same seqs for one thread both land, numbered after each other under the append lock;
/// a send already stored (a retry racing its original on another process) is refused instead of stored twice.
@Suite("PostgreSQL log: seqs given by the database", .serialized)
struct PostgresSeqGivingTests {
    typealias T = PostgresChatLogTests

    static func appended(_ log: PostgresChatLog, _ records: [ChatRecord]) throws -> [ChatRecord] {
        try waitFor { log.appendGivingSeqs(records, completion: $0) }
    }

    @Test func twoWritersGuessingTheSameSeqsBothLandNumberedInCommitOrder() throws {
        let cluster = try PostgresCluster.shared()
        let url = try T.database(threads: 2, in: cluster)
        let a = try T.log(url)
        let b = try T.log(url)
        defer { a.store.close(); b.store.close() }
        // Both guess 1 and 2 for thread 1; B's batch also holds a receipt that guessed seq 2 and a message of
        // thread 2, whose own numbering is independent.
        let first = try Self.appended(a, [T.message(1, 1, "a1"), T.message(1, 2, "a2")])
        #expect(first.map(\.seq) == [1, 2])
        let second = try Self.appended(b, [
            T.message(1, 1, "b1", side: .coach),
            ChatRecord(threadNo: 1, side: .coach, seq: 9, at: 5, .receipt(ReceiptRecord(delivered: 3, read: 3, readMoved: true))),
            T.message(2, 1, "t2-1", side: .coach),
            T.message(1, 2, "b2", side: .coach),
        ])
        #expect(second.map(\.seq) == [3, 3, 1, 4], "stored seqs: \(second.map(\.seq))")
        #expect(second.map(\.pos) == second.map(\.pos).sorted() && Set(second.map(\.pos)).count == 4)
        #expect(second.allSatisfy { $0.pos > first.last!.pos })
        let history = try a.history(threadNo: 1, beforeSeq: nil, limit: 10)
        #expect(history.map(\.seq) == [4, 3, 2, 1])
        #expect(history.map { $0.content.message?.clientMessageID } == ["b2", "b1", "a2", "a1"])
        // A guess far ahead (a stale, wrong memory) is numbered right after the last one all the same.
        #expect(try Self.appended(a, [T.message(1, 1_000, "a3")]).map(\.seq) == [5])
        // A batch of no messages passes untouched.
        let receipt = ChatRecord(threadNo: 1, side: .client, seq: 5, at: 6, .receipt(ReceiptRecord(delivered: 5, read: 5, readMoved: true)))
        #expect(try Self.appended(b, [receipt]).map(\.seq) == [5])
    }

    @Test func aSendStoredBeforeIsRefusedNotStoredTwice() throws {
        let cluster = try PostgresCluster.shared()
        let url = try T.database(threads: 1, in: cluster)
        let a = try T.log(url)
        let b = try T.log(url)
        defer { a.store.close(); b.store.close() }
        _ = try Self.appended(a, [T.message(1, 1, "m1"), T.message(1, 2, "m2")])
        // B has not followed A: the client's retry of m1 reaches B, which takes it for new.
        #expect(throws: SeqGivingError.sentBefore) {
            _ = try Self.appended(b, [T.message(1, 1, "m1")])
        }
        // Halted as after any failed append, until its owner set the thread back.
        #expect(throws: ChatLogError.halted) { _ = try Self.appended(b, [T.message(1, 3, "m3")]) }
        b.resume()
        // The same id from the other side, or another id, is a new message.
        #expect(try Self.appended(b, [T.message(1, 3, "m1", side: .coach), T.message(1, 3, "m3")]).map(\.seq) == [3, 4])
        #expect(try a.history(threadNo: 1, beforeSeq: nil, limit: 10).count == 4)
        // A service's messages (system) are not checked: their ids may repeat.
        let system = ChatRecord(threadNo: 1, side: .coach, seq: 5, at: 9,
                                .message(MessageRecord(kind: .system, clientMessageID: "m1", body: "{}")))
        #expect(try Self.appended(a, [system]).map(\.seq) == [5])
    }

    /// A session's system message keeps its guessed seq, and so does the rest of its thread's batch: a session
    /// changed on a stale view is refused by the thread's unique seq, as before, not numbered past the change
    /// it did not know.
    @Test func aSessionsSystemMessageKeepsItsGuessAndCollides() throws {
        let cluster = try PostgresCluster.shared()
        let url = try T.database(threads: 1, in: cluster)
        let a = try T.log(url)
        let b = try T.log(url)
        defer { a.store.close(); b.store.close() }
        let session = { (seq: Int64) in
            ChatRecord(threadNo: 1, side: .coach, seq: seq, at: 7,
                       .session(SessionRecord(sessionID: "s1", isSystemMessage: true, byParticipant: true, json: "{}")))
        }
        #expect(try Self.appended(a, [session(1)]).map(\.seq) == [1])
        // B did not know it: its own change of the session, with a message in the same batch, is refused whole.
        #expect(throws: (any Error).self) { _ = try Self.appended(b, [T.message(1, 1, "b1"), session(2)]) }
        b.resume()
        // A right guess lands, and a message batch after it is numbered as usual.
        #expect(try Self.appended(b, [session(2)]).map(\.seq) == [2])
        #expect(try Self.appended(a, [T.message(1, 2, "a1")]).map(\.seq) == [3])
    }
    /// A thread that keeps its guesses (a session's system message in the batch) must guess exactly the next seq:
    /// a guess past the thread's last would be stored as guessed and leave a gap (the sessions suite on three
    /// processes saw history `[4, 3, 1]`: a process whose memory ran ahead of the log). Refused whole; the log
    /// is halted as after any failed append until its owner set the state back, and the right guess lands.
    @Test func aSessionsGuessPastTheNextSeqIsRefusedNotStoredWithAGap() throws {
        let cluster = try PostgresCluster.shared()
        let url = try T.database(threads: 2, in: cluster)
        let a = try T.log(url)
        defer { a.store.close() }
        let session = { (thread: Int64, seq: Int64) in
            ChatRecord(threadNo: thread, side: .coach, seq: seq, at: 7,
                       .session(SessionRecord(sessionID: "s\(thread)", isSystemMessage: true, byParticipant: true, json: "{}")))
        }
        #expect(try Self.appended(a, [T.message(1, 1, "a1")]).map(\.seq) == [1])
        // A memory that ran ahead (it holds 2 where the log holds 1): its session change guesses 3.
        #expect(throws: SeqGivingError.guessAhead) { _ = try Self.appended(a, [session(1, 3)]) }
        a.resume()
        // A message before the session change in the same batch must be the next seq too, and the change after it.
        #expect(throws: SeqGivingError.guessAhead) { _ = try Self.appended(a, [T.message(1, 2, "a2"), session(1, 4)]) }
        a.resume()
        // On a thread with no message yet the first guess must be 1.
        #expect(throws: SeqGivingError.guessAhead) { _ = try Self.appended(a, [session(2, 2)]) }
        a.resume()
        #expect(try Self.appended(a, [session(1, 2), session(2, 1)]).map(\.seq) == [2, 1])
        #expect(try Self.appended(a, [T.message(1, 3, "a3"), session(1, 4)]).map(\.seq) == [3, 4])
        #expect(try a.history(threadNo: 1, beforeSeq: nil, limit: 10).map(\.seq) == [4, 3, 2, 1])
    }
}
