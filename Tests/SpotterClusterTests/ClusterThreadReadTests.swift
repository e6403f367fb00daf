import Foundation
import Testing
import TestSupport

/// A process that does not know a thread yet reads it from the store before refusing a command on it. A client
/// linked on one process used to get `forbidden` (which apps are told not to retry) on its first send through
/// another process that had not yet followed the link record; here the log stream is down (NATS stopped), so the
/// other process would learn the link only from its once-a-second read of the store: the send comes first.
@Suite("Cluster: a thread not followed yet", .serialized)
struct ClusterThreadReadTests {
    @Test func aSendOnAThreadAnotherProcessJustLinkedIsAcceptedNotForbidden() throws {
        let cluster = try ClusterFixture(processes: 2)
        defer { cluster.stop() }
        for round in 0..<3 {
            let coach = try APIClient(port: cluster.port(0)).signUp(role: "coach", name: "Coach", email: "coach\(round)@read.test")
            let client = try APIClient(port: cluster.port(0)).signUp(role: "client", name: "Client", email: "client\(round)@read.test")
            let clientOn1 = try SpotterSocket(port: cluster.port(1), token: client.access)
            let coachOn1 = try SpotterSocket(port: cluster.port(1), token: coach.access)
            cluster.nats.stop()
            let link = try APIClient(port: cluster.port(0)).call("POST", "/v1/me/coach", ["coach_id": coach.id], token: client.access)
            let thread = try #require(link.string("thread_id"), "\(link.json)")
            // At once, on the other process: both sides, and a read of the thread.
            let first = try clientOn1.command("message.send", ["thread_id": thread, "client_message_id": "m1", "text": "first"])
            #expect(first["ok"] as? Bool == true, "round \(round): \(first)")
            #expect((first["result"] as? [String: Any])?["seq"] as? Int == 1)
            let answer = try coachOn1.command("message.send", ["thread_id": thread, "client_message_id": "r1", "text": "answer"])
            #expect((answer["result"] as? [String: Any])?["seq"] as? Int == 2, "round \(round): \(answer)")
            let history = try clientOn1.result("history", ["thread_id": thread])
            #expect((history["messages"] as? [[String: Any]])?.count == 2)
            try cluster.nats.start()
            // The process that linked sees both messages, in order, once its follower reads them.
            let coachOn0 = try SpotterSocket(port: cluster.port(0), token: coach.access)
            var seqs: [Int] = []
            for _ in 0..<40 {
                seqs = (try coachOn0.result("history", ["thread_id": thread])["messages"] as? [[String: Any]] ?? []).compactMap { $0["seq"] as? Int }
                if seqs.count == 2 { break }
                Thread.sleep(forTimeInterval: 0.1)
            }
            #expect(seqs.sorted() == [1, 2], "round \(round): process 0 has \(seqs)")
        }
        // An unknown thread is still refused: a read of the store finds nothing.
        let outsider = try APIClient(port: cluster.port(1)).signUp(role: "client", name: "Outsider", email: "outsider@read.test")
        let socket = try SpotterSocket(port: cluster.port(1), token: outsider.access)
        let refused = try socket.command("message.send", ["thread_id": UUID().uuidString.lowercased(), "client_message_id": "x", "text": "x"])
        #expect(errorCode(refused) == "forbidden")
    }
}
