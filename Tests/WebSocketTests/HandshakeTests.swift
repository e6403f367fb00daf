import Testing
@testable import WebSocket

@Suite("Handshake")
struct HandshakeTests {
    static let rfcKey = "dGhlIHNhbXBsZSBub25jZQ=="
    static let rfcAccept = "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="

    static let baseFields: [(name: String, value: String)] = [
        ("Host", "spotter.example"),
        ("Upgrade", "websocket"),
        ("Connection", "Upgrade"),
        ("Sec-WebSocket-Key", rfcKey),
        ("Sec-WebSocket-Version", "13"),
    ]

    /// An upgrade request: the base fields, minus `removing`, plus `adding`.
    static func request(method: String = "GET", versionMinor: Int = 1, removing: Set<String> = [],
                        adding: [(name: String, value: String)] = []) -> HTTPRequest {
        let fields = baseFields.filter { !removing.contains($0.name) } + adding
        return HTTPRequest(method: method, target: "/v1/ws", versionMinor: versionMinor, headers: HTTPHeaders(fields))
    }

    static func refusal(_ request: HTTPRequest, policy: HandshakePolicy = HandshakePolicy()) -> HTTPError? {
        do {
            _ = try Handshake.accept(request, policy: policy)
            return nil
        } catch {
            return error
        }
    }

    static func headerValue(_ error: HTTPError?, _ name: String) -> String? {
        error?.headers.first { $0.name == name }?.value
    }

    @Test("the RFC 6455 §1.3 example key")
    func rfcExample() throws {
        #expect(Handshake.acceptKey(for: Self.rfcKey) == Self.rfcAccept)
        let accepted = try Handshake.accept(Self.request(), policy: HandshakePolicy())
        #expect(accepted == Handshake.Accepted(acceptKey: Self.rfcAccept, subprotocol: nil))
        let response = String(decoding: accepted.response.bytes(keepAlive: false), as: UTF8.self)
        #expect(response == "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Accept: \(Self.rfcAccept)\r\n\r\n")
    }

    @Test("SHA-1 of known inputs")
    func sha1() {
        func hex(_ bytes: [UInt8]) -> String { bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined() }
        #expect(hex(Handshake.sha1([])) == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
        #expect(hex(Handshake.sha1(utf8("abc"))) == "a9993e364706816aba3e25717850c26c9cd0d89d")
    }

    @Test("header names and tokens are matched without regard to case")
    func caseInsensitive() throws {
        let request = HTTPRequest(method: "GET", target: "/", headers: HTTPHeaders([
            ("host", "a"), ("UPGRADE", "WebSocket"), ("connection", "keep-alive, upgrade"),
            ("sec-websocket-key", Self.rfcKey), ("SEC-WEBSOCKET-VERSION", "13"),
        ]))
        #expect(try Handshake.accept(request, policy: HandshakePolicy()).acceptKey == Self.rfcAccept)
    }

    @Test("a method other than GET gets 405 with Allow: GET", arguments: ["POST", "PUT", "get"])
    func wrongMethod(_ method: String) {
        let error = Self.refusal(Self.request(method: method))
        #expect(error?.status == 405)
        #expect(Self.headerValue(error, "Allow") == "GET")
    }

    @Test("a request that is not a WebSocket upgrade gets 426 with Sec-WebSocket-Version: 13")
    func notAnUpgrade() {
        for request in [
            Self.request(removing: ["Upgrade"]),
            Self.request(removing: ["Upgrade"], adding: [("Upgrade", "h2c")]),
            Self.request(versionMinor: 0),
        ] {
            let error = Self.refusal(request)
            #expect(error?.status == 426)
            #expect(Self.headerValue(error, "Sec-WebSocket-Version") == "13")
        }
    }

    @Test("another WebSocket version gets 426 with Sec-WebSocket-Version: 13")
    func wrongVersion() {
        for versions in [["8"], [], ["13", "13"], ["13, 8"]] {
            let error = Self.refusal(Self.request(removing: ["Sec-WebSocket-Version"],
                                                  adding: versions.map { ("Sec-WebSocket-Version", $0) }))
            #expect(error?.status == 426, "versions \(versions)")
            #expect(Self.headerValue(error, "Sec-WebSocket-Version") == "13")
        }
    }

    @Test("a missing Connection: Upgrade gets 400")
    func missingConnectionUpgrade() {
        #expect(Self.refusal(Self.request(removing: ["Connection"]))?.status == 400)
        #expect(Self.refusal(Self.request(removing: ["Connection"], adding: [("Connection", "keep-alive")]))?.status == 400)
        #expect(Self.refusal(Self.request(removing: ["Connection"], adding: [("Connection", "keep-alive, Upgrade")])) == nil)
    }

    @Test("a bad Sec-WebSocket-Key gets 400", arguments: [
        "not base64!!!!!!!!!!!!!!", "", "dGhlIHNhbXBsZSBub25j",  // 15 bytes
        "dGhlIHNhbXBsZSBub25jZXg=",  // 17 bytes
        "dGhlIHNhbXBsZSBub25jZQ",  // missing padding
    ])
    func badKey(_ key: String) {
        let error = Self.refusal(Self.request(removing: ["Sec-WebSocket-Key"], adding: [("Sec-WebSocket-Key", key)]))
        #expect(error?.status == 400)
    }

    @Test("a missing key or two keys get 400")
    func keyCount() {
        #expect(Self.refusal(Self.request(removing: ["Sec-WebSocket-Key"]))?.status == 400)
        #expect(Self.refusal(Self.request(adding: [("Sec-WebSocket-Key", "AAAAAAAAAAAAAAAAAAAAAA==")]))?.status == 400)
        #expect(Self.refusal(Self.request(adding: [("Sec-WebSocket-Key", Self.rfcKey)]))?.status == 400)
    }

    @Test("origins: refused when not listed, accepted when listed or absent")
    func origins() throws {
        let policy = HandshakePolicy(allowedOrigins: ["https://app.example", "http://localhost:3000"])
        let evil = Self.request(adding: [("Origin", "https://evil.example")])
        #expect(Self.refusal(evil, policy: policy)?.status == 403)
        #expect(Self.refusal(Self.request(adding: [("Origin", "https://app.example:443")]), policy: policy)?.status == 403)
        #expect(Self.refusal(Self.request(adding: [("Origin", "https://app.example")]), policy: policy) == nil)
        #expect(Self.refusal(Self.request(adding: [("origin", "http://localhost:3000")]), policy: policy) == nil)
        // Native apps send no Origin.
        #expect(Self.refusal(Self.request(), policy: policy) == nil)
        // An empty list allows every origin.
        #expect(Self.refusal(evil, policy: HandshakePolicy()) == nil)
        // The server's own pages (the console) always may: the Origin's authority is the Host.
        let host = Self.request(adding: [("Origin", "https://chat.example")]).headers["Host"] ?? ""
        #expect(Self.refusal(Self.request(adding: [("Origin", "http://\(host)")]), policy: policy) == nil, "\(host)")
        #expect(Self.refusal(Self.request(adding: [("Origin", "HTTPS://\(host.uppercased())")]), policy: policy) == nil)
        #expect(Self.refusal(Self.request(adding: [("Origin", "http://\(host).evil.example")]), policy: policy)?.status == 403)
        #expect(Self.refusal(Self.request(adding: [("Origin", "ftp://\(host)")]), policy: policy)?.status == 403)
        #expect(!Handshake.isSameOrigin("http://a.example", host: nil))
    }

    @Test("the spotter.v1 subprotocol is chosen from the client's offer")
    func subprotocolChosen() throws {
        for offer in [["chat, spotter.v1"], ["chat", "spotter.v1"], ["spotter.v1"]] {
            let request = Self.request(adding: offer.map { ("Sec-WebSocket-Protocol", $0) })
            let accepted = try Handshake.accept(request, policy: HandshakePolicy())
            #expect(accepted.subprotocol == "spotter.v1", "offer \(offer)")
            #expect(accepted.response.headers.contains { $0.name == "Sec-WebSocket-Protocol" && $0.value == "spotter.v1" })
            let text = String(decoding: accepted.response.bytes(), as: UTF8.self)
            #expect(text.contains("\r\nSec-WebSocket-Protocol: spotter.v1\r\n"))
        }
    }

    @Test("no subprotocol offered, or none we speak: nil and no header")
    func noSubprotocol() throws {
        for request in [Self.request(), Self.request(adding: [("Sec-WebSocket-Protocol", "chat, superchat")])] {
            let accepted = try Handshake.accept(request, policy: HandshakePolicy())
            #expect(accepted.subprotocol == nil)
            #expect(!accepted.response.headers.contains { $0.name == "Sec-WebSocket-Protocol" })
            #expect(!String(decoding: accepted.response.bytes(), as: UTF8.self).contains("Sec-WebSocket-Protocol"))
        }
        let none = HandshakePolicy(subprotocols: [])
        let offered = Self.request(adding: [("Sec-WebSocket-Protocol", "spotter.v1")])
        #expect(try Handshake.accept(offered, policy: none).subprotocol == nil)
    }

    @Test("a request parsed from bytes passes the handshake")
    func parsedRequest() throws {
        let request = try #require(try parseAll(HTTPRequestParserTests.upgrade).first)
        let accepted = try Handshake.accept(request, policy: HandshakePolicy(allowedOrigins: ["https://app.example"]))
        #expect(accepted.acceptKey == Self.rfcAccept)
    }
}
