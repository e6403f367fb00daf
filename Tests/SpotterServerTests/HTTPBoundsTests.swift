import Foundation
import Synchronization
import Testing
import TestSupport
import WebSocket

/// The bounds an unauthenticated client meets before it has a socket: the
/// output of pipelined requests, the deadline of a request, the number of
/// connections not yet upgraded, and the password-hashing queue. Each is
/// attacked with real sockets while another client checks it is still served.
@Suite("HTTP bounds", .serialized)
struct HTTPBoundsTests {
    /// Resident memory of this process (the server runs in it), in bytes.
    static func residentBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        return (fields.count > 1 ? Int(fields[1]) ?? 0 : 0) * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// A coach and a client who picked them, and their thread.
    static func linkedPair(_ api: APIClient) throws
        -> (coach: (access: String, refresh: String, id: String), client: (access: String, refresh: String, id: String), thread: String) {
        let coach = try api.signUp(role: "coach", name: "Carter", email: "carter@example.com")
        let client = try api.signUp(role: "client", name: "Sara", email: "sara@example.com")
        let picked = try api.call("POST", "/v1/me/coach", ["coach_id": coach.id], token: client.access)
        guard let thread = picked.string("thread_id") else { throw BlockingSocket.Failure(description: "pick failed: \(picked.text)") }
        return (coach, client, thread)
    }

    /// Milliseconds one `GET /healthz` takes on a fresh connection.
    static func healthzMilliseconds(_ port: Int) throws -> (status: Int, ms: Double) {
        let started = Date()
        let response = try HTTPTestClient(port: port).request("GET", "/healthz")
        return (response.status, Date().timeIntervalSince(started) * 1000)
    }

    @Test func pipelinedRequestsFromAClientThatNeverReadsAreBounded() throws {
        let server = try TestServer()
        defer { server.stop() }
        let before = Self.residentBytes()
        let attacker = try BlockingSocket(port: server.port, receiveBufferBytes: 4096)
        var sendTimeout = timeval(tv_sec: 0, tv_usec: 200_000)
        setsockopt(attacker.fd, SOL_SOCKET, SO_SNDTIMEO, &sendTimeout, socklen_t(MemoryLayout<timeval>.size))
        let batch = Array(String(repeating: "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", count: 500).utf8)
        var written = 0
        var blocked = false
        let deadline = Date().addingTimeInterval(3)
        while Date() < deadline {
            // A server that keeps reading takes everything; one that stops
            // reading once its answers pile up makes this write time out.
            guard attacker.write(batch) else {
                blocked = true
                break
            }
            written += batch.count
        }
        #expect(blocked, "the server kept reading \(written) bytes of pipelined requests it could not answer")
        #expect(written < 64 * 1024 * 1024)
        // What the server holds for this client: about one answer, not thousands.
        let queued = try #require(try server.metric("spotter_outbound_queued_bytes"))
        #expect(queued < 256 * 1024, "\(Int(queued)) bytes queued for a client that does not read")
        let health = try Self.healthzMilliseconds(server.port)
        #expect(health.status == 200)
        #expect(health.ms < 1000, "healthz took \(health.ms) ms next to a pipelining non-reader")
        let grown = Self.residentBytes() - before
        #expect(grown < 200 * 1024 * 1024, "server grew by \(grown / 1024 / 1024) MiB")

        // The requests that were read are answered, in order, as the client reads.
        let reader = HTTPTestClient(socket: attacker)
        for _ in 0..<3 {
            let response = try reader.readResponse()
            #expect(response.status == 200)
            #expect(response.bodyText.contains("spotter_connections_open"))
        }
    }

    @Test func aSocketThatOnlyReceivesAndNeverReadsIsDropped() throws {
        let server = try TestServer {
            $0.maxMessageBytes = 16 * 1024
            $0.maxOutboundBytes = 64 * 1024
            $0.commandBurst = 100_000
            $0.commandsPerSecond = 100_000
        }
        defer { server.stop() }
        let api = APIClient(port: server.port)
        let (coach, client, thread) = try Self.linkedPair(api)
        // The coach's socket: handshake read, then never read again, never sends.
        let silent = try WebSocketTestClient(port: server.port, path: "/v1/ws", headers: [("Authorization", "Bearer \(coach.access)")],
                                             receiveBufferBytes: 4096)
        _ = try silent.nextJSON()
        let sender = try SpotterSocket(port: server.port, token: client.access)
        let text = String(repeating: "x", count: 1000)
        var dropped = false
        for n in 1...6000 {
            _ = try sender.result("message.send", ["thread_id": thread, "client_message_id": "m\(n)", "text": text])
            if n % 200 == 0, try server.metric("spotter_backpressure_disconnects_total") ?? 0 >= 1 {
                dropped = true
                break
            }
        }
        #expect(dropped, "a socket that never reads was never dropped")
        #expect(try server.metric("spotter_outbound_queued_bytes") ?? 0 < 2 * 1024 * 1024)
    }

    @Test func aHeadSentByteByByteGets408AtTheDeadline() throws {
        let server = try TestServer { $0.requestTimeoutSeconds = 2 }
        defer { server.stop() }
        let slow = try BlockingSocket(port: server.port, timeoutSeconds: 1)
        let started = Date()
        var answer: [UInt8] = []
        slow.write("GET /healthz HTTP/1.1\r\n")
        // One byte every 300 ms: each resets an idle clock, not the request deadline.
        while Date().timeIntervalSince(started) < 8 {
            guard slow.write([UInt8(ascii: "X")]) else { break }
            if let chunk = try? slow.read(), !chunk.isEmpty {
                answer += chunk
                break
            }
            // A real client is served meanwhile.
            #expect(try Self.healthzMilliseconds(server.port).status == 200)
        }
        let elapsed = Date().timeIntervalSince(started)
        let text = String(decoding: answer, as: UTF8.self)
        #expect(text.hasPrefix("HTTP/1.1 408 "), "got \(text.prefix(80)) after \(elapsed) s")
        #expect(text.contains("Connection: close"))
        #expect(text.contains("request_timeout"))
        #expect(elapsed >= 1.5 && elapsed < 5, "closed after \(elapsed) s")
        #expect((try? slow.readToEnd()) != nil)  // then EOF
        #expect(try server.metric("spotter_request_timeouts_total") == 1)
    }

    @Test func idleConnectionsBeyondTheBoundMakeRoomForNewOnes() throws {
        let server = try TestServer { $0.maxHTTPConnections = 8 }
        defer { server.stop() }
        let idle = try (0..<30).map { _ in try BlockingSocket(port: server.port, timeoutSeconds: 2) }
        Thread.sleep(forTimeInterval: 0.3)
        // A real client still gets in and is answered.
        for _ in 0..<3 { #expect(try Self.healthzMilliseconds(server.port).status == 200) }
        // The oldest idle ones were closed to admit the newer ones.
        #expect((try? idle[0].read()) == [])
        #expect(try server.metric("spotter_http_connections_evicted_total") ?? 0 >= 22)
        let open = try #require(try server.metric("spotter_connections_open"))
        #expect(open <= 9)
    }

    @Test func aRefusedUpgradeClosesAndIgnoresTheBytesBehindIt() throws {
        let server = try TestServer()
        defer { server.stop() }
        let session = try APIClient(port: server.port).signUp(role: "client", name: "Sara", email: "sara@example.com")
        // A masked close frame right behind the upgrade, as a pipelining client may send.
        let frame: [UInt8] = [0x88, 0x82, 1, 2, 3, 4, 0x03 ^ 1, 0xE8 ^ 2]
        for (target, token, status) in [("/v1/ws", nil, 401), ("/v1/ws?cursor=abc", session.access, 400)] as [(String, String?, Int)] {
            let socket = try BlockingSocket(port: server.port)
            var head = "GET \(target) HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            head += "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
            if let token { head += "Authorization: Bearer \(token)\r\n" }
            socket.write(Array((head + "\r\n").utf8) + frame)
            let text = String(decoding: try socket.readToEnd(), as: UTF8.self)
            #expect(text.hasPrefix("HTTP/1.1 \(status) "), "\(target): \(text.prefix(60))")
            #expect(text.contains("Connection: close"))
            #expect(text.components(separatedBy: "HTTP/1.1 ").count == 2, "one answer only, then the close: \(text)")
        }
    }

    @Test func everyMethodNotAllowedNamesTheAllowedMethods() throws {
        let server = try TestServer()
        defer { server.stop() }
        let api = APIClient(port: server.port)
        for (method, path, allow) in [
            ("PATCH", "/v1/me", "GET, PUT, DELETE"), ("GET", "/v1/auth/signin", "POST"), ("DELETE", "/v1/me/coach", "GET, POST"),
            ("PUT", "/v1/clients/abc/profile", "GET"), ("GET", "/v1/admin/coach-change-requests/r1/approve", "POST"),
            ("POST", "/healthz", "GET"),
        ] {
            let response = try api.call(method, path)
            #expect(response.status == 405, "\(method) \(path)")
            #expect(response.headers["Allow"] == allow, "\(method) \(path): \(response.headers)")
        }
        #expect(try api.call("GET", "/v1/nowhere").status == 404)
        #expect(try api.call("GET", "/v1/clients//profile").status == 404)
        // Development paths do not exist outside development mode.
        #expect(try api.call("POST", "/v1/dev/reset-limits").status == 404)
    }

    @Test func aSignUpStormIsCutOffWhileReadsStayFast() throws {
        // Costly hashes on one thread with a short queue; sign-ups are not rate-limited here.
        let server = try TestServer {
            $0.passwordHashLogN = 14
            $0.hashThreads = 1
            $0.hashQueueLimit = 2
            $0.signupsPerHour = 100_000
        }
        defer { server.stop() }
        let api = APIClient(port: server.port)
        let (_, client, thread) = try Self.linkedPair(api)
        let socket = try SpotterSocket(port: server.port, token: client.access)
        _ = try socket.result("message.send", ["thread_id": thread, "client_message_id": "m1", "text": "hello"])

        let outcomes = Mutex<[Int: Int]>([:])
        let retryAfter = Mutex<Set<String>>([])
        let stop = Atomic<Bool>(false)
        let group = DispatchGroup()
        for worker in 0..<8 {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                var n = 0
                while !stop.load(ordering: .relaxed) {
                    n += 1
                    guard let response = try? api.call("POST", "/v1/auth/signup", [
                        "role": "client", "full_name": "Storm", "email": "storm-\(worker)-\(n)@example.com",
                        "password": "secret1", "password_confirmation": "secret1",
                    ]) else { continue }
                    outcomes.withLock { $0[response.status, default: 0] += 1 }
                    if response.status == 429 {
                        _ = retryAfter.withLock { $0.insert("\(response.errorCode ?? "?") \(response.headers["Retry-After"] ?? "-")") }
                    }
                }
            }
        }
        var latencies: [Double] = []
        let end = Date().addingTimeInterval(4)
        while Date() < end {
            let started = Date()
            _ = try socket.result("history", ["thread_id": thread])
            latencies.append(Date().timeIntervalSince(started) * 1000)
            Thread.sleep(forTimeInterval: 0.05)
        }
        stop.store(true, ordering: .relaxed)
        group.wait()
        latencies.sort()
        let median = latencies[latencies.count / 2]
        let counts = outcomes.withLock { $0 }
        // Numbers for the record (not asserted beyond the bounds below).
        print("storm: history median \(median) ms, max \(latencies.last ?? 0) ms over \(latencies.count) reads; sign-ups by status \(counts)")
        #expect(counts[201] ?? 0 > 0, "\(counts)")
        #expect(counts[429] ?? 0 > 0, "no sign-up was refused: \(counts)")
        #expect(retryAfter.withLock { $0 } == ["server_busy 1"])
        #expect(median < 100, "history median \(median) ms during the storm (\(counts))")
        #expect(try server.metric("spotter_hash_queue_rejections_total") ?? 0 >= Double(counts[429] ?? 0))
    }

    @Test func signUpIsLimitedPerAddress() throws {
        let server = try TestServer { $0.signupsPerHour = 3 }
        defer { server.stop() }
        let api = APIClient(port: server.port)
        for n in 1...3 { _ = try api.signUp(role: "client", name: "C\(n)", email: "c\(n)@example.com") }
        let refused = try api.call("POST", "/v1/auth/signup", [
            "role": "client", "full_name": "C4", "email": "c4@example.com", "password": "secret1", "password_confirmation": "secret1",
        ])
        #expect(refused.status == 429)
        #expect(refused.errorCode == "rate_limited")
        #expect(Int(refused.headers["Retry-After"] ?? "") ?? 0 > 0)
    }
}
