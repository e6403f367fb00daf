import Foundation
import Testing
import TestSupport

/// The real binary as an operator runs it (issue 31 item 3): `/readyz` follows the broker's connection and the
/// announced drain, `/metrics` wants the token, and `--log-format json` writes one JSON object per line.
@Suite("Readiness, metrics token and JSON logs of a cluster process", .serialized)
struct ClusterReadinessTests {
    static let token = "cluster-metrics-token-0123456789"

    @Test func readyzFollowsNATSAndTheDrainWhileLogsAreJSONLines() throws {
        let cluster = try ClusterFixture(processes: 1, options: [
            "--log-format", "json", "--metrics-token", Self.token, "--drain-delay", "60"])
        defer { cluster.stop() }
        let api = APIClient(port: cluster.port(0))
        func readiness() -> (status: Int, field: String?) {
            guard let answer = try? api.call("GET", "/readyz") else { return (0, nil) }
            return (answer.status, (answer.json["error"] as? [String: Any])?["field"] as? String)
        }
        try waitUntil(10, "ready") { readiness().status == 200 }

        // Metrics: the token, not without it.
        #expect(try api.call("GET", "/metrics").status == 401)
        let scraped = try api.call("GET", "/metrics", headers: [("Authorization", "Bearer " + Self.token)])
        #expect(scraped.status == 200 && scraped.text.contains("spotter_connections_open"))

        // The broker away: not ready, and ready again once it is back.
        cluster.nats.stop()
        try waitUntil(10, "not ready without NATS") { readiness() == (503, "broker") }
        #expect(try api.call("GET", "/healthz").status == 200, "liveness does not follow the broker")
        try cluster.nats.start()
        try waitUntil(10, "ready again with NATS") { readiness().status == 200 }

        // SIGTERM with --drain-delay: /readyz says 503 at once while the rest is served.
        let pid = try #require(cluster.pid(0))
        kill(pid, SIGTERM)
        try waitUntil(5, "not ready after SIGTERM") { readiness() == (503, "draining") }
        #expect(try api.call("GET", "/healthz").status == 200)
        #expect(try api.call("GET", "/v1/coaches").status == 401, "the API still answers")

        // The log: every line one JSON object with the four fields; the token is in none of them.
        let log = try String(contentsOfFile: try #require(cluster.logFile(0)), encoding: .utf8)
        let lines = log.split(separator: "\n")
        #expect(lines.count >= 3)
        for line in lines {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            #expect(object?["ts"] is String && object?["level"] is String && object?["label"] is String && object?["message"] is String,
                    "\(line)")
        }
        #expect(lines.contains { $0.contains("\"message\":\"NATS connection lost; reconnecting\"") })
        #expect(!log.contains(Self.token))
    }
}
