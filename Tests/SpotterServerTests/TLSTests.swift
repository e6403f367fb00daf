import Foundation
import SpotterServer
import SpotterTLS
import Testing
import TestSupport

/// TLS on the port (issue 31 item 1): the session state machine in memory, then HTTPS and wss:// over real
/// sockets with a CA made in the test, curl and Python's `ssl` as independent clients.
@Suite("TLS", .serialized)
struct TLSTests {
    // MARK: - TLSSession in memory

    /// Hands each side's output to the other until neither has anything to say.
    static func converse(_ client: TLSSession, _ server: TLSSession, into clientGot: inout [UInt8], _ serverGot: inout [UInt8]) throws {
        for _ in 0..<20 {
            let toServer = client.takeOutput()
            let toClient = server.takeOutput()
            if toServer.isEmpty && toClient.isEmpty { return }
            _ = try toServer.withUnsafeBytes { try server.receive($0) { serverGot += $0 } }
            _ = try toClient.withUnsafeBytes { try client.receive($0) { clientGot += $0 } }
        }
    }

    static func serverContext(_ ca: TestCA, serial: String = "1001") throws -> TLSContext {
        let cert = ca.directory + "/s\(serial).pem", key = ca.directory + "/s\(serial).key"
        try ca.issue(name: "localhost", serial: serial, certPath: cert, keyPath: key)
        return try TLSContext.server(certificatePath: cert, keyPath: key)
    }

    @Test func sessionsTalkThroughMemoryWithTLS13AndALPN() throws {
        let ca = try TestCA()
        defer { ca.remove() }
        let serverContext = try Self.serverContext(ca)
        let clientContext = try TLSContext.client(trusting: ca.caPath)
        let server = try TLSSession(context: serverContext)
        let client = try TLSSession(context: clientContext, serverName: "localhost")
        // Written before the handshake: held, then sent once it is over.
        try Array("hello".utf8).withUnsafeBytes { try client.send($0) }
        #expect(!client.isReady)
        var clientGot: [UInt8] = [], serverGot: [UInt8] = []
        try Self.converse(client, server, into: &clientGot, &serverGot)
        #expect(client.isReady && server.isReady)
        #expect(server.protocolVersion == "TLSv1.3")
        #expect(server.alpn == "http/1.1" && client.alpn == "http/1.1")
        #expect(client.peerCertificate?.serial == "1001")
        #expect(client.peerCertificate?.subject.contains("CN=localhost") == true)
        #expect(serverGot == Array("hello".utf8))

        // A megabyte each way (many records), byte for byte.
        let big = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        try big.withUnsafeBytes { try server.send($0) }
        try big.withUnsafeBytes { try client.send($0) }
        serverGot = []
        try Self.converse(client, server, into: &clientGot, &serverGot)
        #expect(clientGot == big)
        #expect(serverGot == big)
        // Drained, neither side keeps the megabyte's buffers.
        #expect(server.bufferCapacity <= 2 * TLSSession.keptBufferBytes, "\(server.bufferCapacity)")
        #expect(client.bufferCapacity <= 2 * TLSSession.keptBufferBytes, "\(client.bufferCapacity)")

        // A clean close reaches the other side as the end of the stream.
        client.finish()
        var after: [UInt8] = []
        let closed = try client.takeOutput().withUnsafeBytes { try server.receive($0) { after += $0 } }
        #expect(closed && server.peerClosed && after.isEmpty)
    }

    @Test(arguments: [false, true])
    func aSecondConnectionResumesTheFirstSession(tls12: Bool) throws {
        let ca = try TestCA()
        defer { ca.remove() }
        let serverContext = try Self.serverContext(ca)
        let clientContext = try TLSContext.client(trusting: ca.caPath, maximumVersion: tls12 ? TLSContext.tls12 : nil)
        var saved: TLSSavedSession?
        for round in 0..<3 {
            let server = try TLSSession(context: serverContext)
            // The third round offers nothing: a full handshake again.
            let client = try TLSSession(context: clientContext, serverName: "localhost", resuming: round == 2 ? nil : saved)
            try client.start()
            var a: [UInt8] = [], b: [UInt8] = []
            try Self.converse(client, server, into: &a, &b)
            #expect(client.isReady && server.isReady)
            #expect(server.protocolVersion == (tls12 ? "TLSv1.2" : "TLSv1.3"))
            #expect(server.sessionReused == (round == 1), "round \(round)")
            #expect(client.sessionReused == (round == 1), "round \(round)")
            if round == 0 { saved = client.savedSession() }
        }
    }

    @Test func tls12StillWorksAndOlderOrForeignPeersFail() throws {
        let ca = try TestCA()
        defer { ca.remove() }
        let serverContext = try Self.serverContext(ca)
        // A TLS 1.2-only client: negotiated with an ECDHE AEAD suite.
        let old = try TLSSession(context: TLSContext.client(trusting: ca.caPath, maximumVersion: TLSContext.tls12), serverName: "localhost")
        let server = try TLSSession(context: serverContext)
        try old.start()
        var a: [UInt8] = [], b: [UInt8] = []
        try Self.converse(old, server, into: &a, &b)
        #expect(server.protocolVersion == "TLSv1.2")
        #expect(server.cipher.hasPrefix("ECDHE-") && server.cipher.contains("GCM") || server.cipher.contains("CHACHA20"))

        // A client trusting another CA refuses the server's certificate.
        let other = try TestCA()
        defer { other.remove() }
        let stranger = try TLSSession(context: TLSContext.client(trusting: other.caPath), serverName: "localhost")
        let server2 = try TLSSession(context: serverContext)
        try stranger.start()
        #expect(throws: TLSError.self) { try Self.converse(stranger, server2, into: &a, &b) }

        // Bytes that are not TLS: an error, and the session stays failed.
        let server3 = try TLSSession(context: serverContext)
        let junk = Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
        #expect(throws: TLSError.self) { _ = try junk.withUnsafeBytes { try server3.receive($0) { _ in } } }
        #expect(server3.failed != nil)
        #expect(throws: TLSError.self) { try junk.withUnsafeBytes { try server3.send($0) } }
        // Nothing at all: no error, not ready.
        let server4 = try TLSSession(context: serverContext)
        #expect(try [UInt8]().withUnsafeBytes { try server4.receive($0) { _ in } } == false)
        #expect(!server4.isReady)
    }

    @Test func aMismatchedKeyOrMissingFileIsRefused() throws {
        let ca = try TestCA()
        defer { ca.remove() }
        try ca.issue(name: "a", serial: "a1", certPath: ca.directory + "/a.pem", keyPath: ca.directory + "/a.key")
        try ca.issue(name: "b", serial: "b1", certPath: ca.directory + "/b.pem", keyPath: ca.directory + "/b.key")
        #expect(throws: TLSError.self) { try TLSContext.server(certificatePath: ca.directory + "/a.pem", keyPath: ca.directory + "/b.key") }
        #expect(throws: TLSError.self) { try TLSContext.server(certificatePath: ca.directory + "/none.pem", keyPath: ca.directory + "/a.key") }
        #expect(throws: TLSError.self) { try TLSContext.server(certificatePath: ca.directory + "/a.key", keyPath: ca.directory + "/a.key") }
    }
}
