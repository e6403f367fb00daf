import Foundation
import SeededRandom
import Synchronization
import Testing
import SpotterCore
import SpotterPostgres
import SpotterPorts
import TestSupport

/// What the PostgreSQL log guarantees beyond the engine contract (held by `ChatLogConformanceTests` for every
/// engine): several writers on one database — one per process in a cluster — and a server that goes away.
@Suite("PostgreSQL log", .serialized)
struct PostgresChatLogTests {
    static func message(_ thread: Int64, _ seq: Int64, _ ref: String, side: Side = .client) -> ChatRecord {
        ChatRecord(threadNo: thread, side: side, seq: seq, at: 1000 + seq, .message(MessageRecord(clientMessageID: ref, body: "body \(ref)")))
    }

    /// A database with `threads` threads ("t1"… between coach "cN" and client "aN"), numbered 1…, and their
    /// `link` records at positions 1….
    static func database(threads: Int, in cluster: PostgresCluster) throws -> String {
        try cluster.databaseWithPairs((1...threads).map { ("c\($0)", "a\($0)", "t\($0)") })
    }

    /// One engine on its own store (its own writer connection): what one Spotter process of a cluster has.
    static func log(_ url: String) throws -> PostgresChatLog {
        PostgresChatLog(store: try PostgresStore(url: url))
    }

    @Test func twoWritersGetPositionsInCommitOrderWithNoGapAReaderCouldSee() throws {
        let cluster = try PostgresCluster.shared()
        let url = try Self.database(threads: 2, in: cluster)
        let writers = [try Self.log(url), try Self.log(url)]
        defer { for writer in writers { writer.store.close() } }
        let reader = try Self.log(url)
        defer { reader.store.close() }

        let perWriter = 400
        let done = DispatchGroup()
        let failures = Mutex<[String]>([])
        let finished = Mutex(0)
        for (index, writer) in writers.enumerated() {
            done.enter()
            Thread.detachNewThread {
                defer { finished.withLock { $0 += 1 }; done.leave() }
                let thread = Int64(index + 1)
                // Batches of 1-3 records, each waited for, so the two writers' transactions interleave.
                var seq: Int64 = 0
                while seq < Int64(perWriter) {
                    let count = Int(seq % 3) + 1
                    let records = (0..<count).map { offset in PostgresChatLogTests.message(thread, seq + Int64(offset) + 1, "w\(index)-\(seq + Int64(offset) + 1)") }
                    do {
                        _ = try waitFor { writer.append(records, completion: $0) }
                    } catch {
                        failures.withLock { $0.append("writer \(index): \(error)") }
                        return
                    }
                    seq += Int64(count)
                }
            }
        }
        // Meanwhile, resume as a client would: from the last position seen. A position below one already seen
        // arriving later would be a record that resume skipped.
        var seen: [Int64] = []
        var last: Int64 = 2
        let deadline = Date().addingTimeInterval(60)
        while seen.count < 2 * perWriter && Date() < deadline {
            let writing = finished.withLock { $0 } < writers.count
            let page = try reader.records(threadNos: [1, 2], after: last, limit: 50)
            if page.isEmpty && !writing { break }
            for record in page {
                #expect(record.pos > last, "resume went backwards: \(record.pos) after \(last)")
                last = max(last, record.pos)
                seen.append(record.pos)
            }
        }
        done.wait()
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")
        #expect(seen.count == 2 * perWriter)
        #expect(seen == Array(3...Int64(2 + 2 * perWriter)), "positions are not gapless and in order")
        // Each thread's messages came back in seq order, all of them.
        for thread in [Int64(1), 2] {
            let history = try reader.history(threadNo: thread, beforeSeq: nil, limit: 1000)
            #expect(history.map(\.seq) == Array((1...Int64(perWriter)).reversed()))
        }
    }

    /// What a follower reads from the store: everything after a position, across threads and writers, in order,
    /// through a bound if given; fed through a `LogSequencer` with the live stream, each record comes out once.
    @Test func aFollowerFillsItsGapsFromTheStore() throws {
        let cluster = try PostgresCluster.shared()
        let url = try Self.database(threads: 2, in: cluster)
        let a = try Self.log(url), b = try Self.log(url)
        defer { a.store.close(); b.store.close() }
        for seq in 1...5 as ClosedRange<Int64> {
            _ = try waitFor { a.append([Self.message(1, seq, "a\(seq)")], completion: $0) }
            _ = try waitFor { b.append([Self.message(2, seq, "b\(seq)")], completion: $0) }
        }
        // Positions 1 and 2 are the link records; the ten messages follow, alternating writers.
        #expect(try a.recordsAfter(2, limit: 100).map(\.pos) == Array(3...12))
        #expect(try a.recordsAfter(4, through: 6, limit: 100).map(\.pos) == [5, 6])
        #expect(try b.recordsAfter(2, limit: 3).map(\.content.message?.clientMessageID) == ["a1", "b1", "a2"])

        // A follower that heard only B's publications: A's records are gaps, filled from the store.
        var sequencer = LogSequencer(after: 2)
        let heard = try b.recordsAfter(2, limit: 100).filter { $0.threadNo == 2 }
        var out = sequencer.receive(heard, now: 0)
        #expect(out.isEmpty && sequencer.waitingCount == 5)
        var clock: UInt64 = 100
        while let gap = sequencer.gap(now: clock, patience: 100) {
            out += sequencer.receive(try a.recordsAfter(gap.after, through: gap.through, limit: 100), now: clock)
            clock += 100  // each newly exposed gap waits its patience again
        }
        #expect(out.map(\.pos) == Array(3...12) && sequencer.waitingCount == 0)
    }

    @Test func aStaleWriterCannotStoreASecondMessageUnderATakenSeq() throws {
        let cluster = try PostgresCluster.shared()
        let url = try Self.database(threads: 1, in: cluster)
        let a = try Self.log(url)
        let b = try Self.log(url)
        defer { a.store.close(); b.store.close() }
        _ = try waitFor { a.append([Self.message(1, 1, "from-a")], completion: $0) }
        // B's memory of the thread is stale: it gives out seq 1 again.
        #expect(throws: (any Error).self) { try waitFor { b.append([Self.message(1, 1, "from-b", side: .coach)], completion: $0) } }
        // Halted until its owner has reloaded (as after any failed append), then seq 2 is fine.
        #expect(throws: ChatLogError.halted) { try waitFor { b.append([Self.message(1, 2, "from-b")], completion: $0) } }
        b.resume()
        _ = try waitFor { b.append([Self.message(1, 2, "from-b", side: .coach)], completion: $0) }
        #expect(try a.history(threadNo: 1, beforeSeq: nil, limit: 10).map(\.content.message?.clientMessageID) == ["from-b", "from-a"])
        // Records that are not messages share the thread's last seq, as in every engine.
        _ = try waitFor { a.append([ChatRecord(threadNo: 1, side: .client, seq: 2, at: 5,
                                               .receipt(ReceiptRecord(delivered: 2, read: 2, readMoved: true)))], completion: $0) }
    }

    @Test func aServerOutageFailsAppendsWithoutAFalseAckAndTheLogRecoversWithoutARestart() throws {
        let cluster = try PostgresCluster.start()
        defer { cluster.stop() }
        let url = try Self.database(threads: 1, in: cluster)
        let log = try Self.log(url)
        defer { log.store.close() }
        let acked = try waitFor { log.append([Self.message(1, 1, "before")], completion: $0) }
        #expect(acked == [2])

        try cluster.stopServer(immediate: true)
        let refused = Result { try waitFor { log.append([Self.message(1, 2, "during")], completion: $0) } }
        guard case .failure(let error) = refused else {
            Issue.record("an append was acknowledged with PostgreSQL down")
            return
        }
        #expect((error as? PostgresError)?.isConnectionLost == true, "\(error)")
        #expect(throws: (any Error).self) { try log.history(threadNo: 1, beforeSeq: nil, limit: 10) }

        try cluster.startServer()
        log.resume()  // what the messaging hub does once it has reloaded its state
        // The writer and the readers reconnect by themselves.
        #expect(try waitFor { log.append([Self.message(1, 2, "after")], completion: $0) } == [3])
        #expect(try log.history(threadNo: 1, beforeSeq: nil, limit: 10).map(\.content.message?.clientMessageID) == ["after", "before"])
        // The acknowledged record survived PostgreSQL's crash (an immediate stop skips the shutdown checkpoint).
        #expect(try log.load().tail.map(\.pos) == [1, 2, 3])
    }

    /// The sessions' invariant with writers on several processes (three engines on one database, each on its own
    /// thread, as three Spotter processes would be): random bookings and cancellations for one coach and four
    /// clients on crowded slots. Whatever interleaving happens, no user ends up in two overlapping sessions that
    /// hold their time, every refusal is the database's exclusion constraint, and what the log holds is exactly
    /// what the writers were told was accepted.
    @Test func noUserIsInTwoOverlappingSessionsWhicheverProcessBooks() throws {
        let cluster = try PostgresCluster.shared()
        let url = try cluster.databaseWithPairs((1...4).map { ("c", "a\($0)", "t\($0)") })
        let writers = try (0..<3).map { _ in try Self.log(url) }
        defer { for writer in writers { writer.store.close() } }

        struct Outcome { var accepted: [String: Session] = [:]; var booked = 0; var refused = 0; var otherErrors: [String] = [] }
        let outcomes = Mutex([Outcome](repeating: Outcome(), count: writers.count))
        let group = DispatchGroup()
        let base: Int64 = 1_900_000_000
        for (w, writer) in writers.enumerated() {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                var random = SeededGenerator(seed: UInt64(w + 1) * 0x9E37_79B9)
                var mine: [Session] = []
                for step in 0..<80 {
                    var session: Session
                    if !mine.isEmpty && random.next() % 4 == 0 {
                        session = mine.remove(at: Int(random.next() % UInt64(mine.count)))
                        session.status = .cancelled
                        session.version += 1
                    } else {
                        let client = Int(random.next() % 4) + 1
                        session = Session(id: "s\(w)-\(step)", threadID: "t\(client)", coachID: "c", clientID: "a\(client)",
                                          start: base + Int64(random.next() % 16) * 900, durationMinutes: [30, 45, 60][Int(random.next() % 3)],
                                          purpose: "p", meetURL: "https://meet.example/\(w)-\(step)", status: .scheduled)
                    }
                    let body = SessionRecordBody(change: session.status == .cancelled ? "cancel" : "created", actor: .coach,
                                                 action: nil, before: nil, after: session)
                    let json = String(decoding: try! JSONEncoder().encode(body), as: UTF8.self)
                    let threadNo = Int64(session.threadID.dropFirst())!
                    let record = ChatRecord(threadNo: threadNo, side: .coach, seq: 0, at: base, .session(SessionRecord(
                        sessionID: session.id, isSystemMessage: false, byParticipant: true, json: json)))
                    do {
                        _ = try waitFor { writer.append([record], completion: $0) }
                        outcomes.withLock {
                            $0[w].accepted[session.id] = session
                            if session.status == .scheduled { $0[w].booked += 1 }
                        }
                        if session.status == .scheduled { mine.append(session) }
                    } catch let error as PostgresError where error.sqlState == "23P01" {
                        outcomes.withLock { $0[w].refused += 1 }
                        writer.resume()
                    } catch {
                        outcomes.withLock { $0[w].otherErrors.append("\(error)") }
                        writer.resume()
                    }
                }
            }
        }
        #expect(group.wait(timeout: .now() + 120) == .success)
        let results = outcomes.withLock { $0 }
        #expect(results.allSatisfy { $0.otherErrors.isEmpty }, "\(results.flatMap(\.otherErrors))")
        let refused = results.map(\.refused).reduce(0, +)
        #expect(refused > 0, "no booking collided: the test proves nothing")

        // The log as a start reads it: the newest state of each session.
        let stored = try writers[0].load().sessions
        let believed = results.reduce(into: [String: Session]()) { all, outcome in all.merge(outcome.accepted) { $1 } }
        #expect(Set(stored.map(\.id)) == Set(believed.keys))
        for session in stored { #expect(session.status == believed[session.id]?.status, "\(session.id)") }
        let holding = stored.filter { $0.status.holdsTime }
        // Bookings went through as well as collided (whatever the interleaving's cancellations left at the end:
        // a run can end with a single session holding time, which says nothing against the invariant).
        #expect(results.map(\.booked).reduce(0, +) > 1, "no booking was accepted: the test proves nothing")
        for user in ["c", "a1", "a2", "a3", "a4"] {
            let theirs = holding.filter { $0.coachID == user || $0.clientID == user }.sorted { $0.start < $1.start }
            for (earlier, later) in zip(theirs, theirs.dropFirst()) {
                #expect(earlier.start + Int64(earlier.durationMinutes) * 60 <= later.start,
                        "\(user) is in \(earlier.id) and \(later.id) at once")
            }
        }
    }

    @Test func textsComeBackByteForByteWhateverTheyHold() throws {
        let cluster = try PostgresCluster.shared()
        let url = try Self.database(threads: 1, in: cluster)
        let log = try Self.log(url)
        defer { log.store.close() }
        let texts = [#"quote " and backslash \ and \" both"#, "{braces},commas,\"NULL\"", "NULL", "", " spaced ",
                     "مرحبا كيف حالك؟", "emoji 👋🏽 and\nnew\tlines", #"{"json": "card", "kcal": [1, 2]}"#, "a\u{0}b"]
        var records = texts.enumerated().map { index, text in
            ChatRecord(threadNo: 1, side: .client, seq: Int64(index + 1), at: 7, .message(MessageRecord(clientMessageID: text, body: text)))
        }
        // A record whose `ref` and `body` are NULL.
        records.append(ChatRecord(threadNo: 1, side: .coach, seq: Int64(texts.count), at: 7,
                                  .receipt(ReceiptRecord(delivered: 1, read: 0, readMoved: false))))
        _ = try waitFor { log.append(records, completion: $0) }
        let stored = try log.records(threadNos: [1], after: 1, limit: 100).map(\.content.columns)
        #expect(stored.map(\.body) == texts.map { $0.replacingOccurrences(of: "\u{0}", with: "") } + [nil])
        #expect(stored.map(\.ref) == texts.map { $0.replacingOccurrences(of: "\u{0}", with: "") } + [nil])
    }

    @Test func migrationsApplyOnceAndAreListed() throws {
        let cluster = try PostgresCluster.shared()
        let url = try cluster.makeDatabase()
        #expect(try PostgresSchema.migrate(url: url) == ["v1-accounts", "v2-log", "v3-session-slots", "v4-log-consumers", "v5-devices", "v6-notifications", "v7-reminder-channels", "v8-push-outbox", "v10-webhooks", "v11-service-tier", "v12-erasure", "v13-onboarding-fields", "v14-session-feedback", "v15-availability", "v16-ai-quota", "v18-identity-links", "v19-goal-preferences", "v20-rate-limits"])
        #expect(try PostgresSchema.migrate(url: url) == [])
        #expect(try PostgresSchema.applied(url: url) == ["v1-accounts", "v2-log", "v3-session-slots", "v4-log-consumers", "v5-devices", "v6-notifications", "v7-reminder-channels", "v8-push-outbox", "v10-webhooks", "v11-service-tier", "v12-erasure", "v13-onboarding-fields", "v14-session-feedback", "v15-availability", "v16-ai-quota", "v18-identity-links", "v19-goal-preferences", "v20-rate-limits"])
        #expect(throws: PostgresError.self) { try PostgresSchema.migrate(url: cluster.url(database: "no_such_database")) }
    }

    @Test func theMigrateCommandCreatesTheSchema() throws {
        let cluster = try PostgresCluster.shared()
        let url = try cluster.makeDatabase()
        let first = try PostgresCluster.run(ServerProcess.binary.path, ["migrate", "--store", url])
        #expect(first.contains("migrations applied now: v1-accounts, v2-log, v3-session-slots, v4-log-consumers, v5-devices, v6-notifications, v7-reminder-channels"), "\(first)")
        let second = try PostgresCluster.run(ServerProcess.binary.path, ["migrate", "--store", url])
        #expect(second.contains("migrations applied now: none") && second.contains("migrations applied: v1-accounts, v2-log, v3-session-slots, v4-log-consumers, v5-devices, v6-notifications, v7-reminder-channels"), "\(second)")
        #expect(throws: (any Error).self) { try PostgresCluster.run(ServerProcess.binary.path, ["migrate", "--store", "mysql://x"]) }
    }
}
