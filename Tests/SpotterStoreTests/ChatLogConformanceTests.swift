import Foundation
import GRDB
import Testing
import SpotterCore
import SpotterPostgres
import SpotterProtocol
@testable import SpotterPorts
@testable import SpotterStore
import TestSupport

/// One engine under test: two threads — "t1" (no 1, coach "c", client "a") and "t2" (no 2, "d" and "b") —
/// each with its `link` record at positions 1 and 2; and how to make the engine's next append fail.
struct EngineUnderTest: Sendable, CustomTestStringConvertible {
    let name: String
    let engine: any ChatLogEngine
    let breakNextAppend: @Sendable () throws -> Void
    let repair: @Sendable () throws -> Void
    var testDescription: String { name }

    static func sqlite() throws -> EngineUnderTest {
        let store = try Store.inMemory()
        let writer = StoreWriter(store: store)
        let log = ChatLog(store: store, writer: writer)
        let accounts = AccountStore(store)
        for (id, role) in [("c", "coach"), ("d", "coach"), ("a", "client"), ("b", "client")] {
            try accounts.createUser(id: id, role: role, fullName: id.uppercased(), email: "\(id)@example.com", phone: nil,
                                    passwordHash: nil, now: 0)
        }
        _ = try waitFor { log.createLink(clientID: "a", coachID: "c", threadID: "t1", now: 10, completion: $0) }
        _ = try waitFor { log.createLink(clientID: "b", coachID: "d", threadID: "t2", now: 11, completion: $0) }
        @Sendable func rename(_ from: String, _ to: String) throws {
            _ = try waitFor { writer.submit({ db in try db.execute(sql: "ALTER TABLE \(from) RENAME TO \(to)") }, completion: $0) }
        }
        return EngineUnderTest(name: "SQLite", engine: log, breakNextAppend: { try rename("log", "logAway") },
                               repair: { try rename("logAway", "log") })
    }

    /// A fresh database in the test process's PostgreSQL cluster (started on first use; the suite fails, with
    /// what to install, where PostgreSQL is missing).
    static func postgres() throws -> EngineUnderTest {
        let cluster = try PostgresCluster.shared()
        let url = try cluster.databaseWithPairs([("c", "a", "t1"), ("d", "b", "t2")])
        let database = String(url.split(separator: "/").last!)
        let log = PostgresChatLog(store: try PostgresStore(url: url))
        return EngineUnderTest(name: "PostgreSQL", engine: log,
                               breakNextAppend: { try cluster.psql(database, "ALTER TABLE log RENAME TO logAway") },
                               repair: { try cluster.psql(database, "ALTER TABLE logAway RENAME TO log") })
    }

    static func memory() throws -> EngineUnderTest {
        func row(_ id: String, _ no: Int64, _ coach: String, _ client: String, _ at: Int64) -> ThreadRow {
            ThreadRow(id: id, no: no, coachID: coach, clientID: client, createdAt: at, active: true, lastSeq: 0,
                      lastMessageAt: nil, lastPreview: nil, lastSide: nil, lastPos: 0,
                      coach: .init(delivered: 0, read: 0), client: .init(delivered: 0, read: 0))
        }
        let log = MemoryChatLog(threads: [row("t1", 1, "c", "a", 10), row("t2", 2, "d", "b", 11)],
                                names: ["a": "A", "b": "B", "c": "C", "d": "D"])
        _ = try waitFor { log.append([ChatRecord(threadNo: 1, side: .client, seq: 0, at: 10, .link(LinkChangeRecord(active: true))),
                                      ChatRecord(threadNo: 2, side: .client, seq: 0, at: 11, .link(LinkChangeRecord(active: true)))],
                                     completion: $0) }
        return EngineUnderTest(name: "memory", engine: log, breakNextAppend: { log.failNextAppend() }, repair: {})
    }
}

/// The contract of `ChatLogEngine`, held against every engine.
@Suite("ChatLogEngine conformance", .serialized)
struct ChatLogConformanceTests {
    static func engines() throws -> [EngineUnderTest] { [try .sqlite(), try .memory(), try .postgres()] }

    func message(_ thread: Int64, _ side: Side, _ seq: Int64, _ ref: String, kind: MessageKind = .text, at: Int64? = nil) -> ChatRecord {
        ChatRecord(threadNo: thread, side: side, seq: seq, at: at ?? 1000 + seq,
                   .message(MessageRecord(kind: kind, clientMessageID: ref, body: "body \(ref)")))
    }

    /// The messages' client_message_ids (nil for a record of another kind).
    func ids(_ records: [ChatRecord]) -> [String?] { records.map(\.content.message?.clientMessageID) }

    @Test(arguments: try engines())
    func appendsGetIncreasingPositionsAndReadBackByThread(_ under: EngineUnderTest) throws {
        let log = under.engine
        let records = [message(1, .client, 1, "m1"), message(2, .coach, 1, "n1"), message(1, .coach, 2, "m2"),
                       ChatRecord(threadNo: 1, side: .client, seq: 2, at: 5, .receipt(ReceiptRecord(delivered: 2, read: 2, readMoved: true))),
                       message(1, .client, 3, "m3")]
        let positions = try waitFor { log.append(records, completion: $0) }
        #expect(positions == [3, 4, 5, 6, 7])
        let after = try log.records(threadNos: [1, 2], after: 3, limit: 10)
        #expect(after.map(\.pos) == [4, 5, 6, 7])
        #expect(after[2].content == .receipt(ReceiptRecord(delivered: 2, read: 2, readMoved: true)))
        #expect(after[1].content.message?.body == "body m2" && after[1].side == .coach && after[1].at == 1002)
        #expect(try log.records(threadNos: [1, 2], after: 3, limit: 2).map(\.pos) == [4, 5])
        #expect(try log.records(threadNos: [2], after: 0, limit: 10).map(\.pos) == [2, 4])
        #expect(try log.records(threadNos: [], after: 0, limit: 10).isEmpty)
        // History: messages only, newest first, before a seq.
        #expect(try log.history(threadNo: 1, beforeSeq: nil, limit: 10).map(\.seq) == [3, 2, 1])
        #expect(ids(try log.history(threadNo: 1, beforeSeq: 3, limit: 1)) == ["m2"])
        // Ordered reads see every append before them.
        #expect(try waitFor { log.message(threadNo: 1, seq: 2, completion: $0) }?.content.message?.body == "body m2")
        #expect(try waitFor { log.message(threadNo: 1, seq: 9, completion: $0) } == nil)
        let window = try waitFor { log.recentSends(threadNo: 1, limit: 2, completion: $0) }
        #expect(window == [SentKey(side: .client, clientMessageID: "m3", seq: 3), SentKey(side: .coach, clientMessageID: "m2", seq: 2)])
        // A session record is in the history when it is the thread's system message, not otherwise.
        _ = try waitFor { log.append([
            ChatRecord(threadNo: 1, side: .coach, seq: 3, at: 8,
                       .session(SessionRecord(sessionID: "old", isSystemMessage: false, byParticipant: true, json: "{}"))),
            ChatRecord(threadNo: 1, side: .coach, seq: 4, at: 9,
                       .session(SessionRecord(sessionID: "s1", isSystemMessage: true, byParticipant: true, json: "{}"))),
        ], completion: $0) }
        let history = try log.history(threadNo: 1, beforeSeq: nil, limit: 10)
        #expect(history.map(\.seq) == [4, 3, 2, 1] && history.first?.content.session?.sessionID == "s1")
        #expect(try waitFor { log.recentSends(threadNo: 1, limit: 5, completion: $0) }.map(\.seq) == [3, 2, 1])
        // Meal logs (messages of kind 1) of several threads, newest first across them, paged by position.
        let meal = message(1, .client, 5, "meal1", kind: .mealLog)
        let otherMeal = message(2, .client, 2, "meal2", kind: .mealLog)
        let lastMeal = message(1, .client, 6, "meal3", kind: .mealLog)
        let mealPositions = try waitFor { log.append([meal, otherMeal, message(1, .coach, 7, "text"), lastMeal], completion: $0) }
        #expect(ids(try log.meals(threadNos: [1, 2], before: nil, limit: 10)) == ["meal3", "meal2", "meal1"])
        #expect(ids(try log.meals(threadNos: [1, 2], before: nil, limit: 2)) == ["meal3", "meal2"])
        #expect(ids(try log.meals(threadNos: [1, 2], before: mealPositions[1], limit: 10)) == ["meal1"])
        #expect(ids(try log.meals(threadNos: [2], before: nil, limit: 10)) == ["meal2"])
        #expect(try log.meals(threadNos: [], before: nil, limit: 10).isEmpty)
        // A client's sends since a time count their own messages only, not a service's system messages.
        let before = try waitFor { log.sendsSince(threadNos: [1, 2], side: .client, since: 0, completion: $0) }
        let system = message(1, .client, 8, "svc-1", kind: .system)
        _ = try waitFor { log.append([system], completion: $0) }
        #expect(try waitFor { log.sendsSince(threadNos: [1, 2], side: .client, since: 0, completion: $0) } == before)
    }

    func change(_ target: Int64, _ change: MessageChangeRecord.Change, seq: Int64, at: Int64, side: Side = .client) -> ChatRecord {
        ChatRecord(threadNo: 1, side: side, seq: seq, at: at, .change(MessageChangeRecord(target: target, change: change, wasLast: false)))
    }

    /// An edit or a delete rewrites its message in the append's transaction, an older change of the same message
    /// loses its text, an edit that comes after a delete changes nothing; an erasure empties the user's own words
    /// in every thread of theirs and nothing else. Every engine alike (`MessageForgetting`, `MemoryChatLog`).
    @Test(arguments: try engines())
    func changesRewriteTheirMessageAndAnErasureEmptiesOnlyTheUsersWords(_ under: EngineUnderTest) throws {
        let log = under.engine
        _ = try waitFor { log.append([message(1, .client, 1, "m1"), message(1, .coach, 2, "m2"), message(1, .client, 3, "m3"),
                                      message(2, .client, 1, "other")], completion: $0) }
        _ = try waitFor { log.append([change(1, .edit(body: "first edit", attached: false), seq: 3, at: 2000)], completion: $0) }
        _ = try waitFor { log.append([change(1, .edit(body: "second edit", attached: false), seq: 3, at: 2001),
                                      change(3, .delete(by: .sender), seq: 3, at: 2002)], completion: $0) }
        var history = try log.history(threadNo: 1, beforeSeq: nil, limit: 10)
        let first = try #require(history.first { $0.seq == 1 }?.content.message)
        #expect(first.body == "second edit" && first.editedAt == 2001 && first.deletedAt == nil && first.clientMessageID == "m1")
        let third = try #require(history.first { $0.seq == 3 }?.content.message)
        #expect(third.body == "" && third.deletedAt == 2002 && third.editedAt == nil && third.clientMessageID == "m3")
        #expect(history.first { $0.seq == 2 }?.content.message?.body == "body m2")
        // The change records: the older edit's text is forgotten, the newest kept.
        var changes = try log.records(threadNos: [1], after: 0, limit: 50).compactMap(\.content.change)
        #expect(changes.map(\.change) == [.edit(body: nil, attached: false), .edit(body: "second edit", attached: false),
                                          .delete(by: .sender)])
        // An edit decided before a delete it did not see: the message stays deleted, and the edit keeps no text.
        _ = try waitFor { log.append([change(3, .edit(body: "zombie", attached: false), seq: 3, at: 2003)], completion: $0) }
        #expect(try log.history(threadNo: 1, beforeSeq: nil, limit: 10).first { $0.seq == 3 }?.content.message?.body == "")
        changes = try log.records(threadNos: [1], after: 0, limit: 50).compactMap(\.content.change)
        #expect(changes.last?.change == .edit(body: nil, attached: false))
        // The ordered read a retry makes sees the rewrite.
        #expect(try waitFor { log.message(threadNo: 1, seq: 1, completion: $0) }?.content.message?.body == "second edit")
        // Client "a" (of thread 1) is erased: their messages are tombstones, their edits' texts gone; the coach's
        // message and thread 2 (another client's) are untouched.
        _ = try waitFor { log.append([ChatRecord(threadNo: 0, side: .coach, seq: 0, at: 3000, .erasure(ErasureRecord(userID: "a")))],
                                     completion: $0) }
        history = try log.history(threadNo: 1, beforeSeq: nil, limit: 10)
        #expect(history.filter { $0.side == .client }.allSatisfy { $0.content.message?.body == "" && $0.content.message?.deletedAt != nil })
        #expect(history.first { $0.seq == 1 }?.content.message?.deletedAt == 3000)
        #expect(history.first { $0.seq == 2 }?.content.message?.body == "body m2")
        #expect(try log.records(threadNos: [1], after: 0, limit: 50).compactMap(\.content.change)
            .allSatisfy { if case .edit(let body, _) = $0.change { body == nil } else { true } })
        #expect(try log.history(threadNo: 2, beforeSeq: nil, limit: 10).first?.content.message?.body == "body other")
    }

    /// A process of a cluster claims no more than it followed: the mark is `through` when records above it were
    /// committed (by others), and a start replays them.
    @Test(arguments: try engines())
    func aCheckpointClaimsNoPositionAboveThrough(_ under: EngineUnderTest) throws {
        let log = under.engine
        let records = [message(1, .client, 1, "m1"), message(1, .coach, 2, "m2"), message(1, .client, 3, "m3")]
        let positions = try waitFor { log.append(records, completion: $0) }
        let mark = try waitFor { log.checkpoint([], first: true, last: true, through: positions[0], completion: $0) }
        #expect(mark == positions[0])
        #expect(ids(try log.load().tail) == ["m2", "m3"])
    }

    @Test(arguments: try engines())
    func aStartLoadsTheCheckpointAndReplaysOnlyWhatCameAfter(_ under: EngineUnderTest) throws {
        let log = under.engine
        let state = try log.load().makeState()
        var records = [message(1, .client, 1, "m1"), message(1, .coach, 2, "m2")]
        for record in records { state.apply(record) }
        let positions = try waitFor { log.append(records, completion: $0) }
        for index in records.indices { records[index].pos = positions[index] }
        for record in records { state.committed(record) }  // as the hub does once the append completed
        let snapshots = state.takeDirty()
        // Two parts: the mark is taken by the first and saved by the last.
        _ = try waitFor { log.checkpoint(Array(snapshots.prefix(1)), first: true, last: false, completion: $0) }
        let late = message(1, .client, 3, "m3")
        state.apply(late)
        _ = try waitFor { log.append([late], completion: $0) }
        let mark = try waitFor { log.checkpoint(Array(snapshots.dropFirst()), first: false, last: true, completion: $0) }
        #expect(mark == positions.last)

        let loaded = try log.load()
        #expect(ids(loaded.tail) == ["m3"])
        #expect(loaded.threads.map(\.id) == ["t1", "t2"])
        let t1 = try #require(loaded.threads.first { $0.id == "t1" })
        #expect(t1.lastSeq == 2 && t1.lastPreview == "body m2" && t1.lastSide == .coach)
        #expect(t1.coach.read == 2 && t1.client.read == 1)
        #expect(t1.lastPos == 5)
        let restarted = loaded.makeState()
        let thread = try #require(restarted.thread(id: "t1"))
        #expect(thread.lastSeq == 3 && thread.committedSeq == 3 && thread.readSeq(.client) == 3)
        #expect(restarted.totalUnread("c") == 1)
        #expect(restarted.names["a"] == "A")
    }

    /// A start reads the sessions, the coaching record and the meal times through queries of their own (in the
    /// SQL engines, by the record's kind and, for meals, the message's kind in `a`; see `LogSQL`): with one record
    /// of every kind in the log, each gets exactly its own, whatever else shares a seq or an `a`.
    @Test(arguments: try engines())
    func aStartLoadsSessionsCoachingAndMealsFromTheirOwnKindsOnly(_ under: EngineUnderTest) throws {
        let log = under.engine
        func session(_ status: SessionStatus, version: Int) -> String {
            let session = Session(id: "s1", threadID: "t1", coachID: "c", clientID: "a", start: 2_000_000_000,
                                  durationMinutes: 30, purpose: "p", meetURL: "https://meet.example/s1", status: status,
                                  version: version)
            let body = SessionRecordBody(change: "created", actor: .coach, action: nil, before: nil, after: session)
            return String(decoding: try! JSONEncoder().encode(body), as: UTF8.self)
        }
        let checkIn = RecordBody(change: "check_in.created", checkIn: CheckInView(
            id: "ci1", clientId: "a", weightKg: 70, photos: nil, notes: nil, challenges: nil, coachComment: nil,
            commentedAt: nil, createdAt: 30))
        let meal = message(1, .client, 2, "meal", kind: .mealLog, at: 500)
        let otherMeal = message(2, .client, 1, "meal2", kind: .mealLog, at: 600)
        let system = message(1, .client, 3, "svc", kind: .system)
        let checkInJSON = String(decoding: try JSONEncoder().encode(checkIn), as: UTF8.self)
        let records = [
            message(1, .client, 1, "text"), meal, otherMeal, system,
            ChatRecord(threadNo: 1, side: .coach, seq: 3, at: 20, .receipt(ReceiptRecord(delivered: 1, read: 1, readMoved: true))),
            ChatRecord(threadNo: 1, side: .coach, seq: 3, at: 21, .session(SessionRecord(
                sessionID: "s1", isSystemMessage: false, byParticipant: true, json: session(.scheduled, version: 1)))),
            ChatRecord(threadNo: 1, side: .client, seq: 4, at: 22, .session(SessionRecord(
                sessionID: "s1", isSystemMessage: true, byParticipant: true, json: session(.cancelled, version: 2)))),
            ChatRecord(threadNo: 1, side: .client, seq: 4, at: 23, .ratingPrompt(.afterMessages(sent: 1))),
            ChatRecord(threadNo: 1, side: .client, seq: 4, at: 24, .tier(TierRecord(tier: "premium"))),
            ChatRecord(threadNo: 1, side: .client, seq: 4, at: 30, .coaching(CoachingChangeRecord(itemID: "ci1", json: checkInJSON))),
        ]
        _ = try waitFor { log.append(records, completion: $0) }
        let loaded = try log.load()
        #expect(loaded.sessions.map(\.id) == ["s1"])
        #expect(loaded.sessions.first?.status == .cancelled && loaded.sessions.first?.version == 2)
        #expect(loaded.coaching.checkIns(of: "a").map(\.id) == ["ci1"])
        #expect(loaded.mealTimes == [1: [500], 2: [600]])
    }

    @Test(arguments: try engines())
    func aFailedAppendHaltsTheLogUntilResumed(_ under: EngineUnderTest) throws {
        let log = under.engine
        try under.breakNextAppend()
        #expect(throws: (any Error).self) { try waitFor { log.append([message(1, .client, 1, "x")], completion: $0) } }
        try under.repair()
        // Seqs were given out after the lost record: nothing is appended until resumed.
        #expect(throws: ChatLogError.halted) { try waitFor { log.append([message(1, .client, 2, "y")], completion: $0) } }
        log.resume()
        #expect(try waitFor { log.append([message(1, .client, 1, "x")], completion: $0) } == [3])
        #expect(ids(try log.history(threadNo: 1, beforeSeq: nil, limit: 10)) == ["x"])
    }
}
