import Foundation
import Testing
import TestSupport

/// The per-account session limits are an operator's settings: `spotter serve --session-creates-per-minute` (and
/// its environment variable) reach the real binary's limiter.
extension SessionLimitsTests {
    @Test func theCreateLimitIsSetOnTheCommandLine() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("spotter-limits-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = try ServerProcess(dataDirectory: directory, arguments: ["--session-creates-per-minute", "2"])
        defer { server.stop() }
        let (coach, _, threads) = try APIClient(port: server.port).coachWithClients(1, domain: "flags.test")
        let socket = try SpotterSocket(port: server.port, token: coach.access)
        let start = Int(Date().timeIntervalSince1970) + 86_400
        var codes: [String] = []
        for step in 0..<3 {
            let reply = try socket.command("session.invite", ["thread_id": threads[0], "start": start + step * 3600,
                                                              "duration_minutes": 30, "purpose": "p\(step)"])
            codes.append(errorCode(reply) ?? "ok")
        }
        #expect(codes == ["ok", "ok", "rate_limited"], "\(codes)")
    }
}
