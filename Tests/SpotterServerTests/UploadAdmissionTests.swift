import Foundation
import Testing
import SpotterServer
import TestSupport

/// Uploads are decided from their head: the token, the thread and the bound on upload bytes in flight are
/// checked before a byte of the body is read, and an admitted body streams to a file, not to memory.
@Suite("Upload admission", .serialized)
struct UploadAdmissionTests {
    static let tenMB = 10 * 1_048_576

    static func head(_ thread: String, token: String?, length: Int) -> [UInt8] {
        var head = "POST /v1/threads/\(thread)/attachments HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/pdf\r\n"
        if let token { head += "Authorization: Bearer \(token)\r\n" }
        return Array((head + "Content-Length: \(length)\r\n\r\n").utf8)
    }

    static func pdf(_ count: Int) -> [UInt8] {
        let start = Array("%PDF-1.7\n".utf8)
        return start + (0..<(count - start.count)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
    }

    static func code(_ response: TestHTTPResponse) -> String? {
        let json = (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any]
        return (json?["error"] as? [String: Any])?["code"] as? String
    }

    /// Files in the folder uploads stream to, with their sizes.
    static func incoming(_ server: TestServer) -> [String: Int] {
        let folder = server.server.incomingUploadsDirectory
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        var sizes: [String: Int] = [:]
        for name in names {
            sizes[name] = ((try? FileManager.default.attributesOfItem(atPath: folder + "/" + name))?[.size] as? Int) ?? 0
        }
        return sizes
    }

    /// Polls `condition` for up to `seconds` (a bound on waiting, not a timing assertion).
    static func eventually(_ seconds: Double = 10, _ condition: () -> Bool) -> Bool {
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            if condition() { return true }
            Thread.sleep(forTimeInterval: 0.02)
        }
        return condition()
    }

    /// The answer to a head whose body was not sent, then the server's FIN; and the server does not take
    /// the body afterwards (it never reads it: the socket is dropped with the body unread).
    static func refusedFromTheHead(_ server: TestServer, _ thread: String, token: String?) throws -> TestHTTPResponse {
        let client = try HTTPTestClient(port: server.port)
        #expect(client.socket.write(head(thread, token: token, length: tenMB)))
        // No body byte was sent: a server that reads the body before deciding never answers (the read times out).
        let response = try client.readResponse()
        #expect(response.headers["Connection"]?.lowercased() == "close")
        #expect(try client.socket.read().isEmpty, "the server closes after the answer")
        // What the server's socket takes of a 10 MB body is what the kernel buffers unread; then it is reset.
        #expect(!client.socket.write(pdf(tenMB)), "a server that reads the body would take all 10 MB")
        return response
    }

    @Test func anAnonymousUploadIsRefusedFromItsHeadWithoutReadingTheBody() throws {
        let chat = try ChatFixture()
        defer { chat.server.stop() }
        let refused = try Self.refusedFromTheHead(chat.server, chat.thread, token: nil)
        #expect(refused.status == 401 && Self.code(refused) == "unauthorized")
        #expect(Self.incoming(chat.server).isEmpty)
    }

    @Test func aSignedInOutsiderIsRefusedFromTheHeadWithoutReadingTheBody() throws {
        let chat = try ChatFixture()
        defer { chat.server.stop() }
        let refused = try Self.refusedFromTheHead(chat.server, chat.thread, token: chat.fixture.coachY.access)
        #expect(refused.status == 403 && Self.code(refused) == "forbidden")
        #expect(Self.incoming(chat.server).isEmpty)
    }

    @Test func pastTheBytesInFlightAnUploadGets503WithRetryAfter() throws {
        let chat = try ChatFixture { $0.maxUploadBytesInFlight = 1_000_000 }
        defer { chat.server.stop() }
        let body = Self.pdf(600_000)
        // A's upload is admitted and under way: its file is on disk, its 600,000 bytes held.
        let first = try HTTPTestClient(port: chat.server.port)
        #expect(first.socket.write(Self.head(chat.thread, token: chat.fixture.clientA.access, length: body.count) + body.prefix(1000)))
        #expect(Self.eventually { Self.incoming(chat.server).count == 1 })
        // B's would pass 1,000,000 bytes in flight: refused from its head.
        let second = try HTTPTestClient(port: chat.server.port)
        #expect(second.socket.write(Self.head(chat.thread, token: chat.fixture.coachX.access, length: body.count)))
        let busy = try second.readResponse()
        #expect(busy.status == 503 && Self.code(busy) == "unavailable" && busy.headers["Retry-After"] == "1")
        #expect(try second.socket.read().isEmpty)
        #expect(try chat.server.metric("spotter_uploads_refused_busy_total") == 1)
        // A finishes; its bytes are released, so the same upload from B is admitted now.
        #expect(first.socket.write(Array(body.dropFirst(1000))))
        #expect(try first.readResponse().status == 201)
        let retried = try HTTPTestClient(port: chat.server.port).request(
            "POST", "/v1/threads/\(chat.thread)/attachments", headers: [("Authorization", "Bearer \(chat.fixture.coachX.access)")],
            bytes: body)
        #expect(retried.status == 201)
    }

    @Test func anAdmittedBodyStreamsToAFileThatIsRemovedIfTheUploadBreaksOff() throws {
        let chat = try ChatFixture { $0.maxUploadBytesInFlight = Self.tenMB }
        defer { chat.server.stop() }
        let body = Self.pdf(8 * 1_048_576)
        let client = try HTTPTestClient(port: chat.server.port)
        #expect(client.socket.write(Self.head(chat.thread, token: chat.fixture.clientA.access, length: body.count)
                                    + body.prefix(6 * 1_048_576)))
        // Six of eight MB sent: they are in a file under the data directory, not held by the server.
        #expect(Self.eventually { Self.incoming(chat.server).values.first ?? 0 >= 5 * 1_048_576 },
                "incoming: \(Self.incoming(chat.server))")
        #expect(client.socket.write(Array(body.dropFirst(6 * 1_048_576))))
        let uploaded = try client.readResponse()
        #expect(uploaded.status == 201)
        #expect(Self.eventually { Self.incoming(chat.server).isEmpty }, "the file was moved into place")
        let json = (try? JSONSerialization.jsonObject(with: Data(uploaded.body))) as? [String: Any]
        let id = try #require(json?["id"] as? String)
        let download = try HTTPTestClient(port: chat.server.port).request(
            "GET", "/v1/threads/\(chat.thread)/attachments/\(id)", headers: [("Authorization", "Bearer \(chat.fixture.coachX.access)")])
        #expect(download.status == 200 && download.body == body)

        // An upload that breaks off: its file goes, and its bytes in flight are released.
        let broken = try HTTPTestClient(port: chat.server.port)
        #expect(broken.socket.write(Self.head(chat.thread, token: chat.fixture.clientA.access, length: Self.tenMB)
                                    + Self.pdf(1_048_576)))
        #expect(Self.eventually { !Self.incoming(chat.server).isEmpty })
        broken.socket.close()
        #expect(Self.eventually { Self.incoming(chat.server).isEmpty }, "incoming: \(Self.incoming(chat.server))")
        let whole = Self.pdf(Self.tenMB)
        let again = try HTTPTestClient(port: chat.server.port).request(
            "POST", "/v1/threads/\(chat.thread)/attachments", headers: [("Authorization", "Bearer \(chat.fixture.clientA.access)")],
            bytes: whole)
        #expect(again.status == 201, "the broken upload's 10 MB were released")
    }
}
