import Foundation
import WebSocket

/// A parsed HTTP response, as a test sees it.
public struct TestHTTPResponse {
    public var status: Int
    public var headers: HTTPHeaders
    public var body: [UInt8]
    public var bodyText: String { String(decoding: body, as: UTF8.self) }
}

/// Reads HTTP responses from a socket, keeping bytes that follow one.
public final class HTTPTestClient {
    public let socket: BlockingSocket
    var buffer: [UInt8] = []

    public init(port: Int) throws { socket = try BlockingSocket(port: port) }
    public init(socket: BlockingSocket) { self.socket = socket }

    /// Sends a request and reads its response.
    public func request(
        _ method: String, _ target: String, headers: [(String, String)] = [], body: String = ""
    ) throws -> TestHTTPResponse {
        var head = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if !body.isEmpty { head += "Content-Length: \(body.utf8.count)\r\n" }
        socket.write(head + "\r\n" + body)
        return try readResponse()
    }

    /// Sends a request with a binary body (an upload) and reads its response. `announced` overrides the
    /// `Content-Length` (a head that promises more than it sends).
    public func request(_ method: String, _ target: String, headers: [(String, String)] = [], bytes: [UInt8],
                        announced: Int? = nil) throws -> TestHTTPResponse {
        var head = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        head += "Content-Length: \(announced ?? bytes.count)\r\n\r\n"
        _ = socket.write(Array(head.utf8) + bytes)
        return try readResponse()
    }

    /// Reads one response: the head, then `Content-Length` bytes of body.
    public func readResponse() throws -> TestHTTPResponse {
        while true {
            if let end = headEnd() {
                let head = String(decoding: buffer[..<end], as: UTF8.self)
                var lines = head.components(separatedBy: "\r\n")
                let statusLine = lines.removeFirst().split(separator: " ")
                guard statusLine.count >= 2, let status = Int(statusLine[1]) else {
                    throw BlockingSocket.Failure(description: "bad status line in \(head)")
                }
                var headers = HTTPHeaders()
                for line in lines where !line.isEmpty {
                    let parts = line.split(separator: ":", maxSplits: 1)
                    headers.add(String(parts[0]), String(parts[1].drop { $0 == " " }))
                }
                let length = Int(headers["Content-Length"] ?? "0") ?? 0
                while buffer.count < end + 4 + length { try fill() }
                let body = Array(buffer[(end + 4)..<(end + 4 + length)])
                buffer.removeFirst(end + 4 + length)
                return TestHTTPResponse(status: status, headers: headers, body: body)
            }
            try fill()
        }
    }

    func fill() throws {
        let chunk = try socket.read()
        if chunk.isEmpty { throw BlockingSocket.Failure(description: "connection closed mid-response") }
        buffer += chunk
    }

    private func headEnd() -> Int? {
        guard buffer.count >= 4 else { return nil }
        for index in 0...(buffer.count - 4)
        where buffer[index] == 13 && buffer[index + 1] == 10 && buffer[index + 2] == 13 && buffer[index + 3] == 10 {
            return index
        }
        return nil
    }
}

/// A WebSocket client over a blocking socket, using the project's own
/// codec in client role to read frames.
public final class WebSocketTestClient {
    public let http: HTTPTestClient
    public var socket: BlockingSocket { http.socket }
    private var reader = FrameReader(role: .client, maxMessageBytes: 1 << 24)
    private var events: [WebSocketEvent] = []
    private var mask = UInt32(0x1234_5678)
    public private(set) var handshake: TestHTTPResponse

    /// Connects and upgrades; throws unless the server answers 101 with the right accept key.
    public init(port: Int, path: String = "/echo", headers: [(String, String)] = [], receiveBufferBytes: Int32? = nil) throws {
        http = HTTPTestClient(socket: try BlockingSocket(port: port, receiveBufferBytes: receiveBufferBytes))
        let key = "dGhlIHNhbXBsZSBub25jZQ=="
        handshake = try http.request("GET", path, headers: [
            ("Upgrade", "websocket"), ("Connection", "Upgrade"),
            ("Sec-WebSocket-Version", "13"), ("Sec-WebSocket-Key", key),
        ] + headers)
        guard handshake.status == 101, handshake.headers["Sec-WebSocket-Accept"] == Handshake.acceptKey(for: key) else {
            throw BlockingSocket.Failure(description: "upgrade refused: \(handshake.status) \(handshake.bodyText)")
        }
        if !http.buffer.isEmpty {
            try feed(http.buffer)
            http.buffer = []
        }
    }

    /// Sends one masked frame.
    public func send(_ opcode: Opcode, _ payload: [UInt8], fin: Bool = true) {
        if let balanced = socket.balancedPort { TestCluster.settle(balanced) }  // a cluster: once the nodes agree
        mask = mask &* 1_103_515_245 &+ 12345
        socket.write(FrameEncoder.frame(opcode, payload: payload, fin: fin, maskingKey: mask | 1))
    }

    public func send(text: String) { send(.text, Array(text.utf8)) }

    /// The next message or control frame; nil when the server closed the TCP connection.
    public func next() throws -> WebSocketEvent? {
        while events.isEmpty {
            let chunk = try socket.read()
            if chunk.isEmpty { return nil }
            try feed(chunk)
        }
        return events.removeFirst()
    }

    /// Reads until a close frame arrives; returns its code (nil if the TCP
    /// connection ended without one). Other events are skipped.
    public func awaitClose() throws -> CloseCode?? {
        while let event = try next() {
            if case .close(let code, _) = event { return .some(code) }
        }
        return .none
    }

    private func feed(_ bytes: [UInt8]) throws {
        var collected: [WebSocketEvent] = []
        try reader.read(bytes) { collected.append($0) }
        events += collected
    }
}

extension WebSocketTestClient {
    /// The next text message parsed as a JSON object (pings are skipped).
    public func nextJSON() throws -> [String: Any] {
        while let event = try next() {
            switch event {
            case .text(let bytes):
                guard let object = try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any] else {
                    throw BlockingSocket.Failure(description: "not a JSON object: \(String(decoding: bytes, as: UTF8.self))")
                }
                return object
            case .ping, .pong:
                continue
            default:
                throw BlockingSocket.Failure(description: "expected a text message, got \(event)")
            }
        }
        throw BlockingSocket.Failure(description: "connection closed")
    }
}
