import Foundation
import Testing
import TestSupport

/// `--broker-subjects`: two deployments on one `nats-server` keep apart when their prefixes differ. Without it
/// (one prefix) a process follows the other deployment's thread 1 as its own — `aSessionChangeGuessedPastTheLogLeavesNoGap`
/// shows what that does: its session changes are refused `unavailable`. Real processes, loopback only.
@Suite("Cluster: a deployment's own NATS subjects", .serialized)
struct ClusterSubjectsTests {
    @Test func twoDeploymentsWithTheirOwnPrefixesOnOneNATSServerDoNotMix() throws {
        let (cluster, coachSocket, thread, other, otherSocket, otherThread) = try ClusterFixture.twoDeploymentsOnOneNATS(
            options: ["--broker-subjects", "deploy-a.prod"], otherOptions: ["--broker-subjects", "deploy-b.prod"])
        defer { other.stop(); cluster.stop() }
        // The other deployment's messages did not run this one's thread ahead: the invite lands at once.
        let invite = try coachSocket.command("session.invite", ["thread_id": thread, "start": Int(Date().timeIntervalSince1970) + 86_400,
                                                                "duration_minutes": 30, "purpose": "Plan"])
        #expect(invite["ok"] as? Bool == true, "\(invite)")
        _ = try coachSocket.result("message.send", ["thread_id": thread, "client_message_id": "x1", "text": "x 1"])
        let history = try #require(try coachSocket.result("history", ["thread_id": thread])["messages"] as? [[String: Any]])
        #expect(history.compactMap { $0["seq"] as? Int } == [2, 1])
        #expect(history.compactMap { $0["text"] as? String }.allSatisfy { !$0.hasPrefix("y ") })
        let otherHistory = try #require(try otherSocket.result("history", ["thread_id": otherThread])["messages"] as? [[String: Any]])
        #expect(otherHistory.compactMap { $0["seq"] as? Int } == [4, 3, 2, 1])
        #expect(cluster.processesThatLogged("followed a record of an unknown thread").isEmpty)
        #expect(other.processesThatLogged("followed a record of an unknown thread").isEmpty)
    }

    /// A prefix that is not plain tokens joined by dots is refused before the server starts, and so is the
    /// option without `--broker`.
    @Test(arguments: ["", "a.*", ">", "a..b", ".a", "a.", "a b", "é", String(repeating: "x", count: 65)])
    func aMalformedPrefixIsRefused(_ prefix: String) throws {
        let (status, text) = try ServerProcess.serveUntilExit(["--broker", "nats://127.0.0.1:9", "--store", "postgres://127.0.0.1:9/none",
                                                    "--broker-subjects=\(prefix)"])
        #expect(status != 0)
        #expect(text.contains("--broker-subjects"), "\(text)")
    }

    @Test func thePrefixWithoutABrokerIsRefused() throws {
        let (status, text) = try ServerProcess.serveUntilExit(["--broker-subjects", "acme"])
        #expect(status != 0)
        #expect(text.contains("--broker-subjects is for cluster mode"), "\(text)")
    }
}
