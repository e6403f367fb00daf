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
        case expectHTTP([String], line: Int, schema: String?)
        case sendFrame(String, line: Int)
        case expectFrame(String, line: Int, schema: String?)
    }

    /// A JSON body the server actually sent, and the schema the transcript says it follows.
    public struct SchemaSample: Sendable {
        public var schema: String
        public var json: String
        public var location: String
    }

    let name: String
    let steps: [Step]

    public init(name: String, text: String) throws {
        self.name = name
        var steps: [Step] = []
        var schema: String?
        for (index, raw) in text.components(separatedBy: "\n").enumerated() {
            let number = index + 1
            let line = raw.hasSuffix("\r") ? String(raw.dropLast()) : raw
            if line.hasPrefix("# schema: ") {
                schema = String(line.dropFirst("# schema: ".count)).trimmingCharacters(in: .whitespaces)
                continue
            }
            if line.isEmpty || line.hasPrefix("#") { continue }
            let tag = line.prefix(2)
            var content = String(line.dropFirst(2))
            if content.hasPrefix(" ") { content.removeFirst() }
            switch (tag, steps.last) {
            case ("C:", .sendHTTP(let lines, let start)?):
                steps[steps.count - 1] = .sendHTTP(lines + [content], line: start)
            case ("C:", _):
                steps.append(.sendHTTP([content], line: number))
            case ("S:", .expectHTTP(let lines, let start, let named)?):
                steps[steps.count - 1] = .expectHTTP(lines + [content], line: start, schema: named)
            case ("S:", _):
                steps.append(.expectHTTP([content], line: number, schema: schema))
                schema = nil
            case ("C>", _):
                steps.append(.sendFrame(content, line: number))
            case ("S>", _):
                steps.append(.expectFrame(content, line: number, schema: schema))
                schema = nil
            default:
                throw Mismatch(file: name, line: number, detail: "unknown line: \(line)")
            }
        }
        self.steps = steps
    }

    /// Runs the transcript on a new connection to `port`. Returns the JSON
    /// bodies annotated with `# schema: Name`, for validation against
    /// `Protocol/schemas/`.
    ///
    /// On a cluster's balanced port (`SPOTTER_TEST_CLUSTER`), each HTTP request goes on a connection of its own,
    /// so to the next node (a request sent while answers are pending stays on their connection, as does
    /// everything after an upgrade): a transcript's sign-up, link and socket land on different processes.
    @discardableResult
    public func replay(port: Int) throws -> [SchemaSample] {
        var http = HTTPTestClient(socket: try BlockingSocket(port: port))
        let spread = TestCluster.isBalanced(port)
        var pending = 0, used = false, upgraded = false
        var reader = FrameReader(role: .client, maxMessageBytes: 1 << 24)
        var events: [WebSocketEvent] = []
        var mask: UInt32 = 0x3779_1A2B
        var variables: [String: String] = [:]
        var samples: [SchemaSample] = []
        for step in steps {
            switch step {
            case .sendHTTP(let lines, let line):
                if spread && used && pending == 0 && !upgraded {
                    http.socket.close()
                    http = HTTPTestClient(socket: try BlockingSocket(port: port))
                }
                used = true
                pending += 1
                _ = http.socket.write(try requestBytes(lines, variables, line: line))
            case .expectHTTP(let expected, let line, let schema):
                pending -= 1
                let response = try http.readResponse()
                if response.status == 101 { upgraded = true }
                let actual = render(response)
                try compare(expected, actual, line: line, variables: &variables)
                if let schema { samples.append(SchemaSample(schema: schema, json: response.bodyText, location: "\(name):\(line)")) }
                if response.status == 101, !http.buffer.isEmpty {
                    try reader.read(http.buffer) { events.append($0) }
                    http.buffer = []
                }
            case .sendFrame(let spec, let line):
                mask = mask &* 1_664_525 &+ 1_013_904_223
                let frame = try substitute(spec, variables, line: line)
                if spread { TestCluster.settle(port) }
                http.socket.write(try Self.frameBytes(frame, mask: mask | 1, file: name, line: line))
            case .expectFrame(let spec, let line, let schema):
                while events.isEmpty {
                    let chunk = try http.socket.read()
                    if chunk.isEmpty { break }
                    try reader.read(chunk) { events.append($0) }
                }
                let actual = events.isEmpty ? "end" : Self.describe(events.removeFirst())
                guard let captured = Self.match(spec, actual) else {
                    throw Mismatch(file: name, line: line, detail: "expected frame `\(spec)`, got `\(actual)`")
                }
                variables.merge(captured) { _, new in new }
                if let schema, actual.hasPrefix("text ") {
                    samples.append(SchemaSample(schema: schema, json: String(actual.dropFirst(5)), location: "\(name):\(line)"))
                }
            }
        }
        return samples
    }

    /// The request: head lines up to the first empty one, joined by CRLF,
    /// then the body lines (joined by LF, no trailing newline); a body line
    /// `{hex} 89 50 4e …` is those bytes (an image, which is not text). A
    /// `Content-Length: {auto}` header gets the body's byte count.
    private func requestBytes(_ lines: [String], _ variables: [String: String], line: Int) throws -> [UInt8] {
        let text = try lines.map { try substitute($0, variables, line: line) }
        let blank = text.firstIndex(of: "") ?? text.count
        var body: [UInt8] = []
        for (index, bodyLine) in text.dropFirst(blank + 1).enumerated() {
            if index > 0 { body.append(0x0A) }
            body += bodyLine.hasPrefix("{hex} ") ? try Self.hex(String(bodyLine.dropFirst(6)), name, line) : Array(bodyLine.utf8)
        }
        let head = text[..<blank].map {
            $0 == "Content-Length: {auto}" ? "Content-Length: \(body.count)" : $0
        }
        return Array((head.joined(separator: "\r\n") + "\r\n\r\n").utf8) + body
    }

    /// Replaces `{$name}` with a value captured earlier, and `{now+N}` with the Unix time N seconds from now
    /// (session starts must be in the future).
    private func substitute(_ text: String, _ variables: [String: String], line: Int) throws -> String {
        var out = text
        while let start = out.range(of: "{now+"), let end = out.range(of: "}", range: start.upperBound..<out.endIndex) {
            guard let offset = Int(out[start.upperBound..<end.lowerBound]) else {
                throw Mismatch(file: name, line: line, detail: "`{now+N}` needs a whole number of seconds")
            }
            out.replaceSubrange(start.lowerBound..<end.upperBound, with: String(Int(Date().timeIntervalSince1970) + offset))
        }
        while let start = out.range(of: "{$"), let end = out.range(of: "}", range: start.upperBound..<out.endIndex) {
            let key = String(out[start.upperBound..<end.lowerBound])
            guard let value = variables[key] else {
                throw Mismatch(file: name, line: line, detail: "`{$\(key)}` used before it was captured")
            }
            out.replaceSubrange(start.lowerBound..<end.upperBound, with: value)
        }
        return out
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

    private func compare(_ expected: [String], _ actual: [String], line: Int, variables: inout [String: String]) throws {
        for (offset, pair) in zip(expected, actual).enumerated() {
            guard let captured = Self.match(pair.0, pair.1) else {
                throw Mismatch(file: name, line: line + offset, detail: "expected `\(pair.0)`, got `\(pair.1)`")
            }
            variables.merge(captured) { _, new in new }
        }
        guard expected.count == actual.count else {
            throw Mismatch(
                file: name, line: line,
                detail: "expected \(expected.count) response lines, got \(actual.count):\n" + actual.joined(separator: "\n"))
        }
    }

    static func matches(_ pattern: String, _ actual: String) -> Bool { match(pattern, actual) != nil }

    /// Matches one line: `{any}` is any text, `{number}` a JSON number,
    /// `{$name}` captures a value (up to the next quote) as `name`; the rest
    /// literally. Returns the captures, or nil when the line differs.
    static func match(_ pattern: String, _ actual: String) -> [String: String]? {
        var regex = ""
        var names: [String] = []
        var rest = Substring(pattern)
        while let first = rest.first {
            if rest.hasPrefix("{any}") {
                regex += ".*"; rest = rest.dropFirst(5)
            } else if rest.hasPrefix("{number}") {
                regex += "-?[0-9]+(?:\\.[0-9]+)?(?:[eE][-+]?[0-9]+)?"; rest = rest.dropFirst(8)
            } else if rest.hasPrefix("{$"), let close = rest.firstIndex(of: "}") {
                names.append(String(rest[rest.index(rest.startIndex, offsetBy: 2)..<close]))
                regex += "([^\"\\s]*)"; rest = rest[rest.index(after: close)...]
            } else {
                // Literal: escape ASCII punctuation; letters, digits and non-ASCII stand for themselves.
                if first.isASCII && !first.isLetter && !first.isNumber && first != " " { regex += "\\" }
                regex.append(first); rest = rest.dropFirst()
            }
        }
        // Swift's own Regex: Foundation's NSRegularExpression leaks inside CoreFoundation on Linux.
        guard let expression = try? Regex(regex), let found = try? expression.wholeMatch(in: actual) else { return nil }
        var captures: [String: String] = [:]
        for (index, key) in names.enumerated() where index + 1 < found.output.count {
            if let value = found.output[index + 1].substring { captures[key] = String(value) }
        }
        return captures
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
