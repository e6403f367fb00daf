/// Why a request was refused, as the HTTP status to answer with.
public struct HTTPError: Error, Equatable, Sendable, CustomStringConvertible {
    public var status: Int
    public var reason: String
    /// Extra response headers the status calls for (`Allow`, `Sec-WebSocket-Version`, …).
    public var headers: [(name: String, value: String)]

    public init(_ status: Int, _ reason: String, headers: [(name: String, value: String)] = []) {
        self.status = status
        self.reason = reason
        self.headers = headers
    }

    public var description: String { "\(status) \(reason)" }

    public static func == (lhs: HTTPError, rhs: HTTPError) -> Bool {
        lhs.status == rhs.status && lhs.reason == rhs.reason
            && lhs.headers.elementsEqual(rhs.headers) { $0.name == $1.name && $0.value == $1.value }
    }
}

/// A strict, incremental HTTP/1.1 request parser (RFC 9112).
///
/// Bytes may arrive in any split, one at a time included. The head is
/// limited to `maxHeadBytes` (431 past it, checked before the head is
/// complete so a slow drip cannot grow the buffer) and `maxHeaderCount`
/// fields (431). Bodies need a `Content-Length` up to `maxBodyBytes`
/// (413 past it, decided from the header before any body byte is kept);
/// `Transfer-Encoding` is refused with 501. Anything RFC 9112 calls
/// invalid (bare LF line ends, whitespace before a colon, obsolete line
/// folding, control characters, a missing or repeated Host) is a 400.
///
/// A request for which `streamsBody` answers true (an upload) is returned
/// as soon as its head is parsed, with an empty `body`: the caller decides
/// from the head whether to take the body at all, then takes it piece by
/// piece with `takeStreamedBody()` (never holding it whole), and calls
/// `next()` again only once `streamedBodyRemaining` is 0.
public struct HTTPRequestParser: Sendable {
    public var maxHeadBytes: Int
    public var maxHeaderCount: Int
    public var maxBodyBytes: Int
    /// A larger body limit for some requests (file uploads), decided from the head: the `maxBodyBytes` of those.
    public var largerBodyLimit: (@Sendable (HTTPRequest) -> Int?)?
    /// Requests whose body is handed over in pieces after the head (uploads), not buffered.
    public var streamsBody: (@Sendable (HTTPRequest) -> Bool)?
    /// Body bytes of the last streamed request that `takeStreamedBody()` has not handed over yet.
    public private(set) var streamedBodyRemaining = 0

    private var buffer: [UInt8] = []
    /// Where the search for the blank line resumes.
    private var scanned = 0
    /// A parsed head whose body has not all arrived: parsed once, not on every read.
    private var waitingForBody: (request: HTTPRequest, headEnd: Int, bodyLength: Int)?

    public init(maxHeadBytes: Int = 8192, maxHeaderCount: Int = 64, maxBodyBytes: Int = 1 << 20) {
        self.maxHeadBytes = maxHeadBytes
        self.maxHeaderCount = maxHeaderCount
        self.maxBodyBytes = maxBodyBytes
    }

    /// Bytes held for a request that is not complete yet.
    public var bufferedBytes: Int { buffer.count }

    /// Adds bytes from the socket.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) { buffer.append(contentsOf: bytes) }
    public mutating func append(_ bytes: [UInt8]) { buffer.append(contentsOf: bytes) }

    /// The next complete request, or nil until more bytes arrive.
    public mutating func next() throws(HTTPError) -> HTTPRequest? {
        guard streamedBodyRemaining == 0 else { return nil }  // the caller still owes a body's bytes
        var (request, headEnd, bodyLength): (HTTPRequest, Int, Int)
        if let waiting = waitingForBody {
            (request, headEnd, bodyLength) = waiting
        } else {
            guard let end = try findHeadEnd() else {
                if buffer.count > maxHeadBytes { throw HTTPError(431, "request head larger than \(maxHeadBytes) bytes") }
                return nil
            }
            guard end <= maxHeadBytes else { throw HTTPError(431, "request head larger than \(maxHeadBytes) bytes") }
            headEnd = end
            request = try Self.parseHead(buffer[..<(headEnd - 4)], maxHeaderCount: maxHeaderCount)
            bodyLength = try Self.bodyLength(request.headers, maxBodyBytes: largerBodyLimit?(request) ?? maxBodyBytes)
            if bodyLength > 0, streamsBody?(request) == true {
                buffer.removeFirst(headEnd)
                scanned = 0
                streamedBodyRemaining = bodyLength
                return request
            }
        }
        guard buffer.count >= headEnd + bodyLength else {
            waitingForBody = (request, headEnd, bodyLength)
            return nil
        }
        waitingForBody = nil
        request.body = Array(buffer[headEnd..<(headEnd + bodyLength)])
        buffer.removeFirst(headEnd + bodyLength)
        scanned = 0
        if buffer.isEmpty { buffer = [] }
        return request
    }

    /// The streamed body's bytes buffered so far (at most `streamedBodyRemaining`), removed from the parser;
    /// bytes behind the body stay for `next()`.
    public mutating func takeStreamedBody() -> [UInt8] {
        let count = min(buffer.count, streamedBodyRemaining)
        guard count > 0 else { return [] }
        let piece = Array(buffer[..<count])
        buffer.removeFirst(count)
        streamedBodyRemaining -= count
        if buffer.isEmpty { buffer = [] }
        return piece
    }

    /// Hands over the bytes after the last request (e.g. WebSocket frames
    /// a client sent right behind its upgrade request) and empties the parser.
    public mutating func takeRemaining() -> [UInt8] {
        defer { buffer = []; scanned = 0; waitingForBody = nil; streamedBodyRemaining = 0 }
        return buffer
    }

    /// The offset just past `\r\n\r\n`, or nil. A bare LF is refused as
    /// soon as it is seen, so a client that ends lines with LF alone gets
    /// its 400 at once instead of waiting for a blank line that never comes.
    private mutating func findHeadEnd() throws(HTTPError) -> Int? {
        let count = buffer.count
        // On the buffer's memory: the checked subscripts cost 21 instructions a byte of every request head.
        let from = max(0, scanned - 3)
        let found: Int? = try buffer.withUnsafeBufferPointer { (buffer) throws(HTTPError) -> Int? in
            var index = from
            while index < count {
                let byte = buffer[index]
                if byte > 13 {
                    index += 1
                    continue
                }
                if byte == 10 && (index == 0 || buffer[index - 1] != 13) {
                    throw HTTPError(400, "bare LF in request head; lines must end with CRLF")
                }
                if index + 3 < count, byte == 13, buffer[index + 1] == 10, buffer[index + 2] == 13, buffer[index + 3] == 10 {
                    return index + 4
                }
                index += 1
            }
            return nil
        }
        if found == nil { scanned = count }
        return found
    }

    static func parseHead(_ head: ArraySlice<UInt8>, maxHeaderCount: Int) throws(HTTPError) -> HTTPRequest {
        var lines: [ArraySlice<UInt8>] = []
        lines.reserveCapacity(16)
        var start = head.startIndex
        var index = head.startIndex
        while index < head.endIndex {
            let byte = head[index]
            if byte == 10 {
                throw HTTPError(400, "bare LF in request head; lines must end with CRLF")
            }
            if byte == 13 {
                guard index + 1 < head.endIndex, head[index + 1] == 10 else {
                    throw HTTPError(400, "bare CR in request head")
                }
                lines.append(head[start..<index])
                index += 2
                start = index
                continue
            }
            index += 1
        }
        lines.append(head[start..<head.endIndex])
        guard let requestLine = lines.first, !requestLine.isEmpty else {
            throw HTTPError(400, "empty request line")
        }
        var request = try parseRequestLine(requestLine)
        guard lines.count - 1 <= maxHeaderCount else {
            throw HTTPError(431, "more than \(maxHeaderCount) header fields")
        }
        for line in lines.dropFirst() {
            let (name, value) = try parseField(line)
            request.headers.add(name, value)
        }
        if request.versionMinor >= 1 {
            let hosts = request.headers.values("Host")
            guard hosts.count == 1 else {
                throw HTTPError(400, hosts.isEmpty ? "missing Host header" : "more than one Host header")
            }
        }
        return request
    }

    private static func parseRequestLine(_ line: ArraySlice<UInt8>) throws(HTTPError) -> HTTPRequest {
        // Exactly two spaces, found by index: `split` with its closure per byte was most of the line's cost.
        guard let firstSpace = line.firstIndex(of: 32),
              let secondSpace = line[(firstSpace + 1)...].firstIndex(of: 32),
              !line[(secondSpace + 1)...].contains(32)
        else { throw HTTPError(400, "malformed request line") }
        let parts = [line[..<firstSpace], line[(firstSpace + 1)..<secondSpace], line[(secondSpace + 1)...]]
        guard !parts[0].isEmpty, !parts[1].isEmpty else {
            throw HTTPError(400, "malformed request line")
        }
        guard parts[0].allSatisfy(isTokenByte) else { throw HTTPError(400, "invalid method") }
        guard parts[1].allSatisfy({ $0 > 32 && $0 < 127 }) else { throw HTTPError(400, "invalid request target") }
        guard parts[1].first == UInt8(ascii: "/") || parts[1].elementsEqual([UInt8(ascii: "*")]) else {
            throw HTTPError(400, "request target must be a path")
        }
        let version = Array(parts[2])
        let prefix = Array("HTTP/1.".utf8)
        guard version.count == 8, version.starts(with: prefix), let last = version.last else {
            if version.starts(with: Array("HTTP/".utf8)) { throw HTTPError(505, "only HTTP/1.x is supported") }
            throw HTTPError(400, "malformed HTTP version")
        }
        guard last == UInt8(ascii: "0") || last == UInt8(ascii: "1") else {
            throw HTTPError(505, "only HTTP/1.0 and HTTP/1.1 are supported")
        }
        return HTTPRequest(
            method: String(decoding: parts[0], as: UTF8.self),
            target: String(decoding: parts[1], as: UTF8.self),
            versionMinor: Int(last - UInt8(ascii: "0")),
            headers: HTTPHeaders()
        )
    }

    private static func parseField(_ line: ArraySlice<UInt8>) throws(HTTPError) -> (String, String) {
        guard let first = line.first, first != 32, first != 9 else {
            throw HTTPError(400, "obsolete line folding is not accepted")
        }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else {
            throw HTTPError(400, "header field without a colon")
        }
        let name = line[line.startIndex..<colon]
        guard !name.isEmpty, name.allSatisfy(isTokenByte) else {
            throw HTTPError(400, "invalid header field name")
        }
        var value = line[(colon + 1)...]
        while let byte = value.first, byte == 32 || byte == 9 { value.removeFirst() }
        while let byte = value.last, byte == 32 || byte == 9 { value.removeLast() }
        guard value.allSatisfy({ $0 == 9 || ($0 >= 32 && $0 != 127) }) else {
            throw HTTPError(400, "control character in header field value")
        }
        return (String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self))
    }

    private static func bodyLength(_ headers: HTTPHeaders, maxBodyBytes: Int) throws(HTTPError) -> Int {
        if headers["Transfer-Encoding"] != nil {
            if headers["Content-Length"] != nil {
                throw HTTPError(400, "both Transfer-Encoding and Content-Length")
            }
            throw HTTPError(501, "Transfer-Encoding is not supported; send Content-Length")
        }
        let lengths = headers.values("Content-Length")
        guard let text = lengths.first else { return 0 }
        guard lengths.allSatisfy({ $0 == text }), !text.isEmpty, text.utf8.count <= 18,
              text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }), let length = Int(text)
        else { throw HTTPError(400, "invalid Content-Length") }
        guard length <= maxBodyBytes else { throw HTTPError(413, "body larger than \(maxBodyBytes) bytes") }
        return length
    }
}

/// RFC 9110 §5.6.2 tchar.
@inline(__always)
func isTokenByte(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
        return true
    case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
         UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
         UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
        return true
    default:
        return false
    }
}
