import Foundation
import Testing
import TestSupport

/// Interest by thread (issue 33, item 4): a process applies another process's chat records only for threads one of
/// whose participants is connected to it (or all of them while it holds the timer lease). Here process C, which
/// holds no lease and no socket of a thread's participants, passes the thread's records over (its `/metrics`
/// counter says so), and when a participant then connects to C it serves the thread as the others do: history,
/// unread counts, a resume from a cursor, its next seq and new messages live, each once and in order.
@Suite("Cluster: a process applies only the threads its sockets need", .serialized)
struct ClusterInterestTests {
    /// Three processes; `c` holds no timer lease (its holder applies every record), `a` and `b` are the others.
    static func cluster() throws -> (cluster: ClusterFixture, a: Int, b: Int, c: Int) {
        let cluster = try ClusterFixture(processes: 3)
        try waitUntil(10, "a process holding the timers") { !cluster.processesThatLogged("holding the session timers").isEmpty }
        let holders = cluster.processesThatLogged("holding the session timers")
        let c = try #require([2, 1, 0].first { !holders.contains($0) })
        let others = [0, 1, 2].filter { $0 != c }
        return (cluster, others[0], others[1], c)
    }

    /// A counter of process `index`'s `/metrics` (0 when it is not there).
    static func counter(_ name: String, _ cluster: ClusterFixture, _ index: Int) throws -> Int {
        let text = try APIClient(port: cluster.port(index)).call("GET", "/metrics").text
        for line in text.split(separator: "\n") where line.hasPrefix(name + " ") {
            return Int(Double(line.split(separator: " ").last ?? "") ?? 0)
        }
        return 0
    }

    static func seqs(_ socket: SpotterSocket, _ thread: String) throws -> [Int] {
        // Newest first on the wire; each seq once.
        (try socket.result("history", ["thread_id": thread])["messages"] as? [[String: Any]] ?? []).compactMap { $0["seq"] as? Int }.sorted()
    }

    static func listed(_ socket: SpotterSocket, _ thread: String) throws -> [String: Any] {
        (try socket.result("threads", [:])["threads"] as? [[String: Any]] ?? []).first { $0["thread_id"] as? String == thread } ?? [:]
    }

    @Test func aThreadWithNoParticipantHereIsPassedOverThenServedWhenOneConnectsAndLeavesAndComesBack() throws {
        let (cluster, a, b, c) = try Self.cluster()
        defer { cluster.stop() }
        let (coach, client, thread) = try cluster.linkedPair("interest", coachOn: a, clientOn: b)
        let coachOnA = try SpotterSocket(port: cluster.port(a), token: coach.access)
        let clientOnB = try SpotterSocket(port: cluster.port(b), token: client.access)
        let passedBefore = try Self.counter("spotter_cluster_passed_over_records_total", cluster, c)
        for index in 1...5 {
            let sent = try clientOnB.result("message.send", ["thread_id": thread, "client_message_id": "m\(index)", "text": "m\(index)"])
            #expect(sent["seq"] as? Int == index)
        }
        let atA = coachOnA.messages(atLeast: 5)
        #expect(atA.count == 5)
        let lastCursor = atA.compactMap { $0["cursor"] as? Int }.max() ?? Int.max
        // C has no socket of either participant: it applied none of the five, A (the coach is there) did.
        try waitUntil(5, "C passing the five messages over") {
            (try? Self.counter("spotter_cluster_passed_over_records_total", cluster, c)) ?? 0 >= passedBefore + 5
        }
        #expect(try Self.counter("spotter_cluster_passed_over_records_total", cluster, a) == 0, "A has the coach's socket")

        // The coach's laptop connects to C: the thread is read again first, then served as A serves it.
        let refreshedBefore = try Self.counter("spotter_cluster_threads_refreshed_total", cluster, c)
        let coachOnC = try SpotterSocket(port: cluster.port(c), token: coach.access)
        #expect(try Self.counter("spotter_cluster_threads_refreshed_total", cluster, c) == refreshedBefore + 1)
        #expect(coachOnC.helloCursor >= lastCursor, "hello on C: \(coachOnC.helloCursor), last message at \(lastCursor)")
        let history = try Self.seqs(coachOnC, thread)
        #expect(history == [1, 2, 3, 4, 5], "history on C: \(history)")
        let row = try Self.listed(coachOnC, thread)
        #expect(row["last_seq"] as? Int == 5 && row["unread"] as? Int == 5, "\(row)")
        // Its next seq is the thread's (a stale view would give 1 and the store would refuse it).
        let reply = try coachOnC.command("message.send", ["thread_id": thread, "client_message_id": "r1", "text": "reply"])
        #expect((reply["result"] as? [String: Any])?["seq"] as? Int == 6, "\(reply)")
        // New messages reach C live, once each, in order.
        _ = coachOnC.drain(for: 0.3)
        for index in 6...8 {
            _ = try clientOnB.result("message.send", ["thread_id": thread, "client_message_id": "m\(index)", "text": "m\(index)"])
        }
        let live = coachOnC.messages(atLeast: 3).map { message($0)["seq"] as? Int ?? 0 }
        #expect(live == [7, 8, 9], "live on C: \(live)")
        #expect(coachOnC.drain(for: 0.5).filter { $0["type"] as? String == "message" }.isEmpty, "a message twice")
        // A resume on C from the hello's cursor of A's socket replays every message after it once, in order.
        let resumed = try SpotterSocket(port: cluster.port(c), token: coach.access)
        #expect(try resumed.command("resume", ["cursor": coachOnA.helloCursor])["ok"] as? Bool == true)
        let replay = resumed.messages(atLeast: 9).map { message($0)["seq"] as? Int ?? 0 }
        #expect(replay == Array(1...9), "resume on C: \(replay)")

        // The coach leaves C: C lets the thread go again, and reads it once more when the coach comes back.
        coachOnC.close()
        resumed.close()
        Thread.sleep(forTimeInterval: 0.3)
        let passedMid = try Self.counter("spotter_cluster_passed_over_records_total", cluster, c)
        for index in 9...11 {
            _ = try clientOnB.result("message.send", ["thread_id": thread, "client_message_id": "m\(index)", "text": "m\(index)"])
        }
        try waitUntil(5, "C passing the three over") {
            (try? Self.counter("spotter_cluster_passed_over_records_total", cluster, c)) ?? 0 >= passedMid + 3
        }
        let back = try SpotterSocket(port: cluster.port(c), token: coach.access)
        let historyBack = try Self.seqs(back, thread)
        #expect(historyBack == Array(1...12), "history on C: \(historyBack)")
        let again = try Self.listed(back, thread)
        let onA = try Self.listed(coachOnA, thread)
        #expect(again["last_seq"] as? Int == 12 && again["unread"] as? Int != nil && again["unread"] as? Int == onA["unread"] as? Int,
                "C: \(again) A: \(onA)")
        let next = try back.command("message.send", ["thread_id": thread, "client_message_id": "r2", "text": "back"])
        #expect((next["result"] as? [String: Any])?["seq"] as? Int == 13, "\(next)")
        #expect(message(try clientOnB.awaitEvent("message", "clientOnB"))["seq"] as? Int != nil)
    }

    /// A coach with a client on each of two processes, and no socket anywhere: both processes pass the other's
    /// thread over. The coach connecting to the third sees the unread of both threads, and the total with them.
    @Test func aCoachWithThreadsOnTwoProcessesSeesTheTotalUnreadOnAThird() throws {
        let (cluster, a, b, c) = try Self.cluster()
        defer { cluster.stop() }
        let coach = try APIClient(port: cluster.port(a)).signUp(role: "coach", name: "Coach", email: "coach@total.test")
        var threads: [String] = []
        var sockets: [SpotterSocket] = []
        for (index, process) in [a, b].enumerated() {
            let client = try APIClient(port: cluster.port(process)).signUp(role: "client", name: "C\(index)", email: "c\(index)@total.test")
            let link = try APIClient(port: cluster.port(process)).call("POST", "/v1/me/coach", ["coach_id": coach.id], token: client.access)
            threads.append(try #require(link.string("thread_id")))
            sockets.append(try SpotterSocket(port: cluster.port(process), token: client.access))
        }
        Thread.sleep(forTimeInterval: 0.5)
        let passedBefore = try Self.counter("spotter_cluster_passed_over_records_total", cluster, c)
        for (index, socket) in sockets.enumerated() {
            for number in 1...(index + 2) {
                _ = try socket.result("message.send", ["thread_id": threads[index], "client_message_id": "x\(number)", "text": "x"])
            }
        }
        try waitUntil(5, "C passing both threads over") {
            (try? Self.counter("spotter_cluster_passed_over_records_total", cluster, c)) ?? 0 >= passedBefore + 5
        }
        let coachOnC = try SpotterSocket(port: cluster.port(c), token: coach.access)
        #expect(try Self.listed(coachOnC, threads[0])["unread"] as? Int == 2)
        #expect(try Self.listed(coachOnC, threads[1])["unread"] as? Int == 3)
        _ = try sockets[0].result("message.send", ["thread_id": threads[0], "client_message_id": "y", "text": "y"])
        let event = try coachOnC.awaitEvent("message", "coachOnC")
        #expect(event["unread"] as? Int == 3 && event["total_unread"] as? Int == 6, "\(event)")
    }

    /// The timer lease's holder applies every record (its timers and consumers read any thread): a process taking
    /// it over reads the threads it had passed over first, and passes nothing over while it holds it.
    @Test func aProcessTakingTheLeaseReadsWhatItPassedOverAndThenAppliesEverything() throws {
        let (cluster, a, b, holder) = try { () throws -> (ClusterFixture, Int, Int, Int) in
            let (cluster, a, b, c) = try Self.cluster()
            let holder = try #require(cluster.processesThatLogged("holding the session timers").first)
            let others = [a, b, c].filter { $0 != holder }
            return (cluster, others[0], others[1], holder)
        }()
        defer { cluster.stop() }
        // One pair on each of the two processes without the lease: each passes the other's thread over.
        var sockets: [(SpotterSocket, String)] = []
        for (index, process) in [a, b].enumerated() {
            let (coach, client, thread) = try cluster.linkedPair("lease\(index)", coachOn: process, clientOn: process)
            _ = coach
            sockets.append((try SpotterSocket(port: cluster.port(process), token: client.access), thread))
        }
        for (socket, thread) in sockets {
            for number in 1...3 { _ = try socket.result("message.send", ["thread_id": thread, "client_message_id": "l\(number)", "text": "x"]) }
        }
        try waitUntil(5, "both passing the other's thread over") {
            [a, b].allSatisfy { ((try? Self.counter("spotter_cluster_passed_over_records_total", cluster, $0)) ?? 0) >= 3 }
        }
        cluster.kill9(holder)
        try waitUntil(20, "another process holding the timers") {
            !cluster.processesThatLogged("holding the session timers").isEmpty
        }
        let taker = try #require(cluster.processesThatLogged("holding the session timers").first)
        #expect(try Self.counter("spotter_cluster_threads_refreshed_total", cluster, taker) >= 1, "the stale thread read first")
        let passed = try Self.counter("spotter_cluster_passed_over_records_total", cluster, taker)
        for (socket, thread) in sockets {
            for number in 4...5 { _ = try socket.result("message.send", ["thread_id": thread, "client_message_id": "l\(number)", "text": "x"]) }
        }
        Thread.sleep(forTimeInterval: 0.5)
        #expect(try Self.counter("spotter_cluster_passed_over_records_total", cluster, taker) == passed, "the holder passes nothing over")
    }
}
