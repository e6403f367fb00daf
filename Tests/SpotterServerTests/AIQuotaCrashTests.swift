import Foundation
import Testing
import SpotterCore
import TestSupport

/// The AI-generation counter survives `kill -9` (issue 30 item 4): it is committed with its idempotency record
/// before the answer, so after a restart the retry gets the first answer and consumes nothing, and the used-up
/// week stays used up.
@Suite("AI-generation quota across kill -9", .serialized, .tags(.slow))
struct AIQuotaCrashTests {
    @Test func anAnsweredConsumeIsCountedAfterAKill() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("spotter-ai-kill9-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try WebhookCrashTests.createAdmin(directory)
        let arguments = ["--development", "--tiers"]
        var server = try ServerProcess(dataDirectory: directory, arguments: arguments)
        var api = APIClient(port: server.port)
        let admin = try #require(try api.call("POST", "/v1/auth/signin", ["email": "ops@crash.test", "password": "adminpass1"])
            .string("access_token"))
        let key = try #require(try api.call("POST", "/v1/admin/api-keys", ["name": "AI", "scopes": ["quota"]], token: admin).string("key"))
        let client = try api.signUp(role: "client", name: "Kai", email: "kai@ai-crash.test")
        let first = try AIQuotaTests.consume(api, client.id, key: key, idempotency: "plan-1")
        #expect(first.status == 200, "\(first.text)")
        server.stop(signal: SIGKILL)

        server = try ServerProcess(dataDirectory: directory, arguments: arguments)
        defer { #expect(server.stop() == 0, "SIGTERM must end the server cleanly") }
        api = APIClient(port: server.port)
        let retry = try AIQuotaTests.consume(api, client.id, key: key, idempotency: "plan-1")
        #expect(retry.status == 200 && retry.text == first.text && retry.headers["Idempotent-Replayed"] == "true")
        let second = try AIQuotaTests.consume(api, client.id, key: key, idempotency: "plan-2")
        #expect(second.status == 429 && second.errorCode == "quota_exceeded", "\(second.text)")
    }
}
