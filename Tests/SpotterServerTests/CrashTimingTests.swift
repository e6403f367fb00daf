import Foundation
import Testing
import TestSupport

/// kill -9 at chosen moments, not only wherever a signal from outside lands: the server arms one fail point
/// (`SPOTTER_FAIL_POINT`, `FailPoint` in SpotterServer) and kills itself when it reaches it, while clients send
/// and session timers fire in several threads. After each restart every thread's seqs are unique and gapless,
/// every acknowledged message is there with the seq its ack gave, and the threads go on from the right seq
/// (new sends and the timers' records after the restart take the next seqs, none twice).
@Suite("Crash timing", .serialized, .tags(.slow))
struct CrashTimingTests {
    /// Each moment, and which time it is reached. `checkpoint.in-flight` is the one that gave a seq twice: a
    /// checkpoint whose snapshots were taken while a timer's record was still being appended marked a log
    /// position that the thread's saved view did not include, so the restart never replayed that record.
    @Test(arguments: ["checkpoint.in-flight:1", "checkpoint.in-flight:2", "checkpoint:2", "timer:1", "timer:3",
                      "commit:30", "applied:60"])
    func seqsStayUniqueAndGaplessThroughAKillAt(_ point: String) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("spotter-failpoint-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var server = try ServerProcess(dataDirectory: directory, environment: ["SPOTTER_FAIL_POINT": point])
        let api = APIClient(port: server.port)
        let (coach, clients, threads) = try api.coachWithClients(3, domain: "timing.test")
        // Invites that lapse unanswered at their start: the timer appends a record in each thread about once a
        // second from now on, before and after the kill.
        let coachSocket = try SpotterSocket(port: server.port, token: coach.access)
        let now = Int(Date().timeIntervalSince1970)
        for (index, thread) in threads.enumerated() {
            for step in 0..<4 {
                _ = try coachSocket.result("session.invite", ["thread_id": thread, "start": now + 2 + step * 2 + index % 2,
                                                              "duration_minutes": 15, "purpose": "p\(index)-\(step)"])
            }
        }

        // The clients send until the server dies at the fail point.
        // Three devices per client, so that sends are often in flight when a checkpoint is taken.
        let burst = MessageBurst(try (0..<9).map { sender in
            let index = sender % 3, device = sender / 3
            return ("c\(index)-d\(device)", try SpotterSocket(port: server.port, token: clients[index].access), threads[index])
        })
        let status = reap(server.process, timeout: 60)
        coachSocket.close()
        if status == nil { server.stop(signal: SIGKILL) }
        let ackedBefore = burst.waitForSenders()  // client_message_id → seq
        try #require(status == SIGKILL, "the server did not reach \(point) within 60 s (status \(String(describing: status)))")

        // Back up: each thread goes on. New sends and the remaining invites' lapses take the next seqs.
        server = try ServerProcess(dataDirectory: directory)
        defer { #expect(server.stop() == 0, "SIGTERM must end the server cleanly") }
        var sockets: [SpotterSocket] = []
        for index in 0..<3 {
            let socket = try SpotterSocket(port: server.port, token: clients[index].access)
            for n in 1...3 {
                _ = try socket.result("message.send", ["thread_id": threads[index], "client_message_id": "after-\(n)", "text": "after \(n)"])
            }
            sockets.append(socket)
        }
        // Every invite's start passes (the last is at now + 9) and the timer lapses it, a second at most after.
        Thread.sleep(forTimeInterval: max(0, Double(now + 12) - Date().timeIntervalSince1970))
        for index in 0..<3 {
            _ = try sockets[index].result("message.send", ["thread_id": threads[index], "client_message_id": "last", "text": "last"])
            let messages = try sockets[index].wholeHistory(threads[index])
            let seqs = messages.compactMap { $0["seq"] as? Int }.sorted()
            let gapless = seqs == Array(1...max(1, seqs.count)).prefix(seqs.count).map { $0 }
            #expect(gapless, "\(point), thread \(index): seqs not unique and gapless: \(Self.repeats(seqs))")
            let stored = Dictionary(messages.compactMap { message -> (String, Int)? in
                guard message["sender_id"] as? String == clients[index].id, let id = message["client_message_id"] as? String,
                      let seq = message["seq"] as? Int else { return nil }
                return (id, seq)
            }, uniquingKeysWith: { first, _ in first })
            for (id, seq) in ackedBefore where id.hasPrefix("c\(index)-") {
                #expect(stored[id] == seq, "\(point): acked \(id) (seq \(seq)) lost or moved (now \(String(describing: stored[id])))")
            }
            for id in ["after-1", "after-2", "after-3", "last"] { #expect(stored[id] != nil, "\(point): \(id) missing") }
            let lapsed = messages.filter { $0["session_id"] != nil }.count
            #expect(lapsed >= 8, "\(point), thread \(index): only \(lapsed) session messages (4 invites, each created and lapsed)")
        }
    }

    /// The seqs that occur more than once, for the failure message.
    static func repeats(_ seqs: [Int]) -> String {
        let counts = Dictionary(seqs.map { ($0, 1) }, uniquingKeysWith: +)
        let twice = counts.filter { $0.value > 1 }.keys.sorted()
        return twice.isEmpty ? "a gap in \(seqs.count) seqs, max \(seqs.last ?? 0)" : "given twice: \(twice)"
    }
}
