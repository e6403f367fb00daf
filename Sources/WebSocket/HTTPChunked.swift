/// HTTP/1.1 chunked transfer coding (RFC 9112 §7.1), the sending side: for a response whose length is not known
/// when its head goes out (an archive streamed as it is read). Pure: it frames bytes; the caller sends them.
public enum HTTPChunked {
    /// One chunk: its size in hex, CRLF, the bytes, CRLF. Empty input makes nothing (an empty chunk would end the body).
    public static func chunk(_ bytes: [UInt8]) -> [UInt8] {
        guard !bytes.isEmpty else { return [] }
        var out = Array(String(bytes.count, radix: 16).utf8)
        out.reserveCapacity(out.count + bytes.count + 4)
        out += [13, 10]
        out += bytes
        out += [13, 10]
        return out
    }

    /// The last chunk and the end of the body (no trailers).
    public static let last: [UInt8] = Array("0\r\n\r\n".utf8)
}

extension HTTPResponse {
    /// The head of a response whose body follows as chunks (`HTTPChunked`): `Transfer-Encoding: chunked` instead of
    /// a `Content-Length`, and `Connection: close` unless `keepAlive`. `body` is not sent.
    public func chunkedHead(keepAlive: Bool) -> [UInt8] {
        var head = "HTTP/1.1 \(status) \(Self.reasonPhrase(status))\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        head += "Transfer-Encoding: chunked\r\n"
        if !keepAlive { head += "Connection: close\r\n" }
        head += "\r\n"
        return Array(head.utf8)
    }
}
