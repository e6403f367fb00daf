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
        if TestCluster.isOn {
            // The differences found on three processes and not fixed yet are known issues (printed, not failing);
            // any other mismatch fails as always.
            try withKnownIssue("a difference on a cluster (ProtocolTranscriptTests.differencesOnACluster)", isIntermittent: true) {
                _ = try transcript.replay(port: server.port)
            } matching: { issue in
                guard let mismatch = issue.error as? TranscriptReplayer.Mismatch else { return false }
                guard let known = Self.differencesOnACluster.first(where: { $0.matches(mismatch) }) else { return false }
                print("known difference on a cluster: \(known.reason) — \(mismatch.file):\(mismatch.line)")
                return true
            }
            return
        }
        let samples = try transcript.replay(port: server.port)
        // Tests/scripts/validate-schemas.py checks these against Protocol/schemas.
        let directory = Self.examples.deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent(".build/schema-samples")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let records = samples.map { ["schema": $0.schema, "json": $0.json, "location": $0.location] }
        try JSONSerialization.data(withJSONObject: records).write(to: directory.appendingPathComponent(name + ".json"))
    }

    /// Where transcripts differ on a cluster (`SPOTTER_TEST_CLUSTER=3`, each connection on the next process, the
    /// nodes settled before each): bugs of the cluster path this pass found. Remove an entry with its fix.
    static let differencesOnACluster: [(reason: String, matches: @Sendable (TranscriptReplayer.Mismatch) -> Bool)] = [
        // A logged event reaches the sender's own socket after the unlogged ones its command made: the follower
        // holds a process's own events until the record's turn; quota and participants go out at once.
        ("the sender's `quota` event comes before its own `message` event", { $0.file == "tiers.transcript" && $0.line == 68 }),
        ("`challenge_participants` comes before the challenge's `record` event", { $0.file == "dashboard.transcript" && $0.line == 60 }),
        // Seen once (before frames waited for the nodes to settle): the signed-out token still worked on another
        // process for a moment, before that process followed the sign-out's `account` record.
        ("a signed-out access token still works for a moment on another process", { $0.file == "sign-out.transcript" && $0.line == 39 }),
    ]

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
