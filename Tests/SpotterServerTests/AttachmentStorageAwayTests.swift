import Foundation
import Testing
import SpotterServer
import TestSupport

/// The attachments' folder going away under a running server (issue 31 item 5: shared storage — an NFS or EFS
/// mount lost): uploads and downloads are refused with a typed 503 that says to retry, the server
/// neither crashes nor hangs, the chat goes on (a message naming a kept file is accepted: its row is in the
/// database), and once the folder is back every file accepted before is served as it was.
@Suite("Attachments' folder away", .serialized)
struct AttachmentStorageAwayTests {
    @Test func uploadsAndDownloadsGet503AndNothingAcceptedIsLost() throws {
        let chat = try ChatFixture()
        defer { chat.server.stop() }
        let token = chat.fixture.clientA.access
        let kept = try AttachmentsTests.upload(chat.server, chat.thread, token, AttachmentsTests.pdf)
        #expect(kept.status == 201)
        let id = try #require(AttachmentsTests.json(kept)["id"] as? String)
        func download() throws -> TestHTTPResponse {
            try HTTPTestClient(port: chat.server.port).request(
                "GET", "/v1/threads/\(chat.thread)/attachments/\(id)", headers: [("Authorization", "Bearer \(token)")])
        }

        // The mount goes away: here the folder is moved aside and a plain file takes its name, which no mkdir, open
        // or rename can go through (chmod would not do: the tests may run as root).
        let folder = String(chat.server.server.incomingUploadsDirectory.dropLast("/incoming".count))
        try FileManager.default.moveItem(atPath: folder, toPath: folder + ".away")
        #expect(FileManager.default.createFile(atPath: folder, contents: Data("not a folder".utf8)))
        var restored = false
        func restore() throws {
            guard !restored else { return }
            restored = true
            try FileManager.default.removeItem(atPath: folder)
            try FileManager.default.moveItem(atPath: folder + ".away", toPath: folder)
        }
        defer { try? restore() }

        let refused = try AttachmentsTests.upload(chat.server, chat.thread, token, AttachmentsTests.pdf + Array("another".utf8))
        #expect(refused.status == 503, "\(String(decoding: refused.body, as: UTF8.self))")
        #expect(AttachmentsTests.code(refused) == "unavailable" && refused.headers["Retry-After"] == "1")
        let error = AttachmentsTests.json(refused)["error"] as? [String: Any]
        #expect(error?["field"] as? String == "attachments")
        let unreadable = try download()
        #expect(unreadable.status == 503 && AttachmentsTests.code(unreadable) == "unavailable")
        #expect(unreadable.headers["Retry-After"] == "1")
        #expect((AttachmentsTests.json(unreadable)["error"] as? [String: Any])?["field"] as? String == "attachments")
        // The server is alive and the chat goes on, a message naming the kept file included.
        #expect(try HTTPTestClient(port: chat.server.port).request("GET", "/healthz").status == 200)
        let client = try chat.socket(token)
        let sent = try client.result("message.send", ["thread_id": chat.thread, "client_message_id": "away-1", "text": "the form",
                                                      "attachments": [id]])
        #expect((sent["attachments"] as? [[String: Any]])?.first?["id"] as? String == id)

        // Back: the file accepted before is served whole, and uploads work again.
        try restore()
        let served = try download()
        #expect(served.status == 200 && served.body == AttachmentsTests.pdf)
        #expect(try AttachmentsTests.upload(chat.server, chat.thread, token, AttachmentsTests.pdf + Array("another".utf8)).status == 201)
    }

    /// A start removes the uploads a crash cut off, but not one another process of a cluster is receiving into the
    /// shared folder right now: only files untouched for an hour go.
    @Test func aStartRemovesOldLeftoverUploadsButNotAnotherProcesssUploadInFlight() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("spotter-leftovers-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let incoming = directory + "/attachments/incoming"
        try FileManager.default.createDirectory(atPath: incoming, withIntermediateDirectories: true)
        let old = incoming + "/upload-1-1.partial", live = incoming + "/upload-2-2.partial", other = incoming + "/notes.txt"
        for path in [old, live, other] { #expect(FileManager.default.createFile(atPath: path, contents: Data("x".utf8))) }
        for path in [old, other] {
            try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-2 * 3600)], ofItemAtPath: path)
        }
        let server = try TestServer(dataDirectory: directory)
        defer { server.stop() }
        #expect(!FileManager.default.fileExists(atPath: old), "a crash's leftover goes")
        #expect(FileManager.default.fileExists(atPath: live), "an upload another process is receiving stays")
        #expect(FileManager.default.fileExists(atPath: other), "only upload files are touched")
    }
}
