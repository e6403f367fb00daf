import Foundation
import Testing
import TestSupport

/// An edit and a delete made on one process reach devices on the others, and every process's views (the list's
/// preview, history) show the message as it now stands: the change record is followed like any other.
@Suite("Cluster: edits and deletes across processes", .serialized)
struct ClusterMessageChangeTests {
    @Test func anEditAndADeleteOnOneProcessAreSeenOnTheOthers() throws {
        let cluster = try ClusterFixture(processes: 3)
        defer { cluster.stop() }
        let (coach, client, thread) = try cluster.linkedPair("changes", coachOn: 0, clientOn: 1)
        let coachA = try SpotterSocket(port: cluster.port(0), token: coach.access)
        let clientB = try SpotterSocket(port: cluster.port(1), token: client.access)
        let clientC = try SpotterSocket(port: cluster.port(2), token: client.access)
        let sent = try clientB.result("message.send", ["thread_id": thread, "client_message_id": "m1", "text": "first words"])
        let seq = try #require(sent["seq"] as? Int)
        #expect(message(try coachA.awaitEvent("message", "coachA"))["text"] as? String == "first words")

        // Edited on C (the client's tablet, another process than the one that took the send), once the tablet has
        // the message: C knows a seq only after following it, and answers `not_found` for one it has not followed yet.
        #expect(message(try clientC.awaitEvent("message", "clientC"))["seq"] as? Int == seq)
        let edited = try clientC.result("message.edit", ["thread_id": thread, "seq": seq, "text": "better words"])
        #expect(edited["text"] as? String == "better words")
        #expect(try coachA.awaitEvent("message.edited", "coachA")["text"] as? String == "better words")
        #expect(try clientB.awaitEvent("message.edited", "clientB")["seq"] as? Int == seq)
        // Deleted on B; the coach on A hears it and A's list no longer previews the words.
        _ = try clientB.result("message.delete", ["thread_id": thread, "seq": seq])
        #expect(try coachA.awaitEvent("message.deleted", "coachA")["seq"] as? Int == seq)
        let threads = try coachA.result("threads")["threads"] as? [[String: Any]] ?? []
        #expect(threads.first { $0["thread_id"] as? String == thread }?["last_preview"] as? String == "🚫")
        let history = try coachA.result("history", ["thread_id": thread])["messages"] as? [[String: Any]] ?? []
        #expect(history.count == 1 && history.first?["text"] == nil && history.first?["deleted_at"] != nil)
        // An edit sent to a process that learned of the delete only by following it is refused there.
        let late = try clientC.command("message.edit", ["thread_id": thread, "seq": seq, "text": "again"])
        #expect((late["error"] as? [String: Any])?["code"] as? String == "message_deleted", "\(late)")
    }
}
