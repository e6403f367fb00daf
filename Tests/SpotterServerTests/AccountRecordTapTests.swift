import Foundation
import Testing
@testable import SpotterServer
import TestSupport

/// The process that made an account change logs it once for the cluster's other processes (issue 31): a sign-out,
/// a password change (one record for all the sessions it ends) and a profile change are each one `account` record
/// on thread 0, naming the user, seen here through `--log-tap`. Nothing of them reaches a socket.
@Suite("Account records in the log", .serialized)
struct AccountRecordTapTests {
    @Test func signOutsPasswordAndProfileChangesAreOneAccountRecordEach() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("spotter-account-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let tap = directory + "/tap.jsonl"
        let server = try TestServer(dataDirectory: directory) { config in
            config.logTapPath = tap
            config.logConsumerTiming.pollMilliseconds = 20
        }
        defer { _ = server.stop() }
        let api = APIClient(port: server.port)
        let user = try api.signUp(role: "client", name: "Client", email: "client@record.test")
        let watcher = try SpotterSocket(port: server.port, token: user.access)
        var sessions: [String] = []
        for _ in 0..<3 {
            let signedIn = try api.call("POST", "/v1/auth/signin", ["email": "client@record.test", "password": "secret1"])
            sessions.append(try #require(signedIn.string("refresh_token")))
        }
        #expect(try api.call("POST", "/v1/auth/signout", ["refresh_token": sessions[0]]).status == 204)
        #expect(try api.call("PUT", "/v1/me/password", ["current_password": "secret1", "new_password": "secret2x",
                                                        "new_password_confirmation": "secret2x"], token: user.access).status == 204)
        #expect(try api.call("PUT", "/v1/me", ["full_name": "Renamed"], token: user.access).status == 200)
        // A sign-out with a token already revoked logs nothing again.
        #expect(try api.call("POST", "/v1/auth/signout", ["refresh_token": sessions[0]]).status == 204)
        try waitUntil(10, "the tap holds three account records") { TapFile(tap).lines.filter { $0["kind"] as? String == "account" }.count >= 3 }
        Thread.sleep(forTimeInterval: 0.3)
        let accounts = TapFile(tap).lines.filter { $0["kind"] as? String == "account" }
        #expect(accounts.count == 3, "\(accounts)")
        #expect(accounts.allSatisfy { $0["thread"] as? Int == 0 && $0["ref"] as? String == user.id && $0["seq"] as? Int == 0 })
        // The socket that made the changes heard nothing of them (no event, no cursor).
        #expect(watcher.drain(for: 0.3).isEmpty)
    }
}
