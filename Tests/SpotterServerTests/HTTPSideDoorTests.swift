import Foundation
import Testing
import TestSupport
import WebSocket

@Suite("HTTP side door", .serialized)
struct HTTPSideDoorTests {
    @Test func healthzReportsStatusVersionAndConnections() throws {
        let server = try TestServer()
        defer { server.stop() }
        let client = try HTTPTestClient(port: server.port)
        let response = try client.request("GET", "/healthz")
        #expect(response.status == 200)
        #expect(response.headers["Content-Type"] == "application/json")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
        #expect(json["status"] as? String == "ok")
        #expect(json["version"] as? String == "0.1.0")
        #expect(json["connections"] as? Int == 1)
        #expect((json["uptime_seconds"] as? Double ?? -1) >= 0)

        // HTTP/1.1 keeps the connection: a second request on the same socket works.
        let again = try client.request("GET", "/healthz")
        #expect(again.status == 200)
    }

    @Test func unknownPathIs404AndWrongMethodIs405() throws {
        let server = try TestServer()
        defer { server.stop() }
        let client = try HTTPTestClient(port: server.port)
        let missing = try client.request("GET", "/nope")
        #expect(missing.status == 404)
        #expect(missing.bodyText.contains("\"code\":\"not_found\""))
        let post = try client.request("POST", "/healthz", body: "{}")
        #expect(post.status == 405)
        #expect(post.headers["Allow"] == "GET")
    }

    @Test func echoIsOffUnlessEnabled() throws {
        let server = try TestServer { $0.echoEnabled = false }
        defer { server.stop() }
        #expect(throws: BlockingSocket.Failure.self) { try WebSocketTestClient(port: server.port) }
    }

    @Test func malformedRequestGets400AndTheConnectionCloses() throws {
        let server = try TestServer()
        defer { server.stop() }
        let socket = try BlockingSocket(port: server.port)
        socket.write("GET /healthz HTTP/1.1\nHost: x\n\n")  // bare LF
        let reply = String(decoding: try socket.readToEnd(), as: UTF8.self)
        #expect(reply.hasPrefix("HTTP/1.1 400 Bad Request\r\n"))
        #expect(reply.contains("Connection: close"))
    }

    @Test func oversizedHeadGets431BeforeItEnds() throws {
        let server = try TestServer()
        defer { server.stop() }
        let socket = try BlockingSocket(port: server.port)
        // No blank line ever comes: the server must refuse once 8 KiB pile up.
        socket.write("GET / HTTP/1.1\r\nHost: x\r\nX-Filler: " + String(repeating: "a", count: 9000))
        let reply = String(decoding: try socket.readToEnd(), as: UTF8.self)
        #expect(reply.hasPrefix("HTTP/1.1 431 "))
    }

    @Test func metricsExposeCountersInPrometheusText() throws {
        let server = try TestServer()
        defer { server.stop() }
        // One refused upgrade (no Upgrade header) to count.
        let plain = try HTTPTestClient(port: server.port)
        #expect(try plain.request("GET", "/echo").status == 426)

        let text = try server.metricsText()
        for name in [
            "spotter_connections_open", "spotter_connections_accepted_total", "spotter_websocket_frames_in_total",
            "spotter_websocket_frames_out_total", "spotter_bytes_in_total", "spotter_bytes_out_total",
            "spotter_backpressure_disconnects_total", "spotter_store_writes_in_flight", "spotter_store_batches_total",
            "spotter_store_jobs_total", "spotter_store_checkpoint_passes_total",
        ] {
            #expect(text.contains("# TYPE \(name) "), "missing \(name)")
        }
        let failure = text.split(separator: "\n").first { $0.hasPrefix("spotter_handshake_failures_total{") }
        let line = try #require(failure)
        #expect(line.contains("status=\"426\""))
        #expect(line.hasSuffix(" 1"))
        // plain, the metrics read above, and this one.
        #expect(try server.metric("spotter_connections_accepted_total") == 3)
    }
}
