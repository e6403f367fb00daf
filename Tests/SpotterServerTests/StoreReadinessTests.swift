import Foundation
import Testing
import TestSupport

/// `/readyz` while the store is away (issue 31 item 3): PostgreSQL stops under a live server, a write fails, and
/// the process says it is not ready until its state is set back from the store again.
@Suite("Readiness while PostgreSQL is away", .serialized)
struct StoreReadinessTests {
    /// `sentBefore`: the thread's recent sends are in memory, so the send reaches the log's append and fails there
    /// (the state is set back); otherwise the read of those sends fails first.
    @Test(arguments: [false, true])
    func readyzRefusesWhileTheStoreFailsAndRecoversWithPostgreSQL(sentBefore: Bool) throws {
        let cluster = try PostgresCluster.start()
        defer { cluster.stop() }
        let server = try TestServer(postgresURL: try cluster.makeDatabase())
        defer { server.stop() }
        let (_, client, thread) = try CoachingFixture.linkedPair(on: server)
        let sender = try SpotterSocket(port: server.port, token: client.access)
        let api = APIClient(port: server.port)
        #expect(try api.call("GET", "/readyz").status == 200)
        if sentBefore {
            #expect(try sender.result("message.send", ["thread_id": thread, "client_message_id": "m0", "text": "before"])["seq"] as? Int == 1)
        }

        try cluster.stopServer(immediate: true)
        let refused = try sender.command("message.send", ["thread_id": thread, "client_message_id": "m1", "text": "while away"])
        #expect(errorCode(refused) == "unavailable")
        let away = try api.call("GET", "/readyz")
        #expect(away.status == 503 && away.errorCode == "unavailable")
        #expect((away.json["error"] as? [String: Any])?["field"] as? String == "store")
        #expect(try api.call("GET", "/healthz").status == 200, "liveness does not follow the store")

        try cluster.startServer()
        try waitUntil(20, "ready once PostgreSQL is back") { (try? api.call("GET", "/readyz").status) == 200 }
        let sent = try sender.command("message.send", ["thread_id": thread, "client_message_id": "m1", "text": "while away"])
        #expect((sent["result"] as? [String: Any])?["seq"] as? Int == (sentBefore ? 2 : 1))
    }
}
