import Foundation
import Testing
import SpotterCore
import TestSupport

/// Webhook deliveries survive `kill -9` (issue 29, item 4): the real `spotter` binary is killed while its
/// receiver refuses deliveries; after a restart every message's event is delivered, with the event id it was
/// first tried under, none lost.
@Suite("Webhooks across kill -9", .serialized, .tags(.slow))
struct WebhookCrashTests {
    @Test func pendingDeliveriesGoAfterARestartWithTheirEventIds() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("spotter-webhook-kill9-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try Self.createAdmin(directory)
        let receiver = try WebhookReceiver()  // answers 503 until configured
        defer { receiver.stop() }
        let arguments = ["--development", "--webhook-retry-base", "50"]
        var server = try ServerProcess(dataDirectory: directory, arguments: arguments)
        var api = APIClient(port: server.port)
        let admin = try #require(try api.call("POST", "/v1/auth/signin", ["email": "ops@crash.test", "password": "adminpass1"])
            .string("access_token"))
        let hook = try api.call("POST", "/v1/admin/webhooks", ["url": receiver.url, "events": ["message.created"]], token: admin)
        let secret = try #require(hook.string("secret"))
        let (_, clients, threads) = try api.coachWithClients(1, domain: "webhook-crash.test")
        let client = try SpotterSocket(port: server.port, token: clients[0].access)
        let sent = (1...20).map { "k\($0)" }
        for id in sent {
            let reply = try client.command("message.send", ["thread_id": threads[0], "client_message_id": id, "text": "text \(id)"])
            #expect(reply["ok"] as? Bool == true)
        }
        // The first is being retried (refused), the rest wait behind it in the outbox.
        try receiver.waitFor(10, "a first attempt") { !$0.isEmpty }
        server.stop(signal: SIGKILL)
        let before = try receiver.log()
        #expect(before.allSatisfy { $0["answered"] as? Int == 503 })

        try receiver.configure(secrets: [secret])
        server = try ServerProcess(dataDirectory: directory, arguments: arguments)
        defer { #expect(server.stop() == 0, "SIGTERM must end the server cleanly") }
        api = APIClient(port: server.port)
        func messageID(_ delivery: [String: Any]) -> String? {
            (WebhookTests.body(delivery)["data"] as? [String: Any])?["client_message_id"] as? String
        }
        let log = try receiver.waitFor(30, "all 20 delivered") { log in
            Set(log.filter { $0["answered"] as? Int == 200 }.compactMap(messageID)).count == 20
        }
        let accepted = log.filter { $0["answered"] as? Int == 200 }
        #expect(Set(accepted.compactMap(messageID)) == Set(sent), "a message's event was lost")
        #expect(accepted.allSatisfy { $0["verified"] as? Bool == true })
        // Those refused before the kill (the receiver did not know the secret yet) were signed alike.
        let now = Int64(Date().timeIntervalSince1970)
        #expect(before.allSatisfy {
            WebhookSignature.verify(header: $0["signature"] as? String ?? "", secret: secret,
                                    body: Array(($0["body"] as? String ?? "").utf8), now: now)
        })
        // One event id per message, whenever it was tried: before the kill, after it, again.
        var idOf: [String: Set<String>] = [:]
        for delivery in log {
            if let message = messageID(delivery), let event = delivery["event_id"] as? String { idOf[message, default: []].insert(event) }
        }
        #expect(idOf.values.allSatisfy { $0.count == 1 }, "\(idOf)")
        // In log order: the first acceptance of each message is in the order they were sent.
        var firstSeen: [String] = []
        for delivery in accepted { if let id = messageID(delivery), !firstSeen.contains(id) { firstSeen.append(id) } }
        #expect(firstSeen == sent)
        // The outbox is empty once all is delivered: no dead letters, nothing new queued by the second run.
        let hookID = try #require(hook.string("id"))
        let signedIn = try #require(try api.call("POST", "/v1/auth/signin", ["email": "ops@crash.test", "password": "adminpass1"])
            .string("access_token"))
        #expect((try api.call("GET", "/v1/admin/webhooks/\(hookID)/dead-letters", token: signedIn).json["dead_letters"] as? [[String: Any]])?.isEmpty == true)
    }

    /// The process kills itself after a consumer handled a batch and before its position is saved
    /// (`consumer.delivered`): the batch is handed over again after the restart, and makes no second delivery.
    @Test func aBatchHandedOverAgainMakesNothingNew() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("spotter-webhook-again-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try Self.createAdmin(directory)
        let receiver = try WebhookReceiver()
        defer { receiver.stop() }
        let arguments = ["--development", "--webhook-retry-base", "50"]
        // Set up on a server without the fail point: the link's record must not set it off.
        var server = try ServerProcess(dataDirectory: directory, arguments: arguments)
        var api = APIClient(port: server.port)
        let admin = try #require(try api.call("POST", "/v1/auth/signin", ["email": "ops@crash.test", "password": "adminpass1"])
            .string("access_token"))
        let secret = try #require(try api.call("POST", "/v1/admin/webhooks", ["url": receiver.url, "events": ["message.created"]],
                                               token: admin).string("secret"))
        try receiver.configure(secrets: [secret])
        let (_, clients, threads) = try api.coachWithClients(1, domain: "webhook-again.test")
        // Every consumer past the link's record before the stop, or the next start hands it over again at once.
        let port = server.port
        try waitUntil(10, "the consumers caught up") {
            guard let text = try? HTTPTestClient(port: port).request("GET", "/metrics").bodyText else { return false }
            let lags = text.split(separator: "\n").filter { $0.hasPrefix("spotter_log_consumer_lag{") }
            return !lags.isEmpty && lags.allSatisfy { $0.hasSuffix(" 0") || $0.hasSuffix(" 0.0") }
        }
        #expect(server.stop() == 0)

        server = try ServerProcess(dataDirectory: directory, arguments: arguments, environment: ["SPOTTER_FAIL_POINT": "consumer.delivered@webhooks:1"])
        let client = try SpotterSocket(port: server.port, token: clients[0].access)
        _ = try? client.command("message.send", ["thread_id": threads[0], "client_message_id": "a1", "text": "before the crash"])
        try waitUntil(10, "the server killed itself at the fail point") { !server.process.isRunning }
        _ = server.stop(signal: SIGKILL)
        // The dispatcher may have sent the queued delivery before the kill without having marked it sent: that one
        // is sent again after the restart (at least once; receivers dedupe by Spotter-Event-Id). Handing the
        // consumer's batch over again must queue nothing new: after the restart each event arrives once.
        let beforeRestart = try receiver.log().count

        server = try ServerProcess(dataDirectory: directory, arguments: arguments)
        defer { #expect(server.stop() == 0) }
        api = APIClient(port: server.port)
        let again = try SpotterSocket(port: server.port, token: clients[0].access)
        let reply = try again.command("message.send", ["thread_id": threads[0], "client_message_id": "a2", "text": "after"])
        #expect(reply["ok"] as? Bool == true)
        let stored = Set(try again.wholeHistory(threads[0]).compactMap { $0["client_message_id"] as? String })
        func messageID(_ delivery: [String: Any]) -> String? {
            (WebhookTests.body(delivery)["data"] as? [String: Any])?["client_message_id"] as? String
        }
        let log = try receiver.waitFor(30, "every stored message delivered") { log in
            Set(log.filter { $0["answered"] as? Int == 200 }.compactMap(messageID)) == stored
        }
        #expect(log.allSatisfy { $0["verified"] as? Bool == true })
        // Each event once after the restart: handing the batch over again queued nothing new.
        let ids = log.dropFirst(beforeRestart).compactMap { $0["event_id"] as? String }
        #expect(ids.count == Set(ids).count, "an event delivered twice after the restart: \(ids)")
    }

    /// `spotter admin create-admin` on the data directory (and the suite's PostgreSQL database in its pass).
    static func createAdmin(_ directory: String) throws {
        let process = Process()
        process.executableURL = ServerProcess.binary
        let store = TestServer.onPostgres ? ["--store", try TestServer.postgresDatabase(for: directory)] : []
        process.arguments = ["admin", "create-admin", "--data-dir", directory, "--email", "ops@crash.test", "--full-name", "Ops",
                             "--log-level", "warning"] + store
        process.environment = ProcessInfo.processInfo.environment.merging(["SPOTTER_ADMIN_PASSWORD": "adminpass1"]) { $1 }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        #expect(reap(process, timeout: 60) == 0, "spotter admin create-admin failed")
    }
}
