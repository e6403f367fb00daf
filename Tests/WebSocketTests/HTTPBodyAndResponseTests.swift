#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Testing
@testable import WebSocket

/// Bodies, pipelining, keep-alive, and the response side.
@Suite("HTTP bodies and responses")
struct HTTPBodyAndResponseTests {
    static let post = httpRequest(["POST /v1/events HTTP/1.1", "Host: a", "Content-Length: 11"], body: "hello world")

    @Test("a Content-Length body is delivered, also when split across appends")
    func contentLengthBody() throws {
        #expect(try parseAll(Self.post).map(\.body) == [utf8("hello world")])
        for cut in 1..<Self.post.count {
            var parser = HTTPRequestParser()
            parser.append(Array(Self.post[..<cut]))
            #expect(try parser.next() == nil, "cut \(cut)")
            parser.append(Array(Self.post[cut...]))
            let request = try parser.next()
            #expect(request?.body == utf8("hello world"), "cut \(cut)")
            #expect(request?.method == "POST")
            #expect(try parser.next() == nil)
        }
    }

    @Test("Content-Length over maxBodyBytes fails with 413 before the body arrives")
    func bodyTooLarge() throws {
        let head = httpRequest(["POST / HTTP/1.1", "Host: a", "Content-Length: 11"])
        #expect(parseError(head, parser: HTTPRequestParser(maxBodyBytes: 10))?.status == 413)
        #expect(parseError(head, parser: HTTPRequestParser(maxBodyBytes: 11)) == nil)
        let huge = httpRequest(["POST / HTTP/1.1", "Host: a", "Content-Length: 999999999999999999"])
        #expect(parseError(huge)?.status == 413)
    }

    @Test("a larger limit for some requests (uploads) is decided from their head")
    func largerLimitForSomeRequests() throws {
        var parser = HTTPRequestParser(maxBodyBytes: 10)
        parser.largerBodyLimit = { $0.path == "/upload" ? 100 : nil }
        #expect(parseError(httpRequest(["POST /upload HTTP/1.1", "Host: a", "Content-Length: 100"]), parser: parser) == nil)
        #expect(parseError(httpRequest(["POST /upload HTTP/1.1", "Host: a", "Content-Length: 101"]), parser: parser)?.status == 413)
        #expect(parseError(httpRequest(["POST /other HTTP/1.1", "Host: a", "Content-Length: 11"]), parser: parser)?.status == 413)
    }

    @Test("Transfer-Encoding is refused with 501, or 400 together with Content-Length")
    func transferEncoding() {
        let chunked = httpRequest(["POST / HTTP/1.1", "Host: a", "Transfer-Encoding: chunked"], body: "5\r\nhello\r\n0\r\n\r\n")
        #expect(parseError(chunked)?.status == 501)
        let both = httpRequest(["POST / HTTP/1.1", "Host: a", "Transfer-Encoding: chunked", "Content-Length: 5"])
        #expect(parseError(both)?.status == 400)
        let bothReversed = httpRequest(["POST / HTTP/1.1", "Host: a", "content-length: 5", "TRANSFER-ENCODING: chunked"])
        #expect(parseError(bothReversed)?.status == 400)
    }

    @Test("malformed Content-Length is refused with 400", arguments: [
        ["Content-Length: abc"], ["Content-Length: -1"], ["Content-Length: +5"], ["Content-Length: 1 2"],
        ["Content-Length: 5", "Content-Length: 6"], ["Content-Length:"], ["Content-Length: 0x10"],
    ])
    func badContentLength(_ fields: [String]) {
        #expect(parseError(httpRequest(["POST / HTTP/1.1", "Host: a"] + fields, body: "hello"))?.status == 400)
    }

    @Test("pipelined requests in one append come out one by one")
    func pipelining() throws {
        let get = httpRequest(["GET /first HTTP/1.1", "Host: a"])
        let requests = try parseAll(get + Self.post + httpRequest(["GET /third?x=1 HTTP/1.1", "Host: b"]))
        #expect(requests.map(\.target) == ["/first", "/v1/events", "/third?x=1"])
        #expect(requests.map(\.body) == [[], utf8("hello world"), []])
        #expect(requests[2].headers["host"] == "b")
    }

    @Test("takeRemaining hands over the bytes after an upgrade request")
    func takeRemaining() throws {
        let frames = clientFrame(.text, utf8("early")) + clientFrame(.ping, [])
        var parser = HTTPRequestParser()
        parser.append(HTTPRequestParserTests.upgrade + frames)
        let request = try parser.next()
        #expect(request?.headers["Upgrade"] == "websocket")
        #expect(parser.bufferedBytes == frames.count)
        #expect(parser.takeRemaining() == frames)
        #expect(parser.bufferedBytes == 0)
        #expect(parser.takeRemaining().isEmpty)
        #expect(try parser.next() == nil)
    }

    @Test("keepAlive follows the version and the Connection header", arguments: [
        ("GET / HTTP/1.1", [], true),
        ("GET / HTTP/1.1", ["Connection: close"], false),
        ("GET / HTTP/1.1", ["Connection: Upgrade, CLOSE"], false),
        ("GET / HTTP/1.1", ["Connection: keep-alive"], true),
        ("GET / HTTP/1.0", [], false),
        ("GET / HTTP/1.0", ["Connection: keep-alive"], true),
        ("GET / HTTP/1.0", ["Connection: Keep-Alive"], true),
    ] as [(String, [String], Bool)])
    func keepAlive(_ line: String, _ fields: [String], _ expected: Bool) throws {
        let request = try #require(try parseAll(httpRequest([line, "Host: a"] + fields)).first)
        #expect(request.keepAlive == expected)
    }

    // MARK: - Responses

    static func text(_ response: HTTPResponse, keepAlive: Bool = true) -> String {
        String(decoding: response.bytes(keepAlive: keepAlive), as: UTF8.self)
    }

    @Test("a response has a status line, its headers, Content-Length and the body")
    func responseBytes() {
        let response = HTTPResponse(status: 200, contentType: "text/plain; charset=utf-8", body: "مرحبا")
        #expect(Self.text(response) == "HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 10\r\n\r\nمرحبا")
        #expect(Self.text(response, keepAlive: false)
            == "HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 10\r\nConnection: close\r\n\r\nمرحبا")
        #expect(Self.text(HTTPResponse(status: 404)) == "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
        #expect(Self.text(HTTPResponse(status: 299)).hasPrefix("HTTP/1.1 299 Status 299\r\n"))
    }

    @Test("101, 204 and 304 carry neither Content-Length nor a body", arguments: [101, 204, 304])
    func noBody(_ status: Int) {
        let response = HTTPResponse(status: status, headers: [("X-A", "1")], body: utf8("ignored"))
        let text = Self.text(response)
        #expect(text.hasPrefix("HTTP/1.1 \(status) "))
        #expect(text.hasSuffix("X-A: 1\r\n\r\n"))
        #expect(!text.contains("Content-Length"))
        #expect(Self.text(response, keepAlive: false).contains("Connection: close") == (status != 101))
    }
}
