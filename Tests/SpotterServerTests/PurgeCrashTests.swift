import Foundation
import Testing
import TestSupport

/// The purge is a durable consumer of the log: a delete acknowledged, then kill -9 before the purge's time. The
/// words are still on disk then (the WAL holds the page they were written in); after the restart the purge
/// consumer comes to the delete again and takes them off by `--purge-within`, with nothing lost of what stays.
@Suite("Purge through a crash", .serialized, .tags(.slow))
struct PurgeCrashTests {
    @Test func aDeleteAcknowledgedBeforeAKillIsPurgedAfterTheRestart() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("spotter-purgecrash-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var server = try ServerProcess(dataDirectory: directory, arguments: ["--purge-within", "6"])
        let (_, clients, threads) = try APIClient(port: server.port).coachWithClients(1, domain: "purgecrash.test")
        let marker = "CRASH-MARKER-\(UUID().uuidString)"
        var socket = try SpotterSocket(port: server.port, token: clients[0].access)
        let sent = try socket.result("message.send", ["thread_id": threads[0], "client_message_id": "secret", "text": marker])
        _ = try socket.result("message.send", ["thread_id": threads[0], "client_message_id": "kept", "text": "this stays"])
        _ = try socket.result("message.delete", ["thread_id": threads[0], "seq": sent["seq"]!])
        #expect(server.stop(signal: SIGKILL) == SIGKILL)
        // Acknowledged, not yet purged: a file still holds the words.
        #expect(!MessagePurgeTests.filesHolding(Array(marker.utf8), under: directory).isEmpty)

        server = try ServerProcess(dataDirectory: directory, arguments: ["--purge-within", "6"])
        defer { #expect(server.stop() == 0) }
        try waitUntil(20, "the purge after the restart took the words off the disk") {
            MessagePurgeTests.filesHolding(Array(marker.utf8), under: directory).isEmpty
        }
        // The delete and the message that stays both survived the kill.
        socket = try SpotterSocket(port: server.port, token: clients[0].access)
        let history = try socket.result("history", ["thread_id": threads[0]])["messages"] as? [[String: Any]] ?? []
        #expect(history.count == 2)
        #expect(history.contains { $0["seq"] as? Int == sent["seq"] as? Int && $0["deleted_at"] != nil && $0["text"] == nil })
        #expect(history.contains { $0["text"] as? String == "this stays" })
    }
}
