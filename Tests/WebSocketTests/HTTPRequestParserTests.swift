import Testing
@testable import WebSocket

@Suite("HTTPRequestParser")
struct HTTPRequestParserTests {
    static let upgrade = httpRequest([
        "GET /v1/ws?token=abc HTTP/1.1",
        "Host: spotter.example:8080",
        "Upgrade: websocket",
        "Connection: keep-alive, Upgrade",
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
        "Sec-WebSocket-Version: 13",
        "X-Empty:",
        "X-Spaces: \t padded value \t",
    ])

    @Test("a request fed one byte at a time equals the request fed whole")
    func byteAtATime() throws {
        let whole = try #require(try parseAll(Self.upgrade).first)
        var parser = HTTPRequestParser()
        var results: [HTTPRequest] = []
        for (index, byte) in Self.upgrade.enumerated() {
            parser.append([byte])
            if let request = try parser.next() {
                #expect(index == Self.upgrade.count - 1, "complete too early, at byte \(index)")
                results.append(request)
            }
        }
        #expect(results == [whole])
        #expect(parser.bufferedBytes == 0)
        #expect(whole.method == "GET")
        #expect(whole.target == "/v1/ws?token=abc")
        #expect(whole.versionMinor == 1)
        #expect(whole.headers.fields.count == 7)
        #expect(whole.headers["X-Empty"] == "")
        #expect(whole.headers["X-Spaces"] == "padded value")
        #expect(whole.body.isEmpty)
    }

    @Test("header lookup is case-insensitive and keeps every value in order")
    func headerLookup() throws {
        let request = try #require(try parseAll(httpRequest([
            "GET / HTTP/1.1", "host: a", "X-Multi: one", "x-multi: two", "Content-Type: text/plain",
        ])).first)
        #expect(request.headers["Host"] == "a")
        #expect(request.headers["HOST"] == "a")
        #expect(request.headers["content-TYPE"] == "text/plain")
        // Only ASCII letters fold; other bytes must match exactly.
        #expect(HTTPHeaders([("X-Ä", "1")])["x-Ä"] == "1")
        #expect(HTTPHeaders([("X-Ä", "1")])["X-ä"] == nil)
        #expect(request.headers["X-MULTI"] == "one")
        #expect(request.headers.values("X-Multi") == ["one", "two"])
        #expect(request.headers["Missing"] == nil)
        #expect(request.headers["Hos"] == nil)
        #expect(request.headers.values("Missing").isEmpty)
    }

    @Test("tokens splits, trims and lower-cases list headers")
    func tokens() {
        var headers = HTTPHeaders()
        headers.add("Connection", "keep-alive, Upgrade")
        #expect(headers.tokens("Connection") == ["keep-alive", "upgrade"])
        headers.add("connection", " ,\tClose ,, ")
        #expect(headers.tokens("CONNECTION") == ["keep-alive", "upgrade", "close"])
        #expect(headers.tokens("Upgrade").isEmpty)
    }

    @Test("path, query and query parameters")
    func pathAndQuery() {
        let request = HTTPRequest(
            method: "GET",
            target: "/v1/ws?token=a%20b%2Bc&name=J+D&empty=&flag&arabic=%D9%85%D8%B1%D8%AD%D8%A8%D8%A7&lower=%e2%82%ac&&eq=x=y",
            headers: HTTPHeaders())
        #expect(request.path == "/v1/ws")
        #expect(request.query?.hasPrefix("token=a%20b") == true)
        #expect(request.queryParameter("token") == "a b+c")
        #expect(request.queryParameter("name") == "J D")
        #expect(request.queryParameter("empty") == "")
        #expect(request.queryParameter("flag") == "")
        #expect(request.queryParameter("arabic") == "مرحبا")
        #expect(request.queryParameter("lower") == "€")
        #expect(request.queryParameter("eq") == "x=y")
        #expect(request.queryParameter("") == nil)
        let accented = HTTPRequest(method: "GET", target: "/café/é?q=ü&x", headers: HTTPHeaders())
        #expect(accented.path == "/café/é")
        #expect(accented.query == "q=ü&x")
        #expect(accented.queryParameter("q") == "ü")
        #expect(request.queryParameter("missing") == nil)
        #expect(request.queryParameter("tok") == nil)

        let plain = HTTPRequest(method: "GET", target: "/plain", headers: HTTPHeaders())
        #expect(plain.path == "/plain")
        #expect(plain.query == nil)
        #expect(plain.queryParameter("x") == nil)
        let bare = HTTPRequest(method: "GET", target: "/p?", headers: HTTPHeaders())
        #expect(bare.path == "/p")
        #expect(bare.query == "")
    }

    @Test("a head that never ends fails with 431 as soon as it passes 8192 bytes")
    func headTooLargeWhileWaiting() throws {
        var parser = HTTPRequestParser()
        let line = Array("GET / HTTP/1.1\r\nX-Pad: ".utf8)
        parser.append(line + [UInt8](repeating: 0x61, count: 8192 - line.count))
        #expect(try parser.next() == nil)  // 8192 bytes: still within the limit
        parser.append([0x61])
        let error = #expect(throws: HTTPError.self) { try parser.next() }
        #expect(error?.status == 431)
    }

    /// A head of exactly `size` bytes, blank line included.
    static func head(ofSize size: Int) -> [UInt8] {
        let start = "GET / HTTP/1.1\r\nHost: a\r\nX-Pad: "
        let pad = size - start.utf8.count - 4
        return Array((start + String(repeating: "p", count: pad) + "\r\n\r\n").utf8)
    }

    @Test("a complete head over 8192 bytes fails with 431; 8192 bytes is fine")
    func headTooLargeComplete() throws {
        #expect(Self.head(ofSize: 8192).count == 8192)
        #expect(try parseAll(Self.head(ofSize: 8192)).count == 1)
        #expect(parseError(Self.head(ofSize: 8193))?.status == 431)
        #expect(parseError(Self.head(ofSize: 20_000))?.status == 431)
        let small = HTTPRequestParser(maxHeadBytes: 100)
        #expect(parseError(Self.head(ofSize: 101), parser: small)?.status == 431)
        #expect(parseError(Self.head(ofSize: 100), parser: small) == nil)
    }

    @Test("64 header fields are accepted, 65 fail with 431")
    func headerCount() throws {
        func request(fields: Int) -> [UInt8] {
            httpRequest(["GET / HTTP/1.1", "Host: a"] + (1..<fields).map { "X-Field-\($0): \($0)" })
        }
        let ok = try parseAll(request(fields: 64))
        #expect(ok.first?.headers.fields.count == 64)
        #expect(parseError(request(fields: 65))?.status == 431)
    }

    @Test("malformed heads are refused with 400", arguments: [
        "GET / HTTP/1.1\nHost: a\r\n\r\n",  // bare LF
        "GET / HTTP/1.1\r\nHost: a\nX: b\r\n\r\n",  // bare LF inside the fields
        "GET / HTTP/1.1\r\nHost: a\rX: b\r\n\r\n",  // bare CR
        "GET / HTTP/1.1\r\nHost : a\r\n\r\n",  // whitespace before the colon
        "GET / HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n",  // obs-fold
        "GET / HTTP/1.1\r\nHost: a\r\n\tfolded\r\n\r\n",  // obs-fold with a tab
        "GET / HTTP/1.1\r\n\r\n",  // missing Host
        "GET / HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n",  // two Host fields
        "GET / FOO/1.1\r\nHost: a\r\n\r\n",  // garbage version
        "GET / HTTP1.1\r\nHost: a\r\n\r\n",
        "GET http://example.com/ HTTP/1.1\r\nHost: a\r\n\r\n",  // target not a path
        "GET index.html HTTP/1.1\r\nHost: a\r\n\r\n",
        "GET  / HTTP/1.1\r\nHost: a\r\n\r\n",  // double space
        "GET /\u{7F} HTTP/1.1\r\nHost: a\r\n\r\n",
        "G(T / HTTP/1.1\r\nHost: a\r\n\r\n",  // method not a token
        "GET / HTTP/1.1\r\nHost: a\r\nNoColon\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: a\r\n: empty name\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: a\r\nX: a\u{01}b\r\n\r\n",  // control character in a value
        "\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n",
    ])
    func badRequest(_ text: String) {
        #expect(parseError(Array(text.utf8))?.status == 400)
    }

    @Test("versions other than HTTP/1.0 and 1.1 get 505", arguments: ["HTTP/2.0", "HTTP/1.2", "HTTP/3"])
    func unsupportedVersion(_ version: String) {
        #expect(parseError(httpRequest(["GET / \(version)", "Host: a"]))?.status == 505)
    }

    @Test("HTTP/1.0 needs no Host; OPTIONS * is a valid target")
    func http10AndAsterisk() throws {
        let old = try #require(try parseAll(httpRequest(["GET /old HTTP/1.0"])).first)
        #expect(old.versionMinor == 0)
        #expect(old.headers.fields.isEmpty)
        #expect(try parseAll(httpRequest(["OPTIONS * HTTP/1.1", "Host: a"])).first?.target == "*")
    }

    @Test("a streamed body is handed over after its head, in pieces, whatever the split; the next request follows")
    func streamedBody() throws {
        let body = (0..<3000).map { UInt8(truncatingIfNeeded: $0) }
        let bytes = Array("PUT /up HTTP/1.1\r\nHost: a\r\nContent-Length: 3000\r\n\r\n".utf8) + body
            + Array("GET /next HTTP/1.1\r\nHost: a\r\n\r\n".utf8)
        for split in [1, 7, 100, 4096] {
            var parser = HTTPRequestParser(maxBodyBytes: 10)  // the streamed body may pass the buffered limit
            parser.largerBodyLimit = { $0.path == "/up" ? 5000 : nil }
            parser.streamsBody = { $0.path == "/up" }
            var head: HTTPRequest?
            var received: [UInt8] = []
            var after: [HTTPRequest] = []
            var offset = 0
            while offset < bytes.count {
                parser.append(Array(bytes[offset..<min(offset + split, bytes.count)]))
                offset += split
                if head == nil { head = try parser.next() }
                if head != nil { received += parser.takeStreamedBody() }
                if head != nil, parser.streamedBodyRemaining == 0, let next = try parser.next() { after.append(next) }
                // The parser never holds more of the body than one append.
                #expect(parser.bufferedBytes <= split + 64)
            }
            #expect(head?.path == "/up" && head?.body.isEmpty == true)
            #expect(received == body, "split \(split)")
            #expect(after.map(\.path) == ["/next"])
        }
    }
}
