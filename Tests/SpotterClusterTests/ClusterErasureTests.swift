import Foundation
import Testing
import TestSupport
import WebSocket

/// An account erased on one process of a cluster is erased on every process: the others follow the log's `erasure`
/// record, close their sockets of the user with 4004 and refuse the user's tokens at once (they do not know the
/// sessions' revocations, only the erasure). Real binaries, real servers, loopback only.
@Suite("Cluster: erasing an account", .serialized)
struct ClusterErasureTests {
    @Test func anErasureOnOneProcessClosesTheSocketsAndRefusesTheTokensOnTheOthers() throws {
        let cluster = try ClusterFixture(processes: 2)
        defer { cluster.stop() }
        let (coach, client, thread) = try cluster.linkedPair("erase", coachOn: 0, clientOn: 1)
        let coachA = try SpotterSocket(port: cluster.port(0), token: coach.access)
        let clientA = try SpotterSocket(port: cluster.port(0), token: client.access)  // the client's tablet, on the other process
        let clientB = try SpotterSocket(port: cluster.port(1), token: client.access)
        _ = try clientB.result("message.send", ["thread_id": thread, "client_message_id": "m1", "text": "hello"])
        _ = try coachA.awaitEvent("message", "coachA")

        let erased = try APIClient(port: cluster.port(1)).call("DELETE", "/v1/me", ["password": "secret1"], token: client.access)
        #expect(erased.status == 204, "\(erased.text)")
        #expect(try clientB.ws.awaitClose() == .some(CloseCode(4004)))
        #expect(try clientA.ws.awaitClose() == .some(CloseCode(4004)), "the other process closes its socket too")
        #expect(try coachA.awaitEvent("user.erased", "coachA")["thread_id"] as? String == thread)
        for port in [cluster.port(0), cluster.port(1)] {
            #expect(try APIClient(port: port).call("GET", "/v1/me", token: client.access).errorCode == "session_revoked")
        }
        let listed = try #require((try coachA.result("threads")["threads"] as? [[String: Any]])?.first)
        #expect(listed["peer_erased"] as? Bool == true && listed["peer_name"] == nil && listed["active"] as? Bool == false)
    }
}
