// Shared by the load tools' WebSocket clients: the client's half of the upgrade.
import FoundationEssentials
import WebSocket

/// A client's WebSocket upgrade: a random key, the request, the server's response head gathered across reads, and
/// the check of that head.
public struct ClientUpgrade {
    public let key: String
    private let maxHeadBytes: Int
    private var head: [UInt8] = []
    /// More than `maxHeadBytes` arrived without the blank line that ends a head.
    public private(set) var isTooLarge = false

    public init(key: String, maxHeadBytes: Int) {
        self.key = key
        self.maxHeadBytes = maxHeadBytes
    }

    /// 16 random bytes in base64, as RFC 6455 §4.1 asks of `Sec-WebSocket-Key`.
    public static func randomKey(using generator: inout some RandomNumberGenerator) -> String {
        Data((0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }).base64EncodedString()
    }

    /// The upgrade request for `target` (path and query), offering `subprotocol` when given.
    public func request(target: String, host: String, subprotocol: String? = nil) -> [UInt8] {
        let offer = subprotocol.map { "Sec-WebSocket-Protocol: \($0)\r\n" } ?? ""
        let text = "GET \(target) HTTP/1.1\r\n"
            + "Host: \(host)\r\n"
            + "Upgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n\(offer)\r\n"
        return Array(text.utf8)
    }

    /// Adds bytes read from the socket to the head. Once it is complete: the head without its final CRLF CRLF,
    /// and the bytes after it (the first frames); nil before (and when `isTooLarge`).
    public mutating func read(_ bytes: UnsafeRawBufferPointer) -> (text: String, leftover: [UInt8])? {
        let searchFrom = max(0, head.count - 3)
        head.append(contentsOf: bytes)
        guard let end = endOfHTTPHead(head, from: searchFrom) else {
            isTooLarge = head.count > maxHeadBytes
            return nil
        }
        let leftover = Array(head[(end + 4)...])
        let text = String(decoding: head[..<end], as: UTF8.self)
        head = []
        return (text, leftover)
    }

    /// What is wrong with the response `head` (without its final CRLF CRLF): a status other than 101, no
    /// `Upgrade: websocket`, or a `Sec-WebSocket-Accept` that does not answer `key`; nil when all is well.
    public func problem(withHead head: String) -> String? {
        let lines = head.split(separator: "\r\n", omittingEmptySubsequences: false)
        guard let status = lines.first, status.hasPrefix("HTTP/1.1 101") else {
            return "expected 101, got '\(lines.first.map(String.init) ?? "")'"
        }
        var upgrade: String?
        var accept: String?
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased()
            let value = String(line[line.index(after: colon)...].drop { $0 == " " || $0 == "\t" })
                .reversed().drop { $0 == " " || $0 == "\t" }.reversed()
            if name == "upgrade" { upgrade = String(value).lowercased() }
            if name == "sec-websocket-accept" { accept = String(value) }
        }
        guard upgrade == "websocket" else { return "missing Upgrade: websocket" }
        guard accept == Handshake.acceptKey(for: key) else { return "wrong Sec-WebSocket-Accept" }
        return nil
    }
}

/// Where the CRLF CRLF that ends an HTTP head starts in `bytes`, looking from `start`; nil if it is not there.
public func endOfHTTPHead(_ bytes: [UInt8], from start: Int = 0) -> Int? {
    guard bytes.count >= 4 else { return nil }
    for i in start...(bytes.count - 4)
    where bytes[i] == 13 && bytes[i + 1] == 10 && bytes[i + 2] == 13 && bytes[i + 3] == 10 {
        return i
    }
    return nil
}
