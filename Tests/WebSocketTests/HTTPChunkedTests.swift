import Testing
import WebSocket

@Suite("Chunked responses")
struct HTTPChunkedTests {
    @Test func aChunkIsItsHexSizeTheBytesAndCRLFs() {
        #expect(HTTPChunked.chunk(Array("hello".utf8)) == Array("5\r\nhello\r\n".utf8))
        #expect(HTTPChunked.chunk([UInt8](repeating: 65, count: 300)).prefix(5) == Array("12c\r\n".utf8)[...])
        // An empty chunk would end the body: nothing is made for no bytes.
        #expect(HTTPChunked.chunk([]).isEmpty)
        #expect(HTTPChunked.last == Array("0\r\n\r\n".utf8))
    }

    @Test func theHeadSaysChunkedAndNoLength() {
        let head = String(decoding: HTTPResponse(status: 200, headers: [("Content-Type", "application/x-tar")], body: [1, 2])
            .chunkedHead(keepAlive: false), as: UTF8.self)
        #expect(head == "HTTP/1.1 200 OK\r\nContent-Type: application/x-tar\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n")
        #expect(!String(decoding: HTTPResponse(status: 200).chunkedHead(keepAlive: true), as: UTF8.self).contains("Connection"))
    }
}
