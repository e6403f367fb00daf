import Foundation
import Testing
import SpotterCore
import SpotterServer
import TestSupport
import SpotterCore

/// Every example in `Protocol/examples/` is replayed against a live server,
/// so the documentation cannot drift from what the server says.
@Suite("Protocol/ transcripts")
struct ProtocolTranscriptTests {
    static let examples: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Protocol/examples")

    static var transcripts: [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: examples.path)) ?? []
        return names.filter { $0.hasSuffix(".transcript") }.sorted()
    }

    @Test func examplesExist() {
        #expect(Self.transcripts.count >= 8, "found \(Self.transcripts) in \(Self.examples.path)")
    }

    @Test(arguments: transcripts)
    func replay(_ name: String) throws {
        let text = try String(contentsOf: Self.examples.appendingPathComponent(name), encoding: .utf8)
        let transcript = try TranscriptReplayer(name: name, text: text)
        // `# server: --tiers` (or `--ratings`) in a transcript runs it against a server with that setting.
        let lines = Set(text.components(separatedBy: "\n"))
        let server = try TestServer { config in
            config.tiers = lines.contains("# server: --tiers")
            config.ratings = lines.contains("# server: --ratings")
            if lines.contains("# server: --metrics-token") { config.operators.metricsToken = "transcript-metrics-token-0123456789" }
            // Sign in with Apple: the fixture key set, and the clock at the time its tokens were signed for.
            if lines.contains("# server: --identity-fixture") {
                config.clock = TestClock(now: 1_800_000_000)
                config.identity.apple = IdentitySettings.Provider(
                    keys: Self.examples.deletingLastPathComponent().deletingLastPathComponent()
                        .appendingPathComponent("Tests/fixtures/identity/test-provider-jwks.json").path,
                    audiences: ["com.example.spotter"])
            }
        }
        defer { server.stop() }
        // `# server: --admin`: an admin exists (admin@example.com, password adminpass), as `spotter admin create-admin` makes one.
        if lines.contains("# server: --admin") {
            _ = try server.accounts.createUser(id: "00000000-0000-4000-8000-00000000a0d1", role: "admin", fullName: "Admin",
                                               email: "admin@example.com", phone: nil,
                                               passwordHash: PasswordHasher(logN: 10).hash("adminpass"), now: 0)
        }
        // On a cluster (`SPOTTER_TEST_CLUSTER`) too: any difference fails.
        let samples = try transcript.replay(port: server.port)
        if TestCluster.isOn { return }  // the samples are the single process's
        // Tests/scripts/validate-schemas.py checks these against Protocol/schemas.
        let directory = Self.examples.deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent(".build/schema-samples")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let records = samples.map { ["schema": $0.schema, "json": $0.json, "location": $0.location] }
        try JSONSerialization.data(withJSONObject: records).write(to: directory.appendingPathComponent(name + ".json"))
    }

    @Test func replayerCatchesADifference() throws {
        // The replayer itself must fail when the server says something else.
        let wrong = try TranscriptReplayer(name: "wrong", text: """
            C: GET /healthz HTTP/1.1
            C: Host: 127.0.0.1
            C:
            S: HTTP/1.1 404 Not Found
            """)
        let server = try TestServer()
        defer { server.stop() }
        #expect(throws: TranscriptReplayer.Mismatch.self) { try wrong.replay(port: server.port) }
    }
}
