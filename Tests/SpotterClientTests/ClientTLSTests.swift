import Foundation
import SpotterClient
import Testing
import TestSupport

/// wss:// on Linux: the client's own TLS (`TLSStream`) against the live `spotter` serving TLS on its port
/// (`--tls-cert/--tls-key`), with certificates from a CA made for the test.
@Suite("SpotterClient: TLS", .serialized)
struct ClientTLSTests {
    @Test func chatBothWaysOverWSS() async throws {
        let ca = try ClientTestCA()
        defer { ca.remove() }
        let server = try LiveServer()
        defer { server.cleanup() }
        let (coach, client, thread) = try server.pair()
        // The accounts were made over plain HTTP; the same data is now served with TLS only.
        server.stop()
        server.arguments += try ca.serverArguments(names: "DNS:localhost,IP:127.0.0.1")
        try server.start()
        let trust = try TrustedCertificates(contentsOfFile: ca.caPath)
        // By name (SNI and the name checked) and by address (the certificate's IP name checked).
        let coachSide = Self.client(coach, url: "https://localhost:\(server.port)", trust: trust)
        let clientSide = Self.client(client, url: "https://127.0.0.1:\(server.port)", trust: trust)
        defer { Task { await coachSide.close(); await clientSide.close() } }
        let (coachHeard, clientHeard) = try await connectRecorded(coachSide, clientSide)

        let stored = try await clientSide.send(text: "مرحبا over TLS", to: thread)
        #expect(stored.seq == 1)
        try await eventually("the coach to get the message") { coachHeard.messages.count == 1 }
        #expect(coachHeard.messages[0].message.text == "مرحبا over TLS")
        _ = try await coachSide.markRead(threadId: thread, seq: 1)
        try await eventually("the ✓✓ at the client") { clientHeard.receipts.contains { $0.readSeq == 1 } }
        // A message larger than one TLS record (16 KiB) both ways: a history page of long messages.
        for index in 0..<30 { _ = try await coachSide.send(text: "\(index) " + String(repeating: "ك", count: 990), to: thread) }
        try await eventually("the client to get the 31st") { clientHeard.messages.contains { $0.message.seq == 31 } }
        let page = try await clientSide.history(threadId: thread, limit: 31)
        #expect(page.messages.count == 31)
        #expect(clientHeard.disconnects.isEmpty)
        // HTTPS goes through FoundationNetworking (libcurl), which trusts the system's bundle only: this test CA is
        // not in it, so HTTP calls to this server fail (typed), while the socket, given the CA, works.
        let http = await refusal { _ = try await SpotterHTTP(baseURL: URL(string: "https://localhost:\(server.port)")!).me(token: client.access) }
        #expect(http?.code == "connection_lost", "\(String(describing: http))")
        #expect(!clientHeard.all.contains { if case .error = $0 { true } else { false } })
    }

    @Test func aCertificateForAnotherNameIsRefused() async throws {
        let ca = try ClientTestCA()
        defer { ca.remove() }
        let server = try LiveServer(arguments: try ca.serverArguments(names: "DNS:other.example"))
        defer { server.cleanup() }
        let error = try await Self.tlsFailure(url: "https://localhost:\(server.port)", trust: TrustedCertificates(contentsOfFile: ca.caPath))
        #expect(error.message.contains("hostname mismatch"), "\(error)")
        // An address is checked against the IP names: this certificate has none.
        let byAddress = try await Self.tlsFailure(url: "https://127.0.0.1:\(server.port)", trust: TrustedCertificates(contentsOfFile: ca.caPath))
        #expect(byAddress.message.contains("IP address mismatch"), "\(byAddress)")
    }

    @Test func anUntrustedCertificateIsRefused() async throws {
        let ca = try ClientTestCA()
        defer { ca.remove() }
        let other = try ClientTestCA()
        defer { other.remove() }
        let server = try LiveServer(arguments: try ca.serverArguments(names: "DNS:localhost"))
        defer { server.cleanup() }
        // The system's trust store alone, then another CA: neither signed this certificate.
        let alone = try await Self.tlsFailure(url: "https://localhost:\(server.port)", trust: nil)
        #expect(alone.message.contains("certificate not accepted"), "\(alone)")
        let wrongCA = try await Self.tlsFailure(url: "https://localhost:\(server.port)", trust: TrustedCertificates(contentsOfFile: other.caPath))
        #expect(wrongCA.message.contains("certificate not accepted"), "\(wrongCA)")
        // A PEM with no certificate in it is refused too (nothing would be trusted).
        let empty = try await Self.tlsFailure(url: "https://localhost:\(server.port)", trust: TrustedCertificates(pem: "not a certificate"))
        #expect(empty.message.contains("no certificate"), "\(empty)")
    }

    @Test func aServerThatNeverAnswersTheHandshakeIsGivenUp() async throws {
        let silent = try SilentListener()
        defer { silent.close() }
        // The transport alone gives up after its handshake timeout, with 1015.
        let transport = POSIXWebSocketTransport(handshakeTimeout: .milliseconds(500))
        let connection = transport.connect(url: URL(string: "wss://127.0.0.1:\(silent.port)/v1/ws")!, headers: [:], subprotocols: [])
        let started = Date()
        var last: TransportEvent?
        for await event in connection.events { last = event }
        #expect(last == .closed(code: 1015, reason: "no TLS handshake from the server in time"))
        #expect(Date().timeIntervalSince(started) < 10)
        // `close` during the handshake ends it at once (the socket is shut down under the reader thread).
        let patient = POSIXWebSocketTransport(handshakeTimeout: .seconds(3600))
            .connect(url: URL(string: "wss://127.0.0.1:\(silent.port)/v1/ws")!, headers: [:], subprotocols: [])
        let ended = Locked<TransportEvent?>(nil)
        Task { for await event in patient.events { ended.withLock { $0 = event } } }
        try await Task.sleep(for: .milliseconds(200))
        patient.close(code: 1000, reason: "")
        try await eventually(5, "the handshake to end on close") { ended.withLock { $0 }.map { if case .closed = $0 { true } else { false } } == true }
        // The client gives up at its connect timeout, however long the transport would wait.
        let client = SpotterClient(configuration: SpotterConfiguration(
            url: URL(string: "https://127.0.0.1:\(silent.port)")!, tokens: Tokens(accessToken: "a", refreshToken: "r"),
            transport: POSIXWebSocketTransport(handshakeTimeout: .seconds(3600)), minDelayMilliseconds: 50, maxDelayMilliseconds: 100,
            connectTimeout: .milliseconds(500)))
        defer { Task { await client.close() } }
        let heard = await Recorder(client)
        await client.connect()
        try await eventually(5, "the connect timeout") { heard.all.contains { if case .connectTimeout = $0 { true } else { false } } }
    }

    // MARK: - Helpers

    static func client(_ account: LiveServer.Account, url: String, trust: TrustedCertificates?) -> SpotterClient {
        SpotterClient(configuration: SpotterConfiguration(
            url: URL(string: url)!, tokens: Tokens(accessToken: account.access, refreshToken: account.refresh),
            minDelayMilliseconds: 50, maxDelayMilliseconds: 400, trustedCertificates: trust))
    }

    /// Connects a client that cannot get through TLS: its `tls_failed` error, soon (not a hang), and never live.
    static func tlsFailure(url: String, trust: TrustedCertificates?) async throws -> SpotterError {
        let client = SpotterClient(configuration: SpotterConfiguration(
            url: URL(string: url)!, tokens: Tokens(accessToken: "a", refreshToken: "r"),
            minDelayMilliseconds: 50, maxDelayMilliseconds: 100, connectTimeout: .seconds(30), trustedCertificates: trust))
        let heard = await Recorder(client)
        await client.connect()
        defer { Task { await client.close() } }
        let failure = { heard.all.lazy.compactMap { if case .error(let error) = $0, error.code == "tls_failed" { error } else { nil } }.first }
        try await eventually(5, "a tls_failed error") { failure() != nil }
        #expect(!heard.all.contains { if case .state(.live) = $0 { true } else { false } })
        #expect(!heard.all.contains { if case .connectTimeout = $0 { true } else { false } })
        return failure()!
    }
}

/// A CA made for one test with the openssl CLI, and server certificates it signs.
struct ClientTestCA {
    let directory: String
    var caPath: String { directory + "/ca.pem" }

    init() throws {
        directory = NSTemporaryDirectory() + "spotter-client-tls-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try Self.openssl(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                          "-keyout", directory + "/ca.key", "-out", caPath, "-days", "2", "-subj", "/CN=Spotter Client Test CA"])
    }

    /// A certificate for `names` (a subjectAltName list) and its key; `serve`'s options for them.
    func serverArguments(names: String) throws -> [String] {
        let tag = UUID().uuidString
        let (cert, key, csr, ext) = (directory + "/\(tag).pem", directory + "/\(tag).key", directory + "/\(tag).csr", directory + "/\(tag).cnf")
        try "subjectAltName=\(names)\n".write(toFile: ext, atomically: true, encoding: .utf8)
        try Self.openssl(["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", key, "-out", csr,
                          "-subj", "/CN=spotter"])
        try Self.openssl(["x509", "-req", "-in", csr, "-CA", caPath, "-CAkey", directory + "/ca.key", "-CAcreateserial",
                          "-days", "2", "-out", cert, "-extfile", ext])
        return ["--tls-cert", cert, "--tls-key", key]
    }

    func remove() { try? FileManager.default.removeItem(atPath: directory) }

    private static func openssl(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw BlockingSocket.Failure(description: "openssl \(arguments[0]) failed") }
    }
}

/// A TCP listener on 127.0.0.1 that never accepts: the kernel completes connects into its backlog, and nothing is
/// ever said on them.
final class SilentListener: @unchecked Sendable {
    let fd: Int32
    let port: Int

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        guard bound == 0, listen(fd, 16) == 0 else { throw BlockingSocket.Failure(description: "listen failed") }
        withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = getsockname(fd, $0, &length) } }
        self.fd = fd
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    func close() { _ = Glibc.close(fd) }
}
