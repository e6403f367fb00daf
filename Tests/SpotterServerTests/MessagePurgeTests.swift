import Foundation
import Testing
import SpotterCore
@testable import SpotterServer
import TestSupport

/// After a delete and a purge, a deleted message's words and its attachment's bytes are in no file under the data
/// directory (and, on PostgreSQL, in no row): the words a list preview, a push outbox row or the WAL held included.
@Suite("Purging what was deleted", .serialized)
struct MessagePurgeTests {
    /// Every file under `directory` (recursively) that contains `needle`.
    static func filesHolding(_ needle: [UInt8], under directory: String) -> [String] {
        let enumerator = FileManager.default.enumerator(atPath: directory)
        var found: [String] = []
        while let relative = enumerator?.nextObject() as? String {
            let path = directory + "/" + relative
            guard let data = FileManager.default.contents(atPath: path), !data.isEmpty else { continue }
            if data.range(of: Data(needle)) != nil { found.append(relative) }
        }
        return found
    }

    static func admin(on server: TestServer) throws -> String {
        _ = try server.accounts.createUser(id: SecureRandom.uuid(), role: "admin", fullName: "Admin", email: "admin@purge.test",
                                           phone: nil, passwordHash: PasswordHasher(logN: 10).hash("adminpass"), now: 0)
        return try APIClient(port: server.port).call("POST", "/v1/auth/signin", ["email": "admin@purge.test", "password": "adminpass"])
            .string("access_token")!
    }

    /// A message with a unique marker and an attachment with unique bytes, sent, then deleted.
    struct Deleted {
        let marker: String
        let picture: [UInt8]
        let attachmentID: String
        let thread: String
        let client: String
    }

    static func sendAndDelete(on server: TestServer) throws -> Deleted {
        let pair = try CoachingFixture.linkedPair(on: server)
        let marker = "PURGE-MARKER-" + Digest.hex(SecureRandom.bytes(8))
        let picture = AttachmentsTests.png + Array(("PICTURE-" + Digest.hex(SecureRandom.bytes(8))).utf8)
        let uploaded = try AttachmentsTests.upload(server, pair.thread, pair.client.access, picture)
        let id = try #require(AttachmentsTests.json(uploaded)["id"] as? String)
        let client = try SpotterSocket(port: server.port, token: pair.client.access)
        let sent = try client.result("message.send", ["thread_id": pair.thread, "client_message_id": "secret",
                                                      "text": "my diagnosis: \(marker)", "attachments": [id]])
        _ = try client.result("message.send", ["thread_id": pair.thread, "client_message_id": "kept", "text": "this one stays"])
        Thread.sleep(forTimeInterval: 1.5)  // a checkpoint saves the list's preview, with the marker, into the thread's row
        // The search finds what is there: before the delete, the words are on disk (SQLite) or in a row (PostgreSQL).
        if let directory = server.server.config.dataDirectory as String?, !TestServer.onPostgres {
            #expect(!filesHolding(Array(marker.utf8), under: directory).isEmpty)
        } else {
            #expect(try !server.postgresTablesHolding(marker).isEmpty)
        }
        _ = try client.result("message.delete", ["thread_id": pair.thread, "seq": sent["seq"]!])
        _ = try client.result("message.delete", ["thread_id": pair.thread, "seq": (sent["seq"] as! Int) + 1])
        client.close()
        return Deleted(marker: marker, picture: picture, attachmentID: id, thread: pair.thread, client: pair.client.access)
    }

    @Test func afterADeleteAndAnAdminPurgeNoFileOrRowHoldsTheWordsOrTheAttachment() throws {
        let directory = NSTemporaryDirectory() + "spotter-purge-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = try TestServer(dataDirectory: directory)
        defer { server.stop() }
        let admin = try Self.admin(on: server)
        let deleted = try Self.sendAndDelete(on: server)
        // The search finds what is there: before the purge, the attachment's bytes are on disk.
        #expect(!Self.filesHolding(deleted.picture, under: directory).isEmpty)
        // An outsider may not purge.
        #expect(try APIClient(port: server.port).call("POST", "/v1/admin/purge", [:], token: deleted.client).status == 403)
        Thread.sleep(forTimeInterval: 2.1)  // files younger than 2 s are an upload's, in flight
        let purged = try APIClient(port: server.port).call("POST", "/v1/admin/purge", [:], token: admin)
        #expect(purged.status == 200)
        #expect(purged["files_removed"] as? Int == 1)
        if !TestServer.onPostgres { #expect(purged["wal_truncated"] as? Bool == true) }
        #expect(Self.filesHolding(Array(deleted.marker.utf8), under: directory) == [])
        #expect(Self.filesHolding(deleted.picture, under: directory) == [])
        #expect(try server.postgresTablesHolding(deleted.marker) == [])
        // The file is gone from its thread too.
        let download = try HTTPTestClient(port: server.port).request(
            "GET", "/v1/threads/\(deleted.thread)/attachments/\(deleted.attachmentID)", headers: [("Authorization", "Bearer \(deleted.client)")])
        #expect(download.status == 404)
    }

    /// What sets the purge consumer off: a record that rewrote words (an edit, a delete, an erasure), nothing else.
    @Test func editsDeletesAndErasuresSetOffThePurgeAndNothingElse() {
        func record(_ content: ChatRecord.Content, thread: Int64 = 1) -> ChatRecord {
            ChatRecord(threadNo: thread, side: .client, seq: 1, at: 0, content)
        }
        #expect(PurgeConsumer.needsPurge(record(.change(MessageChangeRecord(target: 1, change: .delete(by: .sender), wasLast: false)))))
        #expect(PurgeConsumer.needsPurge(record(.change(MessageChangeRecord(target: 1, change: .edit(body: "x", attached: false), wasLast: true)))))
        #expect(PurgeConsumer.needsPurge(record(.erasure(ErasureRecord(userID: "u")), thread: 0)))
        #expect(!PurgeConsumer.needsPurge(record(.message(MessageRecord(clientMessageID: "m", body: "hi")))))
        #expect(!PurgeConsumer.needsPurge(record(.receipt(ReceiptRecord(delivered: 1, read: 1, readMoved: true)))))
    }

    @Test func thePurgeConsumerPurgesByItselfWithinTheWindow() throws {
        let directory = NSTemporaryDirectory() + "spotter-purge-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clock = TestClock(now: Int64(Date().timeIntervalSince1970))
        let server = try TestServer(dataDirectory: directory) { $0.clock = clock; $0.purgeWithinSeconds = 60 }
        defer { server.stop() }
        let deleted = try Self.sendAndDelete(on: server)
        Thread.sleep(forTimeInterval: 2.1)
        // Not yet due: nothing purged.
        #expect(try server.metric("spotter_purges_total") ?? 0 == 0)
        clock.advance(by: 30)  // half the window: the consumer's time
        var waited = 0.0
        while try server.metric("spotter_purges_total") ?? 0 < 1, waited < 10 {
            Thread.sleep(forTimeInterval: 0.1)
            waited += 0.1
        }
        #expect(try server.metric("spotter_purges_total") ?? 0 >= 1)
        #expect(Self.filesHolding(Array(deleted.marker.utf8), under: directory) == [])
        #expect(Self.filesHolding(deleted.picture, under: directory) == [])
        #expect(try server.postgresTablesHolding(deleted.marker) == [])
    }

    /// The log's part of an erasure (the accounts' part is `DELETE /v1/me`'s): the user's words and files leave the
    /// threads, the other side's stay, the peer hears `user.erased`, and after a purge no file holds them.
    @Test func anErasedAccountsWordsAndFilesLeaveTheLogAndThenTheDisk() throws {
        let directory = NSTemporaryDirectory() + "spotter-purge-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = try TestServer(dataDirectory: directory)
        defer { server.stop() }
        let admin = try Self.admin(on: server)
        let pair = try CoachingFixture.linkedPair(on: server)
        let marker = "ERASE-MARKER-" + Digest.hex(SecureRandom.bytes(8))
        let picture = AttachmentsTests.png + Array(("ERASED-PICTURE-" + Digest.hex(SecureRandom.bytes(8))).utf8)
        let id = try #require(AttachmentsTests.json(try AttachmentsTests.upload(server, pair.thread, pair.client.access, picture))["id"] as? String)
        let client = try SpotterSocket(port: server.port, token: pair.client.access)
        let coach = try SpotterSocket(port: server.port, token: pair.coach.access)
        _ = try client.result("message.send", ["thread_id": pair.thread, "client_message_id": "c1", "text": "blood test: \(marker)", "attachments": [id]])
        let mine = try client.result("message.send", ["thread_id": pair.thread, "client_message_id": "c2", "text": "second \(marker)"])
        _ = try client.result("message.edit", ["thread_id": pair.thread, "seq": mine["seq"]!, "text": "edited \(marker)"])
        _ = try coach.result("message.send", ["thread_id": pair.thread, "client_message_id": "k1", "text": "coach words stay"])
        client.close()
        let erased = DispatchSemaphore(value: 0)
        let clientID = pair.client.id
        server.server.loop.execute { server.server.runner.run(.eraseUser(userID: clientID)) { _ in erased.signal() } }
        #expect(erased.wait(timeout: .now() + 5) == .success)
        let event = try coach.next("user.erased")
        #expect(event["user_id"] as? String == clientID && event["thread_id"] as? String == pair.thread)
        let history = try coach.result("history", ["thread_id": pair.thread])["messages"] as? [[String: Any]] ?? []
        #expect(history.count == 3)
        #expect(history.filter { $0["sender_id"] as? String == clientID }.allSatisfy { $0["text"] == nil && $0["deleted_at"] != nil })
        #expect(history.contains { $0["text"] as? String == "coach words stay" })
        Thread.sleep(forTimeInterval: 2.1)
        #expect(try APIClient(port: server.port).call("POST", "/v1/admin/purge", [:], token: admin).status == 200)
        #expect(Self.filesHolding(Array(marker.utf8), under: directory) == [])
        #expect(Self.filesHolding(picture, under: directory) == [])
        // The other side's words stay.
        if TestServer.onPostgres {
            #expect(try !server.postgresTablesHolding("coach words stay").isEmpty)
        } else {
            #expect(!Self.filesHolding(Array("coach words stay".utf8), under: directory).isEmpty)
        }
        #expect(try server.postgresTablesHolding(marker) == [])
    }
}
