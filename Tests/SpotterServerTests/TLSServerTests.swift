import Foundation
import SpotterServer
import SpotterTLS
import Testing
import TestSupport

/// HTTPS and wss:// on the server's one port, over real sockets.
@Suite("TLS server", .serialized)
struct TLSServerTests {
    /// A server speaking TLS with a certificate (serial 1001) from a new CA.
    static func tlsServer(_ ca: TestCA, _ configure: (inout ServerConfig) -> Void = { _ in }) throws -> TestServer {
        try ca.issue(name: "localhost", serial: "1001", certPath: ca.directory + "/server.pem", keyPath: ca.directory + "/server.key")
        return try TestServer {
            $0.tlsCertificatePath = ca.directory + "/server.pem"
            $0.tlsKeyPath = ca.directory + "/server.key"
            configure(&$0)
        }
    }

    /// Python's `ssl` as an independent client: prints what it saw, one line per fact.
    static let pythonClient = #"""
import socket, ssl, sys, os, base64
port, cafile, mode = int(sys.argv[1]), sys.argv[2], sys.argv[3]
if mode == "old":
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.load_verify_locations(cafile)
    context.minimum_version = ssl.TLSVersion.TLSv1
    context.maximum_version = ssl.TLSVersion.TLSv1_1
    context.set_ciphers("DEFAULT:@SECLEVEL=0")
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as raw:
            with context.wrap_socket(raw, server_hostname="localhost") as tls:
                print("connected", tls.version())
    except ssl.SSLError as error:
        print("refused", error.reason)
    sys.exit(0)
context = ssl.create_default_context(cafile=cafile)
context.set_alpn_protocols(["http/1.1"])
with socket.create_connection(("127.0.0.1", port), timeout=5) as raw:
    with context.wrap_socket(raw, server_hostname="localhost") as tls:
        print("version", tls.version())
        print("alpn", tls.selected_alpn_protocol())
        key = base64.b64encode(os.urandom(16)).decode()
        tls.sendall(("GET /echo HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                     "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n" % key).encode())
        head = b""
        while b"\r\n\r\n" not in head:
            head += tls.recv(1)
        print("status", head.split(b"\r\n")[0].decode())
        payload = "مرحبا over wss".encode()
        mask = os.urandom(4)
        tls.sendall(bytes([0x81, 0x80 | len(payload)]) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))
        header = b""
        while len(header) < 2:
            header += tls.recv(2 - len(header))
        size = header[1] & 0x7f
        data = b""
        while len(data) < size:
            data += tls.recv(size - len(data))
        print("echo", data.decode())
        session = tls.session
# A second connection offers the first one's ticket: the server resumes it.
with socket.create_connection(("127.0.0.1", port), timeout=5) as raw:
    with context.wrap_socket(raw, server_hostname="localhost", session=session) as tls:
        print("resumed", tls.session_reused)
"""#

    static func python(_ port: Int, _ ca: TestCA, _ mode: String) throws -> [String: String] {
        let script = ca.directory + "/client.py"
        try pythonClient.write(toFile: script, atomically: true, encoding: .utf8)
        let result = try runTool("/usr/bin/env", ["python3", script, String(port), ca.caPath, mode])
        #expect(result.status == 0, "\(result.err)")
        var facts: [String: String] = [:]
        for line in result.out.split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 1)
            facts[String(parts[0])] = parts.count > 1 ? String(parts[1]) : ""
        }
        return facts
    }

    @Test func curlGetsHealthzOverHTTPS() throws {
        let ca = try TestCA()
        defer { ca.remove() }
        let server = try Self.tlsServer(ca)
        defer { server.stop() }
        let port = server.port
        let result = try runTool("/usr/bin/curl", [
            "-sS", "--max-time", "10", "--cacert", ca.caPath, "--resolve", "localhost:\(port):127.0.0.1",
            "-w", "\n%{http_code} %{http_version}", "https://localhost:\(port)/healthz",
        ])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out.contains("\"status\":\"ok\""))
        #expect(result.out.hasSuffix("\n200 1.1"))
        // Plain HTTP on the TLS port gets nothing back but a closed socket.
        let plain = try runTool("/usr/bin/curl", ["-sS", "--max-time", "10", "http://127.0.0.1:\(port)/healthz"])
        #expect(plain.status != 0)
    }

    @Test func pythonChatsOverWSSWithTLS13AndALPN() throws {
        let ca = try TestCA()
        defer { ca.remove() }
        let server = try Self.tlsServer(ca)
        defer { server.stop() }
        let facts = try Self.python(server.port, ca, "wss")
        #expect(facts["version"] == "TLSv1.3")
        #expect(facts["alpn"] == "http/1.1")
        #expect(facts["status"] == "HTTP/1.1 101 Switching Protocols")
        #expect(facts["echo"] == "مرحبا over wss")
        #expect(facts["resumed"] == "True")
    }

    @Test func tls10And11AreRefusedByTheServer() throws {
        let ca = try TestCA()
        defer { ca.remove() }
        let server = try Self.tlsServer(ca)
        defer { server.stop() }
        let facts = try Self.python(server.port, ca, "old")
        #expect(facts["connected"] == nil)
        // The server's protocol_version alert (not the client declining to offer them).
        #expect(facts["refused"]?.contains("PROTOCOL_VERSION") == true, "\(facts)")
        // The server still serves after it.
        #expect(try Self.python(server.port, ca, "wss")["echo"] != nil)
    }

    @Test func aStalledHandshakeIsCutOffWithinTheRequestBound() throws {
        let ca = try TestCA()
        defer { ca.remove() }
        let server = try Self.tlsServer(ca) {
            $0.requestTimeoutSeconds = 1
            $0.idleTimeoutSeconds = 60
        }
        defer { server.stop() }
        // Nothing sent; and half a ClientHello (a record header promising 512 bytes, then 10 of them).
        let silent = try BlockingSocket(port: server.port, timeoutSeconds: 8)
        let half = try BlockingSocket(port: server.port, timeoutSeconds: 8)
        half.write([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03, 0, 0, 0, 0])
        // Both are closed by the server (EOF) well before the idle timeout; a read timeout would throw.
        #expect(try silent.readToEnd().isEmpty)
        #expect(try half.readToEnd().isEmpty)
        // A client that completes its handshake stays.
        let client = try TLSTestClient(port: server.port, context: TLSContext.client(trusting: ca.caPath))
        try client.upgrade(path: "/echo")
        Thread.sleep(forTimeInterval: 2.5)
        #expect(try client.echo("still here") == "still here")
    }

    @Test func aReloadSwapsTheCertificateForNewConnectionsAndKeepsOpenOnes() throws {
        let ca = try TestCA()
        defer { ca.remove() }
        let server = try Self.tlsServer(ca)
        defer { server.stop() }
        let context = try TLSContext.client(trusting: ca.caPath)
        let open = try TLSTestClient(port: server.port, context: context)
        #expect(open.session.peerCertificate?.serial == "1001")
        try open.upgrade(path: "/echo")
        #expect(try open.echo("before") == "before")

        // New files at the same paths, then the reload SIGHUP does.
        try ca.issue(name: "localhost", serial: "2002", certPath: ca.directory + "/server.pem", keyPath: ca.directory + "/server.key")
        #expect(Self.reload(server.server) == true)
        let fresh = try TLSTestClient(port: server.port, context: context)
        #expect(fresh.session.peerCertificate?.serial == "2002")
        #expect(try open.echo("after") == "after")

        // A broken certificate: the reload fails and the one in use stays.
        try "not a certificate".write(toFile: ca.directory + "/server.pem", atomically: true, encoding: .utf8)
        #expect(Self.reload(server.server) == false)
        let third = try TLSTestClient(port: server.port, context: context)
        #expect(third.session.peerCertificate?.serial == "2002")
        #expect(try open.echo("still") == "still")
    }

    static func reload(_ server: Server) -> Bool? {
        let done = DispatchSemaphore(value: 0)
        let outcome = OutcomeBox()
        server.reloadTLS { ok in
            outcome.value = ok
            done.signal()
        }
        guard done.wait(timeout: .now() + 10) == .success else { return nil }
        return outcome.value
    }

    /// SIGHUP to the real binary: the new certificate for new connections, the open wss socket stays.
    @Test func sighupReloadsInTheRealBinary() throws {
        let ca = try TestCA()
        defer { ca.remove() }
        let cert = ca.directory + "/server.pem", key = ca.directory + "/server.key"
        try ca.issue(name: "localhost", serial: "1001", certPath: cert, keyPath: key)
        let port = try ServerProcess.freePort()
        let process = Process()
        process.executableURL = ServerProcess.binary
        process.arguments = ["serve", "--port", String(port), "--data-dir", ca.directory + "/data", "--log-level", "warning", "--echo"]
        process.environment = ProcessInfo.processInfo.environment.merging(["SPOTTER_TLS_CERT": cert, "SPOTTER_TLS_KEY": key]) { $1 }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer {
            process.terminate()
            process.waitUntilExit()
        }
        let context = try TLSContext.client(trusting: ca.caPath)
        var open: TLSTestClient?
        for _ in 0..<100 where open == nil {
            open = try? TLSTestClient(port: port, context: context)
            if open == nil { Thread.sleep(forTimeInterval: 0.1) }
        }
        let socket = try #require(open)
        try socket.upgrade(path: "/echo")
        try ca.issue(name: "localhost", serial: "3003", certPath: cert, keyPath: key)
        kill(process.processIdentifier, SIGHUP)
        var serial: String?
        for _ in 0..<50 {
            serial = try TLSTestClient(port: port, context: context).session.peerCertificate?.serial
            if serial == "3003" { break }
            Thread.sleep(forTimeInterval: 0.1)
        }
        #expect(serial == "3003")
        #expect(process.isRunning)
        #expect(try socket.echo("after sighup") == "after sighup")
    }
}

extension TLSServerTests {
    /// One metric's value, read over HTTPS with curl.
    static func metric(_ port: Int, _ ca: TestCA, _ name: String) throws -> Double {
        let result = try runTool("/usr/bin/curl", ["-sS", "--max-time", "10", "--cacert", ca.caPath, "https://127.0.0.1:\(port)/metrics"])
        for line in result.out.split(separator: "\n") where line.hasPrefix(name + " ") {
            return Double(line.split(separator: " ").last!) ?? 0
        }
        return 0
    }

    /// Back-pressure counts what TLS really queues: a wss:// client that never reads is closed as a slow reader.
    @Test func aWSSClientThatNeverReadsIsClosedAsASlowReader() throws {
        let ca = try TestCA()
        defer { ca.remove() }
        let server = try Self.tlsServer(ca) {
            $0.maxOutboundBytes = 65536
            $0.socketSendBufferBytes = 4096
        }
        defer { server.stop() }
        let client = try TLSTestClient(port: server.port, context: TLSContext.client(trusting: ca.caPath), receiveBufferBytes: 4096)
        try client.upgrade(path: "/echo")
        let text = String(repeating: "x", count: 120)
        var closed = 0.0
        for index in 0..<20_000 {
            guard try client.sendText(text) else { break }
            if index % 500 == 499 {
                closed = try Self.metric(server.port, ca, "spotter_backpressure_disconnects_total")
                if closed >= 1 { break }
            }
        }
        for _ in 0..<50 where closed < 1 {
            Thread.sleep(forTimeInterval: 0.1)
            closed = try Self.metric(server.port, ca, "spotter_backpressure_disconnects_total")
        }
        #expect(closed == 1)
    }

    /// Without TLS, SIGHUP (`systemctl reload`) must not stop the server.
    @Test func sighupWithoutTLSLeavesThePlainServerRunning() throws {
        let directory = NSTemporaryDirectory() + "spotter-hup-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = try ServerProcess(dataDirectory: directory)
        defer { server.stop() }
        kill(server.process.processIdentifier, SIGHUP)
        Thread.sleep(forTimeInterval: 0.5)
        #expect(server.process.isRunning)
        #expect(try HTTPTestClient(port: server.port).request("GET", "/healthz").status == 200)
    }
}

private final class OutcomeBox: @unchecked Sendable {
    var value: Bool?
}
