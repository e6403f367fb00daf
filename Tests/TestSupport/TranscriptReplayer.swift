import Foundation
import WebSocket

/// Replays a `Protocol/examples/*.transcript` file against a live server
/// and reports every place where the server said something else.
///
/// The format is described in `Protocol/examples/README.md`:
/// `C:`/`S:` lines are raw HTTP from the client/server, `C>`/`S>` lines are
/// WebSocket frames after the upgrade, `#` starts a comment.
public struct TranscriptReplayer {
    public struct Mismatch: Error, CustomStringConvertible {
        public var file: String
        public var line: Int
        public var detail: String
        public var description: String { "\(file):\(line): \(detail)" }
    }

    enum Step {
        case sendHTTP([String], line: Int)
        case expectHTTP([String], line: Int)
        case sendFrame(String, line: Int)
        case expectFrame(String, line: Int)
    }

    let name: String
    let steps: [Step]

    public init(name: String, text: String) throws {
        self.name = name
        var steps: [Step] = []
        for (index, raw) in text.components(separatedBy: "\n").enumerated() {
            let number = index + 1
            let line = raw.hasSuffix("\r") ? String(raw.dropLast()) : raw
            if line.isEmpty || line.hasPrefix("#") { continue }
            let tag = line.prefix(2)
            var content = String(line.dropFirst(2))
            if content.hasPrefix(" ") { content.removeFirst() }
            switch (tag, steps.last) {
            case ("C:", .sendHTTP(let lines, let start)?):
                steps[steps.count - 1] = .sendHTTP(lines + [content], line: start)
            case ("C:", _):
                steps.append(.sendHTTP([content], line: number))
            case ("S:", .expectHTTP(let lines, let start)?):
                steps[steps.count - 1] = .expectHTTP(lines + [content], line: start)
            case ("S:", _):
                steps.append(.expectHTTP([content], line: number))
            case ("C>", _):
                steps.append(.sendFrame(content, line: number))
            case ("S>", _):
                steps.append(.expectFrame(content, line: number))
            default:
                throw Mismatch(file: name, line: number, detail: "unknown line: \(line)")
            }
        }
        self.steps = steps
    }

    /// Runs the transcript on a new connection to `port`.
    public func replay(port: Int) throws {
        let http = HTTPTestClient(socket: try BlockingSocket(port: port))
        var reader = FrameReader(role: .client, maxMessageBytes: 1 << 24)
        var events: [WebSocketEvent] = []
        var mask: UInt32 = 0x3779_1A2B
        for step in steps {
            switch step {
            case .sendHTTP(let lines, _):
                http.socket.write(lines.joined(separator: "\r\n") + "\r\n")
            case .expectHTTP(let expected, let line):
                let response = try http.readResponse()
                try compare(expected, render(response), line: line)
                if response.status == 101, !http.buffer.isEmpty {
                    try reader.read(http.buffer) { events.append($0) }
                    http.buffer = []
                }
            case .sendFrame(let spec, let line):
                mask = mask &* 1_664_525 &+ 1_013_904_223
                http.socket.write(try Self.frameBytes(spec, mask: mask | 1, file: name, line: line))
            case .expectFrame(let spec, let line):
                while events.isEmpty {
                    let chunk = try http.socket.read()
                    if chunk.isEmpty { break }
                    try reader.read(chunk) { events.append($0) }
                }
                let actual = events.isEmpty ? "end" : Self.describe(events.removeFirst())
                guard Self.matches(spec, actual) else {
                    throw Mismatch(file: name, line: line, detail: "expected frame `\(spec)`, got `\(actual)`")
                }
            }
        }
    }

    private func render(_ response: TestHTTPResponse) -> [String] {
        var lines = ["HTTP/1.1 \(response.status) \(HTTPResponse.reasonPhrase(response.status))"]
        lines += response.headers.map { "\($0.name): \($0.value)" }
        lines.append("")
        if !response.body.isEmpty {
            var body = response.bodyText
            if body.hasSuffix("\n") { body.removeLast() }
            lines += body.components(separatedBy: "\n")
        }
        return lines
    }

    private func compare(_ expected: [String], _ actual: [String], line: Int) throws {
        for (offset, pair) in zip(expected, actual).enumerated() where !Self.matches(pair.0, pair.1) {
            throw Mismatch(file: name, line: line + offset, detail: "expected `\(pair.0)`, got `\(pair.1)`")
        }
        guard expected.count == actual.count else {
            throw Mismatch(
                file: name, line: line,
                detail: "expected \(expected.count) response lines, got \(actual.count):\n" + actual.joined(separator: "\n"))
        }
    }

    /// `{any}` matches any text, `{number}` a JSON number; the rest literally.
    static func matches(_ pattern: String, _ actual: String) -> Bool {
        var regex = "^"
        var rest = Substring(pattern)
        while !rest.isEmpty {
            if rest.hasPrefix("{any}") {
                regex += ".*"; rest = rest.dropFirst(5)
            } else if rest.hasPrefix("{number}") {
                regex += "-?[0-9]+(\\.[0-9]+)?([eE][-+]?[0-9]+)?"; rest = rest.dropFirst(8)
            } else {
                regex += NSRegularExpression.escapedPattern(for: String(rest.first!)); rest = rest.dropFirst()
            }
        }
        return actual.range(of: regex + "$", options: .regularExpression) != nil
    }

    /// `text …`, `binary HEX`, `ping …`, `pong …`, `close [CODE [reason]]`, `raw HEX` (sent as is).
    static func frameBytes(_ spec: String, mask: UInt32, file: String, line: Int) throws -> [UInt8] {
        let (kind, rest) = split(spec)
        switch kind {
        case "text": return FrameEncoder.frame(.text, payload: Array(rest.utf8), maskingKey: mask)
        case "binary": return FrameEncoder.frame(.binary, payload: try hex(rest, file, line), maskingKey: mask)
        case "ping": return FrameEncoder.frame(.ping, payload: Array(rest.utf8), maskingKey: mask)
        case "pong": return FrameEncoder.frame(.pong, payload: Array(rest.utf8), maskingKey: mask)
        case "raw": return try hex(rest, file, line)
        case "close":
            if rest.isEmpty { return FrameEncoder.frame(.close, payload: [], maskingKey: mask) }
            let (code, reason) = split(rest)
            guard let value = UInt16(code) else { throw Mismatch(file: file, line: line, detail: "bad close code") }
            return FrameEncoder.frame(.close, payload: FrameEncoder.closePayload(CloseCode(value), reason: reason), maskingKey: mask)
        default:
            throw Mismatch(file: file, line: line, detail: "unknown frame kind `\(kind)`")
        }
    }

    static func describe(_ event: WebSocketEvent) -> String {
        func line(_ kind: String, _ rest: String) -> String { rest.isEmpty ? kind : kind + " " + rest }
        switch event {
        case .text(let bytes): return line("text", String(decoding: bytes, as: UTF8.self))
        case .binary(let bytes): return line("binary", bytes.map { String(format: "%02x", $0) }.joined(separator: " "))
        case .ping(let bytes): return line("ping", String(decoding: bytes, as: UTF8.self))
        case .pong(let bytes): return line("pong", String(decoding: bytes, as: UTF8.self))
        case .close(let code, let reason):
            guard let code else { return "close" }
            return line("close \(code.rawValue)", reason)
        }
    }

    private static func split(_ text: String) -> (String, String) {
        guard let space = text.firstIndex(of: " ") else { return (text, "") }
        return (String(text[..<space]), String(text[text.index(after: space)...]))
    }

    private static func hex(_ text: String, _ file: String, _ line: Int) throws -> [UInt8] {
        try text.split(separator: " ").map {
            guard let byte = UInt8($0, radix: 16) else { throw Mismatch(file: file, line: line, detail: "bad hex `\($0)`") }
            return byte
        }
    }
}
