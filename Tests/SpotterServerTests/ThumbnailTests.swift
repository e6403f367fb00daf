import Foundation
import Testing
import SpotterCore
import SpotterImages
import SpotterProtocol
@testable import SpotterServer
import TestSupport

/// Thumbnails over real sockets (issue 30 item 10): an image upload's view names its thumbnail, which is a JPEG that
/// fits 256 × 256, read under the original's access rules; a decompression bomb is refused; the thumbnail leaves
/// with its original.
@Suite("Thumbnails", .serialized)
struct ThumbnailTests {
    static func gradient(_ width: Int, _ height: Int) -> [UInt8] {
        var rgb = [UInt8](repeating: 0, count: width * height * 3)
        for index in 0..<(width * height) {
            rgb[index * 3] = UInt8(index % width * 255 / max(1, width - 1))
            rgb[index * 3 + 1] = UInt8(index / width * 255 / max(1, height - 1))
        }
        return rgb
    }

    static func jpeg(_ width: Int, _ height: Int) throws -> [UInt8] {
        try Thumbnailer.encodeJPEG(rgb: gradient(width, height), width: width, height: height)
    }

    /// A PNG with a transparent half.
    static func png(_ width: Int, _ height: Int) -> [UInt8] {
        let rgb = gradient(width, height)
        var rgba: [UInt8] = []
        for pixel in 0..<(width * height) { rgba += rgb[(pixel * 3)..<(pixel * 3 + 3)] + [pixel % width < width / 2 ? 0 : 255] }
        return Thumbnailer.encodePNG(rgba: rgba, width: width, height: height)!
    }

    /// A PNG whose checksummed header says `width` × `height`: a decompression bomb's shape.
    static func bomb(_ width: UInt32, _ height: UInt32) -> [UInt8] {
        func be32(_ value: UInt32) -> [UInt8] { [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }
        func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
            let body = Array(type.utf8) + data
            var crc: UInt32 = 0xFFFF_FFFF
            for byte in body {
                crc ^= UInt32(byte)
                for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
            }
            return be32(UInt32(data.count)) + body + be32(~crc)
        }
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + chunk("IHDR", be32(width) + be32(height) + [8, 2, 0, 0, 0])
            + chunk("IDAT", [0x78, 0x9C, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01]) + chunk("IEND", [])
    }

    static func get(_ server: TestServer, _ path: String, _ token: String?) throws -> TestHTTPResponse {
        try HTTPTestClient(port: server.port).request("GET", path, headers: token.map { [("Authorization", "Bearer \($0)")] } ?? [])
    }

    /// The dimensions of a JPEG, read back by decoding it.
    static func size(_ jpeg: [UInt8]) throws -> (Int, Int) {
        let decoded = try Thumbnailer.thumbnail(of: jpeg, bounds: ThumbnailBounds(side: 100_000))
        return (decoded.width, decoded.height)
    }

    @Test func anImageUploadHasAThumbnailForTheThreadAlone() throws {
        let chat = try ChatFixture()
        defer { chat.server.stop() }
        let (client, coach, stranger) = (chat.fixture.clientA.access, chat.fixture.coachX.access, chat.fixture.coachY.access)
        let photo = try Self.jpeg(1200, 900)
        let uploaded = try AttachmentsTests.upload(chat.server, chat.thread, client, photo)
        #expect(uploaded.status == 201)
        let view = AttachmentsTests.json(uploaded)
        let id = try #require(view["id"] as? String)
        let url = try #require(view["thumbnail_url"] as? String, "\(view)")
        #expect(url == "/v1/threads/\(chat.thread)/attachments/\(id)/thumbnail")

        // The coach reads it: a JPEG that fits 256 × 256 with the photo's 4:3, cached like the original.
        let thumbnail = try Self.get(chat.server, url, coach)
        #expect(thumbnail.status == 200 && thumbnail.headers["Content-Type"] == "image/jpeg")
        #expect(thumbnail.headers["Cache-Control"] == "private, max-age=31536000, immutable")
        #expect(thumbnail.headers["X-Content-Type-Options"] == "nosniff")
        #expect(thumbnail.body.starts(with: [0xFF, 0xD8, 0xFF]) && thumbnail.body.count < photo.count)
        #expect(try Self.size(thumbnail.body) == (256, 192))
        // Whoever may not read the original may not read its thumbnail, with the same answer.
        let original = try Self.get(chat.server, "/v1/threads/\(chat.thread)/attachments/\(id)", stranger)
        let refused = try Self.get(chat.server, url, stranger)
        #expect(original.status == 403 && refused.status == 403 && AttachmentsTests.code(refused) == "forbidden")
        #expect(try Self.get(chat.server, url, nil).status == 401)
        // Another thread (the stranger's own) does not have it; an unknown or malformed id is not found.
        let otherThread = try #require(try chat.fixture.api.call("GET", "/v1/me/coach", token: chat.fixture.clientB.access)
            .string("thread_id"))
        let elsewhere = try Self.get(chat.server, "/v1/threads/\(otherThread)/attachments/\(id)/thumbnail", chat.fixture.clientB.access)
        #expect(elsewhere.status == 404 && AttachmentsTests.code(elsewhere) == "not_found")
        for bad in [String(repeating: "a", count: 64), "..", "%00", String(repeating: "A", count: 64), id + ".thumbnail"] {
            #expect(try Self.get(chat.server, "/v1/threads/\(chat.thread)/attachments/\(bad)/thumbnail", coach).status == 404, "\(bad)")
        }

        // A PNG with transparency gets one too; a PDF and an image that cannot be read do not (their originals stay).
        let png = AttachmentsTests.json(try AttachmentsTests.upload(chat.server, chat.thread, client, Self.png(300, 600)))
        let pngThumbnail = try Self.get(chat.server, try #require(png["thumbnail_url"] as? String), client)
        #expect(try Self.size(pngThumbnail.body) == (128, 256))
        let pdf = AttachmentsTests.json(try AttachmentsTests.upload(chat.server, chat.thread, client, AttachmentsTests.pdf))
        #expect(pdf["id"] != nil && pdf["thumbnail_url"] == nil)
        #expect(try Self.get(chat.server, "/v1/threads/\(chat.thread)/attachments/\(pdf["id"] as! String)/thumbnail", client).status == 404)
        let unreadable = AttachmentsTests.json(try AttachmentsTests.upload(chat.server, chat.thread, client, AttachmentsTests.png))
        #expect(unreadable["id"] != nil && unreadable["thumbnail_url"] == nil)
        // The strip and the dot.
        let strip = AttachmentsTests.json(try AttachmentsTests.upload(chat.server, chat.thread, client, try Self.jpeg(10000, 1)))
        #expect(try Self.size(try Self.get(chat.server, try #require(strip["thumbnail_url"] as? String), client).body) == (256, 1))
        let dot = AttachmentsTests.json(try AttachmentsTests.upload(chat.server, chat.thread, client, try Self.jpeg(1, 1)))
        #expect(try Self.size(try Self.get(chat.server, try #require(dot["thumbnail_url"] as? String), client).body) == (1, 1))

        // A message carries each file's thumbnail URL, to both sides and in the history.
        let socket = try chat.socket(client)
        let coachSocket = try chat.socket(coach)
        let sent = try socket.result("message.send", ["thread_id": chat.thread, "client_message_id": "t1", "text": "Form check",
                                                      "attachments": [id, pdf["id"] as! String]])
        let attached = try #require(sent["attachments"] as? [[String: Any]])
        #expect(attached.first?["thumbnail_url"] as? String == url && attached.last?["thumbnail_url"] == nil)
        let event = try coachSocket.next("message")
        #expect(((event["message"] as? [String: Any])?["attachments"] as? [[String: Any]])?.first?["thumbnail_url"] as? String == url)
        let history = try #require(try coachSocket.result("history", ["thread_id": chat.thread])["messages"] as? [[String: Any]])
        #expect((history.last?["attachments"] as? [[String: Any]])?.first?["thumbnail_url"] as? String == url)
    }

    @Test func aDecompressionBombIsRefusedAndNotKept() throws {
        let chat = try ChatFixture()
        defer { chat.server.stop() }
        let client = chat.fixture.clientA.access
        for bomb in [Self.bomb(100_000, 100_000), Self.bomb(8000, 8000), Self.bomb(40_000, 1)] {
            let refused = try AttachmentsTests.upload(chat.server, chat.thread, client, bomb)
            #expect(refused.status == 422 && AttachmentsTests.code(refused) == "image_too_large")
            let id = Digest.hex(Digest.sha256(bomb))
            #expect(try Self.get(chat.server, "/v1/threads/\(chat.thread)/attachments/\(id)", client).status == 404)
            let avatar = try ProfileTests.putAvatar(chat.server, client, bomb)
            #expect(avatar["status"] as? Int == 422 && errorCode(avatar) == "image_too_large")
        }
        // In Arabic too.
        let arabic = try HTTPTestClient(port: chat.server.port).request(
            "POST", "/v1/threads/\(chat.thread)/attachments",
            headers: [("Authorization", "Bearer \(client)"), ("Accept-Language", "ar")], bytes: Self.bomb(100_000, 100_000))
        let message = ((AttachmentsTests.json(arabic)["error"] as? [String: Any])?["message"] as? String) ?? ""
        #expect(message.contains("بكسل"))
        // Within the budget the header passes; this one's image data is empty, so it is kept without a thumbnail.
        let under = AttachmentsTests.json(try AttachmentsTests.upload(chat.server, chat.thread, client, Self.bomb(3000, 3000)))
        #expect(under["id"] != nil && under["thumbnail_url"] == nil)
        #expect(try ProfileTests.putAvatar(chat.server, client, Self.jpeg(64, 64))["status"] as? Int == 200)
    }

    @Test func anAvatarHasAThumbnailForWhoMaySeeIt() throws {
        let chat = try ChatFixture()
        defer { chat.server.stop() }
        let (client, coach, stranger) = (chat.fixture.clientA.access, chat.fixture.coachX.access, chat.fixture.coachY.access)
        let set = try ProfileTests.putAvatar(chat.server, client, Self.png(640, 480))
        let url = try #require(set["avatar_url"] as? String, "\(set)")
        let thumbnail = try Self.get(chat.server, url + "/thumbnail", coach)
        #expect(thumbnail.status == 200 && thumbnail.headers["Content-Type"] == "image/jpeg")
        #expect(thumbnail.headers["Cache-Control"] == "private, max-age=31536000, immutable")
        #expect(try Self.size(thumbnail.body) == (256, 192))
        #expect(try Self.get(chat.server, url + "/thumbnail", client).status == 200)
        #expect(try Self.get(chat.server, url, stranger).status == 403)
        #expect(try Self.get(chat.server, url + "/thumbnail", stranger).status == 403)
        #expect(try Self.get(chat.server, url + "/thumbnail", nil).status == 401)
        // A replaced avatar's thumbnail is gone with it; an avatar that cannot be read has none.
        let newURL = try #require(try ProfileTests.putAvatar(chat.server, client, ProfileTests.png)["avatar_url"] as? String)
        #expect(try Self.get(chat.server, url + "/thumbnail", coach).status == 404)
        #expect(try Self.get(chat.server, newURL, coach).status == 200)
        #expect(try Self.get(chat.server, newURL + "/thumbnail", coach).status == 404)
    }

    @Test func anErasedAccountsAvatarThumbnailLeavesWithTheAvatar() throws {
        let directory = NSTemporaryDirectory() + "spotter-thumbnails-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = try TestServer(dataDirectory: directory)
        defer { server.stop() }
        let api = APIClient(port: server.port)
        let client = try api.signUp(role: "client", name: "Sara", email: "sara@thumbnails.test")
        let url = try #require(try ProfileTests.putAvatar(server, client.access, Self.png(500, 500))["avatar_url"] as? String)
        let thumbnail = try Self.get(server, url + "/thumbnail", client.access)
        #expect(thumbnail.status == 200 && !MessagePurgeTests.filesHolding(thumbnail.body, under: directory).isEmpty)
        #expect(try api.call("DELETE", "/v1/me", ["password": "secret1"], token: client.access).status == 204)
        // Removed with the avatar's file at the erasure, not left for a purge.
        #expect(MessagePurgeTests.filesHolding(thumbnail.body, under: directory) == [])
    }

    @Test func aDeletedMessagesThumbnailIsPurgedWithItsOriginal() throws {
        let directory = NSTemporaryDirectory() + "spotter-thumbnails-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = try TestServer(dataDirectory: directory)
        defer { server.stop() }
        let admin = try MessagePurgeTests.admin(on: server)
        let pair = try CoachingFixture.linkedPair(on: server)
        let photo = try Self.jpeg(400, 300)
        let view = AttachmentsTests.json(try AttachmentsTests.upload(server, pair.thread, pair.client.access, photo))
        let id = try #require(view["id"] as? String)
        let url = try #require(view["thumbnail_url"] as? String)
        let thumbnail = try Self.get(server, url, pair.client.access).body
        #expect(!MessagePurgeTests.filesHolding(thumbnail, under: directory).isEmpty)
        let socket = try SpotterSocket(port: server.port, token: pair.client.access)
        let sent = try socket.result("message.send", ["thread_id": pair.thread, "client_message_id": "p", "text": "", "attachments": [id]])
        _ = try socket.result("message.delete", ["thread_id": pair.thread, "seq": sent["seq"]!])
        socket.close()
        Thread.sleep(forTimeInterval: 2.1)  // files younger than 2 s are an upload's, in flight
        let purged = try APIClient(port: server.port).call("POST", "/v1/admin/purge", [:], token: admin)
        #expect(purged.status == 200 && purged["files_removed"] as? Int == 2)
        #expect(MessagePurgeTests.filesHolding(thumbnail, under: directory) == [])
        #expect(MessagePurgeTests.filesHolding(photo, under: directory) == [])
        #expect(try Self.get(server, url, pair.client.access).status == 404)
    }
}
