import Foundation
import Testing
import TestSupport
import WebSocket
@testable import SpotterServer

/// `--trusted-proxy` over real sockets: whose address the per-address limits count. Sign-ups are limited to one
/// per address per hour here, so a second sign-up from the same address is 429 and one from another is 201.
@Suite(.serialized)
struct TrustedProxyTests {
    private func server(trusting blocks: [String]) throws -> TestServer {
        try TestServer {
            $0.signupsPerHour = 1
            try! $0.trustProxies(blocks)
        }
    }

    /// Signs up a new account over `http` and returns the status.
    private func signUp(_ http: HTTPTestClient, _ email: String, _ headers: [(String, String)] = []) throws -> Int {
        let body = #"{"role":"client","full_name":"P","email":"\#(email)","password":"secret1","password_confirmation":"secret1"}"#
        return try http.request("POST", "/v1/auth/signup", headers: [("Content-Type", "application/json")] + headers, body: body).status
    }

    private func signUp(port: Int, _ email: String, forwardedFor: String? = nil, proxyHeader: [UInt8]? = nil) throws -> Int {
        let socket = try BlockingSocket(port: port)
        if let proxyHeader { socket.write(proxyHeader) }
        return try signUp(HTTPTestClient(socket: socket), email, forwardedFor.map { [("X-Forwarded-For", $0)] } ?? [])
    }

    @Test func forwardedAddressesFromATrustedProxyEachGetTheirOwnBudget() throws {
        let server = try server(trusting: ["127.0.0.1/32"])
        defer { server.stop() }
        #expect(try signUp(port: server.port, "a1@example.com", forwardedFor: "198.51.100.1") == 201)
        #expect(try signUp(port: server.port, "a2@example.com", forwardedFor: "198.51.100.1") == 429)
        #expect(try signUp(port: server.port, "b1@example.com", forwardedFor: "198.51.100.2") == 201)
        // What the client wrote left of the proxy's entry is not believed: this is 198.51.100.1 again.
        #expect(try signUp(port: server.port, "a3@example.com", forwardedFor: "203.0.113.50, 198.51.100.1") == 429)
        // Malformed entries are skipped; through a second trusted hop (127.0.0.1 itself).
        #expect(try signUp(port: server.port, "c1@example.com", forwardedFor: "2001:db8::c, junk, 127.0.0.1") == 201)
        #expect(try signUp(port: server.port, "c2@example.com", forwardedFor: "[2001:db8::c]") == 429)
        // No usable entry: the proxy's own address, a budget of its own.
        #expect(try signUp(port: server.port, "p1@example.com", forwardedFor: "unknown") == 201)
        #expect(try signUp(port: server.port, "p2@example.com") == 429)
    }

    @Test func anUntrustedPeersForwardedForIsIgnored() throws {
        let server = try server(trusting: ["10.0.0.0/8", "::1/128"])
        defer { server.stop() }
        #expect(try signUp(port: server.port, "a1@example.com", forwardedFor: "198.51.100.1") == 201)
        // Another forwarded address, same peer: one budget.
        #expect(try signUp(port: server.port, "b1@example.com", forwardedFor: "198.51.100.2") == 429)
        #expect(try signUp(port: server.port, "b2@example.com") == 429)
    }

    @Test func noTrustedProxiesMeansNoForwardedFor() throws {
        let server = try server(trusting: [])
        defer { server.stop() }
        #expect(try signUp(port: server.port, "a1@example.com", forwardedFor: "198.51.100.1") == 201)
        #expect(try signUp(port: server.port, "b1@example.com", forwardedFor: "198.51.100.2") == 429)
    }

    @Test func aProxyHeaderFromATrustedPeerSetsTheAddress() throws {
        let server = try server(trusting: ["127.0.0.0/8"])
        defer { server.stop() }
        let a = ProxyHeader.encode(source: IPAddress("198.51.100.1")!, port: 40000)
        let b = ProxyHeader.encode(source: IPAddress("2001:db8::b")!, extra: [0x04, 0x00, 0x02, 0, 0])  // a NOOP TLV
        #expect(try signUp(port: server.port, "a1@example.com", proxyHeader: a) == 201)
        #expect(try signUp(port: server.port, "a2@example.com", proxyHeader: a) == 429)
        #expect(try signUp(port: server.port, "b1@example.com", proxyHeader: b) == 201)
        #expect(try signUp(port: server.port, "b2@example.com", proxyHeader: b) == 429)
        // The PROXY header's client is not a proxy: its X-Forwarded-For is ignored (still 198.51.100.1).
        #expect(try signUp(port: server.port, "a3@example.com", forwardedFor: "203.0.113.9", proxyHeader: a) == 429)
        // LOCAL (the proxy's health check): the peer's own address, which is trusted, so XFF counts.
        let local = ProxyHeader.encode(source: IPAddress("198.51.100.1")!, local: true)
        #expect(try signUp(port: server.port, "l1@example.com", forwardedFor: "203.0.113.9", proxyHeader: local) == 201)
        #expect(try signUp(port: server.port, "l2@example.com", proxyHeader: local) == 201)  // 127.0.0.1's first
        #expect(try signUp(port: server.port, "l3@example.com") == 429)
        // Several requests on the connection keep the header's address; the header is read once.
        let socket = try BlockingSocket(port: server.port)
        socket.write(ProxyHeader.encode(source: IPAddress("198.51.100.3")!))
        let http = HTTPTestClient(socket: socket)
        #expect(try signUp(http, "k1@example.com") == 201)
        #expect(try signUp(http, "k2@example.com") == 429)
        // Header and request in pieces: a byte at a time.
        let slow = try BlockingSocket(port: server.port)
        for byte in ProxyHeader.encode(source: IPAddress("198.51.100.4")!) { slow.write([byte]) }
        #expect(try signUp(HTTPTestClient(socket: slow), "s1@example.com") == 201)
        let text = try server.metricsText()
        #expect(text.contains(#"spotter_proxy_headers_total{result="accepted"}"#), "\(text)")
    }

    @Test func aProxyHeaderFromAnUntrustedPeerClosesTheConnection() throws {
        let server = try server(trusting: ["10.0.0.0/8"])
        defer { server.stop() }
        let socket = try BlockingSocket(port: server.port)
        socket.write(ProxyHeader.encode(source: IPAddress("198.51.100.1")!) + Array("GET /healthz HTTP/1.1\r\n\r\n".utf8))
        #expect(try socket.readToEnd().isEmpty)  // closed, nothing answered
        // The address was not taken either: the peer's budget is untouched and spent once.
        #expect(try signUp(port: server.port, "a1@example.com") == 201)
        #expect(try signUp(port: server.port, "a2@example.com", proxyHeader: nil) == 429)
        #expect(try server.metricsText().contains(#"spotter_proxy_headers_total{result="untrusted"}"#))
    }

    @Test func aMalformedProxyHeaderClosesTheConnection() throws {
        let server = try server(trusting: ["127.0.0.1"])
        defer { server.stop() }
        var wrongVersion = ProxyHeader.encode(source: IPAddress("198.51.100.1")!)
        wrongVersion[12] = 0x11
        let tooLong = ProxyHeader.signature + [0x21, 0x11, 0xFF, 0xFF]
        let datagram = ProxyHeader.signature + [0x21, 0x12, 0x00, 0x0C] + [UInt8](repeating: 1, count: 12)
        for bytes in [wrongVersion, tooLong, datagram] {
            let socket = try BlockingSocket(port: server.port)
            socket.write(bytes + Array("GET /healthz HTTP/1.1\r\n\r\n".utf8))
            #expect(try socket.readToEnd().isEmpty)
        }
        // A plain request from the trusted peer, without a header, is served.
        let plain = try HTTPTestClient(port: server.port).request("GET", "/healthz")
        #expect(plain.status == 200)
        #expect(try server.metricsText().contains(#"spotter_proxy_headers_total{result="malformed"}"#))
    }

    @Test func badBlocksAreRefusedWithTheReason() {
        var config = ServerConfig()
        #expect(throws: AddressRange.ParseError.hostBitsSet("10.0.0.1/8", suggestion: "10.0.0.0/8")) {
            try config.trustProxies(["127.0.0.1/32", "10.0.0.1/8"])
        }
        #expect(throws: AddressRange.ParseError.notAnAddress("proxy.internal")) { try config.trustProxies(["proxy.internal"]) }
        #expect(throws: Never.self) { try config.trustProxies(["::1", "fd00::/8", "0.0.0.0/0"]) }
        #expect(config.trustedProxyDescriptions == ["::1/128", "fd00::/8", "0.0.0.0/0"])
    }
}
