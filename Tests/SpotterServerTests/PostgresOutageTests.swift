import Foundation
import Testing
import TestSupport

/// Cluster mode's store going away under a live server (issue 15): PostgreSQL stops (as a crash would) in the
/// middle of a chat and comes back; the server is not restarted.
@Suite("PostgreSQL outage under a live server", .serialized)
struct PostgresOutageTests {
    @Test func sendsAreRefusedAsUnavailableNeverAckedAndTheChatGoesOnWhenPostgreSQLIsBack() throws {
        let cluster = try PostgresCluster.start()
        defer { cluster.stop() }
        let server = try TestServer(postgresURL: try cluster.makeDatabase())
        defer { server.stop() }
        let (coach, client, thread) = try CoachingFixture.linkedPair(on: server)
        let sender = try SpotterSocket(port: server.port, token: client.access)
        let reader = try SpotterSocket(port: server.port, token: coach.access)
        #expect(try sender.result("message.send", ["thread_id": thread, "client_message_id": "m1", "text": "one"])["seq"] as? Int == 1)
        _ = try reader.next("message")

        try cluster.stopServer(immediate: true)
        // Nothing can be made durable: refused as unavailable, with a retry hint, and never acknowledged.
        var refusals: [String] = []
        for attempt in 0..<3 {
            let reply = try sender.command("message.send", ["thread_id": thread, "client_message_id": "m2", "text": "two \(attempt)"])
            refusals.append(errorCode(reply) ?? "acked")
        }
        #expect(refusals == ["unavailable", "unavailable", "unavailable"])

        try cluster.startServer()
        // The server rebuilds its state once PostgreSQL answers; the client's retry (same id) then lands.
        var seq: Int?
        let deadline = Date().addingTimeInterval(20)
        while seq == nil && Date() < deadline {
            let reply = try sender.command("message.send", ["thread_id": thread, "client_message_id": "m2", "text": "two"])
            seq = (reply["result"] as? [String: Any])?["seq"] as? Int
            if seq == nil {
                #expect(errorCode(reply) == "unavailable")
                Thread.sleep(forTimeInterval: 0.2)
            }
        }
        #expect(seq == 2)
        let history = try sender.result("history", ["thread_id": thread])
        #expect((history["messages"] as? [[String: Any]])?.compactMap { $0["seq"] as? Int } == [2, 1])
        // The coach's socket, which stayed open, gets the message made after the outage.
        let delivered = try reader.next("message")
        #expect(((delivered["message"] as? [String: Any])?["seq"] as? Int) == 2)
    }
}
