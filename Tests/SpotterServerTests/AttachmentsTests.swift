import Foundation
import Testing
import SpotterCore
import SpotterProtocol
import SpotterServer
import TestSupport

/// Chat attachments over HTTP: the type from the file's first bytes, each type's size limit, Smart Premium only
/// with `--tiers`, and downloads for the thread's participants alone.
@Suite("Attachments", .serialized)
struct AttachmentsTests {
    static let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array("a tiny picture".utf8)
    static let pdf: [UInt8] = Array("%PDF-1.7\n%âãÏÓ\n1 0 obj\n".utf8)

    static func upload(_ server: TestServer, _ thread: String, _ token: String, _ bytes: [UInt8], name: String = "photo.png",
                       announced: Int? = nil) throws -> TestHTTPResponse {
        try HTTPTestClient(port: server.port).request(
            "POST", "/v1/threads/\(thread)/attachments",
            headers: [("Authorization", "Bearer \(token)"), ("Content-Type", "image/png"),
                      ("Content-Disposition", "attachment; filename=\"\(name)\"")],
            bytes: bytes, announced: announced)
    }

    static func json(_ response: TestHTTPResponse) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any] ?? [:]
    }

    static func code(_ response: TestHTTPResponse) -> String? { errorCode(json(response)) }

    @Test("the type comes from the first bytes; each type has its limit")
    func rules() throws {
        #expect(try AttachmentRules.check(Self.png) == .png)
        #expect(try AttachmentRules.check([0xFF, 0xD8, 0xFF, 0xE0, 1, 2]) == .jpeg)
        #expect(try AttachmentRules.check(Self.pdf) == .pdf)
        #expect(throws: APIError(.unsupportedAttachment, field: "body")) { try AttachmentRules.check(Array("<html>".utf8)) }
        #expect(throws: APIError(.unsupportedAttachment, field: "body")) { try AttachmentRules.check(Array(Self.png.dropFirst())) }
        #expect(throws: APIError(.missingField, field: "body")) { try AttachmentRules.check([UInt8]()) }
        let bigPNG = Self.png + [UInt8](repeating: 0, count: 5 * 1_048_576)
        #expect(throws: APIError(.payloadTooLarge, field: "body")) { try AttachmentRules.check(bigPNG) }
        // The same size is a fine PDF (up to 10 MB).
        #expect(try AttachmentRules.check(Self.pdf + [UInt8](repeating: 0, count: 5 * 1_048_576)) == .pdf)
    }

    @Test func smartPremiumUploadsAndParticipantsDownload() throws {
        let chat = try ChatFixture { $0.tiers = true }
        defer { chat.server.stop() }
        let (client, coach) = (chat.fixture.clientA.access, chat.fixture.coachX.access)
        // Freemium: refused, naming the tier that has attachments.
        let refused = try Self.upload(chat.server, chat.thread, client, Self.png)
        #expect(refused.status == 403 && Self.code(refused) == "plan_upgrade_required")
        #expect((Self.json(refused)["error"] as? [String: Any])?["upgrade_to"] as? String == "smart_premium")
        #expect((Self.json(refused)["error"] as? [String: Any])?["message"] as? String == "Upgrade to Smart Premium for attachments.")
        _ = try chat.fixture.api.call("PUT", "/v1/admin/users/\(chat.fixture.clientA.id)/tier", ["tier": "smart_premium"],
                                      token: chat.fixture.admin.access)

        let uploaded = try Self.upload(chat.server, chat.thread, client, Self.png)
        #expect(uploaded.status == 201)
        let id = try #require(Self.json(uploaded)["id"] as? String)
        #expect(id == Digest.hex(Digest.sha256(Self.png)) && Self.json(uploaded)["type"] as? String == "image/png")
        #expect(Self.json(uploaded)["bytes"] as? Int == Self.png.count)
        // A file whose name and header say PNG but whose bytes do not: refused, nothing stored.
        let spoofed = try Self.upload(chat.server, chat.thread, client, Array("MZ not a picture".utf8), name: "cat.png")
        #expect(spoofed.status == 415 && Self.code(spoofed) == "unsupported_attachment")
        // More than 10 MB announced: refused from the head, before the body is read.
        let huge = try Self.upload(chat.server, chat.thread, client, Array(Self.pdf.prefix(4)), announced: 10 * 1_048_576 + 1)
        #expect(huge.status == 413)
        // An image over 5 MB (its type's limit), under the 10 MB of any upload.
        let bigImage = try Self.upload(chat.server, chat.thread, client, Self.png + [UInt8](repeating: 7, count: 5 * 1_048_576))
        #expect(bigImage.status == 413 && Self.code(bigImage) == "payload_too_large")

        // The coach (a participant) downloads it; a stranger cannot; another thread does not have it.
        let download = try HTTPTestClient(port: chat.server.port).request(
            "GET", "/v1/threads/\(chat.thread)/attachments/\(id)", headers: [("Authorization", "Bearer \(coach)")])
        #expect(download.status == 200 && download.body == Self.png && download.headers["Content-Type"] == "image/png")
        let stranger = try HTTPTestClient(port: chat.server.port).request(
            "GET", "/v1/threads/\(chat.thread)/attachments/\(id)", headers: [("Authorization", "Bearer \(chat.fixture.coachY.access)")])
        #expect(stranger.status == 403)
        let unknown = try HTTPTestClient(port: chat.server.port).request(
            "GET", "/v1/threads/\(chat.thread)/attachments/\(String(repeating: "a", count: 64))", headers: [("Authorization", "Bearer \(coach)")])
        #expect(unknown.status == 404)
        // Coaches are not limited by tiers.
        #expect(try Self.upload(chat.server, chat.thread, coach, Self.pdf).status == 201)
    }

    @Test func aMessageCarriesItsThreadsAttachments() throws {
        let chat = try ChatFixture()
        defer { chat.server.stop() }
        let client = try chat.socket(chat.fixture.clientA.access)
        let coach = try chat.socket(chat.fixture.coachX.access)
        let id = try #require(Self.json(try Self.upload(chat.server, chat.thread, chat.fixture.clientA.access, Self.png))["id"] as? String)
        let pdf = try #require(Self.json(try Self.upload(chat.server, chat.thread, chat.fixture.clientA.access, Self.pdf))["id"] as? String)

        let sent = try client.result("message.send", ["thread_id": chat.thread, "client_message_id": "a1", "text": "Form check",
                                                      "attachments": [id, pdf]])
        let attached = try #require(sent["attachments"] as? [[String: Any]])
        #expect(attached.map { $0["id"] as? String } == [id, pdf] && attached.first?["type"] as? String == "image/png")
        #expect(attached.first?["bytes"] as? Int == Self.png.count && sent["text"] as? String == "Form check")
        let event = try coach.next("message")
        #expect(((event["message"] as? [String: Any])?["attachments"] as? [[String: Any]])?.count == 2)
        // A retry is the same message; files alone need no text.
        #expect(try client.result("message.send", ["thread_id": chat.thread, "client_message_id": "a1", "text": "Form check",
                                                   "attachments": [id, pdf]])["seq"] as? Int == sent["seq"] as? Int)
        let alone = try client.result("message.send", ["thread_id": chat.thread, "client_message_id": "a2", "attachments": [pdf]])
        #expect(alone["text"] as? String == "")
        let history = try #require(try coach.result("history", ["thread_id": chat.thread])["messages"] as? [[String: Any]])
        #expect((history.last?["attachments"] as? [[String: Any]])?.first?["id"] as? String == id)
        let threads = try #require(try coach.result("threads")["threads"] as? [[String: Any]])
        #expect(threads.first?["last_preview"] as? String == "📎")
        // Only this thread's uploads; at most 10, each once.
        let foreign = try client.command("message.send", ["thread_id": chat.thread, "client_message_id": "a3", "text": "x",
                                                          "attachments": [String(repeating: "b", count: 64)]])
        #expect((foreign["error"] as? [String: Any])?["code"] as? String == "not_found")
        let twice = try client.command("message.send", ["thread_id": chat.thread, "client_message_id": "a4", "text": "x",
                                                        "attachments": [id, id]])
        #expect((twice["error"] as? [String: Any])?["code"] as? String == "out_of_range")
    }

    @Test func withoutTiersEveryParticipantMayAttach() throws {
        let chat = try ChatFixture()
        defer { chat.server.stop() }
        #expect(try Self.upload(chat.server, chat.thread, chat.fixture.clientA.access, Self.pdf).status == 201)
        #expect(try Self.upload(chat.server, chat.thread, chat.fixture.clientB.access, Self.pdf).status == 403)
    }
}
