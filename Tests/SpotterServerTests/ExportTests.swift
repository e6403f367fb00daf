import Foundation
import Testing
import SpotterServer
import TestSupport

/// `GET /v1/me/export` over a real server (issue 29, item 2): what was written over the socket and the API comes
/// back in the archive, byte for byte; only the signed-in user's own threads are in it; a long thread streams in
/// bounded chunks; strangers and a second export at once are refused.
@Suite("Account export", .serialized)
struct ExportTests {
    /// Texts a JSON writer gets wrong: controls, quotes, backslashes, a NUL-free C0 set, Arabic, an emoji, U+2028.
    static let awkward = "line1\nline2\t\u{1}\u{7}\u{1b}[0m \"quoted\" \\ back/slash مرحبا كوتش 👋🏽 \u{2028}end"

    @Test func anExportHoldsWhatWasWrittenAndNoSecrets() throws {
        let chat = try ChatFixture()
        defer { chat.server.stop() }
        let fixture = chat.fixture
        let client = try chat.socket(fixture.clientA.access)
        let coach = try chat.socket(fixture.coachX.access)
        // Profile fields, a device, notification settings.
        #expect(try fixture.api.call("PUT", "/v1/me", ["time_zone": "Asia/Riyadh", "language": "ar"], token: fixture.clientA.access).status == 200)
        let fcmToken = "fcm-token-that-must-not-leak-" + UUID().uuidString
        #expect(try fixture.api.call("POST", "/v1/me/devices", ["platform": "fcm", "token": fcmToken], token: fixture.clientA.access).status == 201)
        #expect(try fixture.api.call("PUT", "/v1/me/notifications", ["sessions": false], token: fixture.clientA.access).status == 200)
        // Messages both ways, a session, a check-in with a photo, a measurement.
        let sent = try client.result("message.send", ["thread_id": chat.thread, "client_message_id": "a1", "text": Self.awkward])
        let reply = try coach.result("message.send", ["thread_id": chat.thread, "client_message_id": "x1", "text": "Welcome, Amal"])
        let invited = try coach.result("session.invite", ["thread_id": chat.thread, "start": Int(Date().timeIntervalSince1970) + 86_400,
                                                          "duration_minutes": 30, "purpose": "Form check"])
        let photoBytes = AttachmentsTests.png + Array("progress photo \(UUID().uuidString)".utf8)
        let photo = try #require(AttachmentsTests.json(try AttachmentsTests.upload(chat.server, chat.thread, fixture.clientA.access,
                                                                                     photoBytes))["id"] as? String)
        let checkIn = try #require(try client.result("check_in.submit", ["thread_id": chat.thread, "weight": 80, "unit": "kg",
                                                                        "photos": ["front": photo], "notes": "Slept better"])["check_in"] as? [String: Any])
        _ = try client.result("measurement.add", ["thread_id": chat.thread, "method": "navy", "sex": "male", "height_cm": 177.8,
                                                  "neck_cm": 40.64, "waist_cm": 91.44])

        let export = try ExportDownload.fetch(port: chat.server.port, token: fixture.clientA.access)
        #expect(export.status == 200 && export.headers["content-type"] == "application/x-tar")
        #expect(export.headers["content-disposition"] == "attachment; filename=\"spotter-export-\(fixture.clientA.id).tar\"")
        #expect(export.headers["transfer-encoding"] == "chunked" && export.headers["content-length"] == nil)
        if let python = try export.pythonNames() { #expect(python == export.names) }

        let profile = try #require(export.json("profile.json")["user"] as? [String: Any])
        #expect(profile["email"] as? String == "a@client.test" && profile["full_name"] as? String == "Amal Client")
        #expect(profile["time_zone"] as? String == "Asia/Riyadh" && profile["language"] as? String == "ar")
        #expect((export.json("onboarding.json")["profile"] as? [String: Any])?["goal"] as? String == "Lose 10kg")
        // Messages as `history` shows them: seqs, senders, the awkward text unchanged through JSON.
        let messages = export.messages(ofThread: chat.thread)
        let texts = messages.filter { $0["kind"] as? String == "text" }
        #expect(texts.map { $0["text"] as? String } == [Self.awkward, "Welcome, Amal"])
        #expect(texts.map { $0["seq"] as? Int } == [sent["seq"] as? Int, reply["seq"] as? Int])
        #expect(texts.map { $0["sender_id"] as? String } == [fixture.clientA.id, fixture.coachX.id])
        let thread = try #require((export.json("threads.json")["threads"] as? [[String: Any]])?.first)
        #expect(thread["id"] as? String == chat.thread && thread["coach_id"] as? String == fixture.coachX.id)
        #expect((export.json("sessions.json")["sessions"] as? [[String: Any]])?.map { $0["id"] as? String } == [invited["id"] as? String])
        // The record, and the photo's bytes under its digest.
        let record = try #require(export.json("record.json")["record"] as? [String: Any])
        let checkIns = try #require(record["check_ins"] as? [[String: Any]])
        #expect(checkIns.map { $0["id"] as? String } == [checkIn["id"] as? String])
        #expect((checkIns.first?["photos"] as? [String: Any])?["front"] as? String == photo)
        #expect((record["measurements"] as? [[String: Any]])?.count == 1)
        #expect(export.files["attachments/\(photo)"] == photoBytes)
        #expect((export.json("attachments.json")["attachments"] as? [[String: Any]])?.first?["uploader_id"] as? String == fixture.clientA.id)
        // Devices: the platform and a digest of the address, never the token itself; no password hash anywhere.
        let device = try #require((export.json("devices.json")["devices"] as? [[String: Any]])?.first)
        #expect(device["platform"] as? String == "fcm" && (device["address_sha256"] as? String)?.count == 64)
        #expect(!Self.contains(export.body, fcmToken) && !Self.contains(export.body, "scrypt"))
        #expect((export.json("notifications.json")["sessions"] as? Bool) == false)
        #expect((export.json("sign-ins.json")["sessions"] as? [[String: Any]])?.isEmpty == false)
        #expect((export.json("coaching.json")["link"] as? [String: Any])?["coach_id"] as? String == fixture.coachX.id)
    }

    @Test func strangersAreRefusedAndOneExportPerUserAtATime() throws {
        let chat = try ChatFixture { $0.commandBurst = 20_000; $0.commandsPerSecond = 20_000 }
        defer { chat.server.stop() }
        let port = chat.server.port
        #expect(try ExportDownload.fetch(port: port, token: nil).status == 401)
        #expect(try ExportDownload.fetch(port: port, token: "not-a-token").errorCode == "unauthorized")
        let post = try ExportDownload.fetch(port: port, token: chat.fixture.clientA.access, method: "POST")
        #expect(post.status == 405 && post.headers["allow"] == "GET")

        // A long thread (an archive of some 3.5 MB), so that an export that is not read stalls on the socket's buffers.
        try Self.send(3_000, on: try chat.socket(chat.fixture.clientA.access), thread: chat.thread, text: String(repeating: "x", count: 900))
        let sentBefore = try #require(try chat.server.metric("spotter_bytes_out_total"))
        let stalled = try BlockingSocket(port: port, receiveBufferBytes: 4096, timeoutSeconds: 30)
        _ = stalled.write("GET /v1/me/export HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nAuthorization: Bearer \(chat.fixture.clientA.access)\r\n\r\n")
        Thread.sleep(forTimeInterval: 1)
        // Back-pressure: while it is not read, the server has queued no more than the kernel's buffers (SO_SNDBUF
        // 256 KiB, doubled by Linux) and one piece, not the archive.
        let sentStalled = try #require(try chat.server.metric("spotter_bytes_out_total")) - sentBefore
        #expect(sentStalled < 1_500_000, "\(sentStalled) bytes queued for a reader that reads nothing")
        let second = try ExportDownload.fetch(port: port, token: chat.fixture.clientA.access)
        #expect(second.status == 429 && second.errorCode == "rate_limited" && second.headers["retry-after"] != nil)
        // Another user is not held up by it.
        #expect(try ExportDownload.fetch(port: port, token: chat.fixture.clientB.access).status == 200)
        // The stalled one resumes as it is read, and completes.
        let first = try ExportDownload.parse(stalled.readToEnd())
        #expect(first.status == 200 && first.messages(ofThread: chat.thread).count == 3_000 && first.body.count > 3_000_000)
        // Once it is over, the user may export again, on a connection that stays open: a request pipelined behind
        // the export is answered after its last chunk.
        let kept = try BlockingSocket(port: port, timeoutSeconds: 30)
        _ = kept.write("GET /v1/me/export HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(chat.fixture.clientA.access)\r\n\r\n"
                       + "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        let again = try ExportDownload.parse(kept.readToEnd())
        #expect(again.status == 200 && again.headers["connection"] == nil && again.messages(ofThread: chat.thread).count == 3_000)
        #expect(String(decoding: again.rest, as: UTF8.self).hasPrefix("HTTP/1.1 200 OK\r\n"))
    }

    @Test func aClientsExportHoldsOnlyTheirOwnThreads() throws {
        let chat = try ChatFixture()
        defer { chat.server.stop() }
        let fixture = chat.fixture
        // Client C joins coach X too: X now has two clients, each with a thread, a message and a photo.
        _ = try fixture.api.call("PUT", "/v1/me/onboarding", CoachingFixture.onboarding, token: fixture.clientC.access)
        _ = try fixture.api.call("POST", "/v1/me/coach", ["coach_id": fixture.coachX.id], token: fixture.clientC.access)
        let threadC = try #require(try fixture.api.call("GET", "/v1/me/coach", token: fixture.clientC.access).string("thread_id"))
        let secret = "C-only secret " + UUID().uuidString
        _ = try chat.socket(fixture.clientC.access).result("message.send", ["thread_id": threadC, "client_message_id": "c1", "text": secret])
        let photoC = AttachmentsTests.png + Array(secret.utf8)
        let idC = try #require(AttachmentsTests.json(try AttachmentsTests.upload(chat.server, threadC, fixture.clientC.access, photoC))["id"] as? String)
        let mine = "A's own " + UUID().uuidString
        _ = try chat.socket(fixture.clientA.access).result("message.send", ["thread_id": chat.thread, "client_message_id": "a1", "text": mine])

        let exportA = try ExportDownload.fetch(port: chat.server.port, token: fixture.clientA.access)
        #expect(exportA.status == 200)
        #expect(Self.contains(exportA.body, mine))
        for leak in [secret, idC, threadC, fixture.clientC.id, "c@client.test", "Chadi"] { #expect(!Self.contains(exportA.body, leak), "\(leak)") }
        #expect(exportA.names.allSatisfy { !$0.hasPrefix("threads/\(threadC)") } && exportA.files["attachments/\(idC)"] == nil)

        // The coach's export holds both of their threads; client B's (another coach) holds neither message.
        let exportX = try ExportDownload.fetch(port: chat.server.port, token: fixture.coachX.access)
        #expect(exportX.messages(ofThread: threadC).map { $0["text"] as? String } == [secret])
        #expect(exportX.messages(ofThread: chat.thread).map { $0["text"] as? String } == [mine])
        #expect(exportX.files["attachments/\(idC)"] == photoC && exportX.json("record.json")["record"] == nil)
        let exportB = try ExportDownload.fetch(port: chat.server.port, token: fixture.clientB.access)
        #expect(!Self.contains(exportB.body, mine) && !Self.contains(exportB.body, secret))
        // An admin takes part in no thread: an export of the account alone.
        let exportAdmin = try ExportDownload.fetch(port: chat.server.port, token: fixture.admin.access)
        #expect(exportAdmin.status == 200 && !exportAdmin.names.contains { $0.hasPrefix("threads/") || $0.hasPrefix("attachments/") })
        #expect((exportAdmin.json("profile.json")["user"] as? [String: Any])?["role"] as? String == "admin")
    }

    @Test func aTenThousandMessageThreadStreamsInBoundedChunks() throws {
        let chat = try ChatFixture { $0.commandBurst = 20_000; $0.commandsPerSecond = 20_000 }
        defer { chat.server.stop() }
        try Self.send(10_000, on: try chat.socket(chat.fixture.clientA.access), thread: chat.thread, text: "message")
        // And a 4.5 MB image, copied across many pieces (an odd size: its last block is padded).
        let big = AttachmentsTests.png + (0..<(4_500_001 - AttachmentsTests.png.count)).map { UInt8(truncatingIfNeeded: ($0 &* 2_654_435_761) >> 13) }
        let bigID = try #require(AttachmentsTests.json(try AttachmentsTests.upload(chat.server, chat.thread, chat.fixture.clientA.access,
                                                                                     big))["id"] as? String)
        let export = try ExportDownload.fetch(port: chat.server.port, token: chat.fixture.clientA.access)
        #expect(export.status == 200)
        // Streamed: many chunks, none near the size of the whole (a piece is about 256 KiB, or one page of messages).
        #expect(export.chunkSizes.count > 5 && export.chunkSizes.max() ?? .max <= 1 << 20)
        #expect(export.body.count > 5 * (export.chunkSizes.max() ?? 0))
        let messages = export.messages(ofThread: chat.thread)
        #expect(messages.map { $0["seq"] as? Int } == (1...10_000).map { $0 })
        #expect(messages.last?["text"] as? String == "message 10000")
        #expect(export.files["attachments/\(bigID)"] == big)
    }

    @Test func aFailureMidwayCutsTheBodyBeforeItsLastChunk() throws {
        let chat = try ChatFixture()
        defer { chat.server.stop() }
        try chat.server.execute("DROP TABLE weightEntry")  // the store now fails the export's second read
        for _ in 1...2 {
            let socket = try BlockingSocket(port: chat.server.port, timeoutSeconds: 10)
            _ = socket.write("GET /v1/me/export HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(chat.fixture.clientA.access)\r\n\r\n")
            let raw = try socket.readToEnd()
            // The head went out; the body ends without its last chunk, so no client can take it for a whole archive.
            #expect(String(decoding: raw.prefix(15), as: UTF8.self) == "HTTP/1.1 200 OK")
            #expect(throws: BlockingSocket.Failure.self) { try ExportDownload.parse(raw) }
        }  // and the user's slot was given back: the second attempt is not `rate_limited`
    }

    // MARK: - Helpers

    /// Sends `count` messages `"<text> <n>"`, pipelined in batches, and waits for every ack.
    static func send(_ count: Int, on socket: SpotterSocket, thread: String, text: String) throws {
        var n = 0
        while n < count {
            let batch = min(50, count - n)  // under the 64 sends a socket may have pending
            for i in 1...batch {
                let frame: [String: Any] = ["id": "b\(n + i)", "type": "message.send", "thread_id": thread,
                                            "client_message_id": "b\(n + i)", "text": "\(text) \(n + i)"]
                socket.ws.send(text: String(decoding: try JSONSerialization.data(withJSONObject: frame), as: UTF8.self))
            }
            var acked = 0
            while acked < batch {
                let frame = try socket.ws.nextJSON()
                guard frame["type"] as? String == "reply" else { continue }
                guard frame["result"] != nil else { throw BlockingSocket.Failure(description: "a send was refused: \(frame)") }
                acked += 1
            }
            n += batch
        }
    }

    static func contains(_ haystack: [UInt8], _ needle: String) -> Bool {
        let bytes = Array(needle.utf8)
        guard !bytes.isEmpty, haystack.count >= bytes.count else { return false }
        return (0...(haystack.count - bytes.count)).contains { start in
            haystack[start] == bytes[0] && haystack[start..<(start + bytes.count)].elementsEqual(bytes)
        }
    }
}
