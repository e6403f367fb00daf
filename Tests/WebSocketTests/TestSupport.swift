// Shared helpers for the WebSocket module tests: a seeded random generator,
// random valid UTF-8, frame builders, and functions that feed bytes to a
// FrameReader or an HTTPRequestParser in pieces and collect what comes out.
import SeededRandom
@testable import WebSocket

/// The property tests' draws from the seeded generator (a failing test replays from its seed).
extension SeededGenerator {
    /// A value in `0..<bound` (bound > 0); the modulo bias is irrelevant here.
    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
    mutating func chance(_ percent: Int) -> Bool { below(100) < percent }
    mutating func bytes(_ count: Int) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(count + 8)
        while out.count < count {
            var word = next()
            for _ in 0..<8 { out.append(UInt8(truncatingIfNeeded: word)); word >>= 8 }
        }
        out.removeLast(out.count - count)
        return out
    }
}

/// Appends the UTF-8 form of one random scalar: ASCII, Arabic, other 2-, 3-
/// (never a surrogate) and 4-byte code points, edges included.
func appendRandomScalar(_ rng: inout SeededGenerator, to out: inout [UInt8]) {
    let value: UInt32
    switch rng.below(6) {
    case 0: value = UInt32(rng.below(0x80))
    case 1: value = 0x0600 + UInt32(rng.below(0x100))  // Arabic block
    case 2: value = 0x80 + UInt32(rng.below(0x780))
    case 3:
        let v = 0x800 + UInt32(rng.below(0x10000 - 0x800 - 0x800))
        value = v < 0xD800 ? v : v + 0x800  // skip the surrogates
    case 4: value = 0x10000 + UInt32(rng.below(0x100000))
    default: value = [0x7F, 0x80, 0x7FF, 0x800, 0xD7FF, 0xE000, 0xFFFF, 0x10000, 0x10FFFF][rng.below(9)]
    }
    UTF8.encode(Unicode.Scalar(value)!) { out.append($0) }
}

/// Valid UTF-8 of at least `count` bytes (at most 3 more).
func randomUTF8(_ rng: inout SeededGenerator, atLeast count: Int) -> [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(count + 4)
    while out.count < count { appendRandomScalar(&rng, to: &out) }
    return out
}

func utf8(_ text: String) -> [UInt8] { Array(text.utf8) }

/// The masking key of the RFC 6455 §5.7 examples.
let rfcKey: UInt32 = 0x37FA_213D

/// A client-to-server frame: masked, as a `.server` reader requires.
func clientFrame(_ opcode: Opcode, _ payload: [UInt8], fin: Bool = true, key: UInt32 = rfcKey) -> [UInt8] {
    FrameEncoder.frame(opcode, payload: payload, fin: fin, maskingKey: key)
}

/// A server-to-client frame: unmasked, as a `.client` reader requires.
func serverFrame(_ opcode: Opcode, _ payload: [UInt8], fin: Bool = true) -> [UInt8] {
    FrameEncoder.frame(opcode, payload: payload, fin: fin)
}

/// What a FrameReader produced from a sequence of pieces.
struct ReadOutcome {
    var events: [WebSocketEvent] = []
    var error: WebSocketError?
    /// The index of the piece whose `read` threw.
    var failedPiece: Int?
}

/// Cuts `bytes` at `cuts` (positions in 0...count, any order, repeats allowed).
func pieces(_ bytes: [UInt8], cuts: [Int]) -> [[UInt8]] {
    var result: [[UInt8]] = []
    var start = 0
    for cut in Set(cuts).sorted() where cut > 0 && cut < bytes.count {
        result.append(Array(bytes[start..<cut]))
        start = cut
    }
    result.append(Array(bytes[start...]))
    return result
}

/// Feeds `pieces` to `reader` in order, stopping at the first error.
func feed(_ reader: inout FrameReader, _ pieces: [[UInt8]]) -> ReadOutcome {
    var outcome = ReadOutcome()
    for (index, piece) in pieces.enumerated() {
        do {
            try reader.read(piece) { outcome.events.append($0) }
        } catch {
            outcome.error = error
            outcome.failedPiece = index
            break
        }
    }
    return outcome
}

/// Feeds `bytes` to a fresh reader, split at `cuts`.
func readFrames(
    _ bytes: [UInt8], role: FrameReader.Role, maxMessageBytes: Int = 1 << 20, cuts: [Int] = []
) -> ReadOutcome {
    var reader = FrameReader(role: role, maxMessageBytes: maxMessageBytes)
    return feed(&reader, pieces(bytes, cuts: cuts))
}

/// Feeds `bytes` one byte per `read` call.
func readByteByByte(_ bytes: [UInt8], role: FrameReader.Role, maxMessageBytes: Int = 1 << 20) -> ReadOutcome {
    var reader = FrameReader(role: role, maxMessageBytes: maxMessageBytes)
    return feed(&reader, bytes.map { [$0] })
}

/// A short description of events, for failure messages that stay readable
/// when payloads are tens of kilobytes long.
func summary(_ events: [WebSocketEvent]) -> String {
    events.map { event -> String in
        switch event {
        case .text(let p): "text(\(p.count))"
        case .binary(let p): "binary(\(p.count))"
        case .ping(let p): "ping(\(p.count))"
        case .pong(let p): "pong(\(p.count))"
        case .close(let code, let reason): "close(\(code.map { "\($0)" } ?? "nil"), \(reason.utf8.count))"
        }
    }.joined(separator: " ")
}

// MARK: - HTTP

/// A request head from its lines, with CRLF line ends and the blank line.
func httpRequest(_ lines: [String], body: String = "") -> [UInt8] {
    Array((lines.joined(separator: "\r\n") + "\r\n\r\n" + body).utf8)
}

/// Every request the parser yields from `bytes` appended in one go.
func parseAll(_ bytes: [UInt8], parser: HTTPRequestParser = HTTPRequestParser()) throws(HTTPError) -> [HTTPRequest] {
    var parser = parser
    parser.append(bytes)
    var requests: [HTTPRequest] = []
    while let request = try parser.next() { requests.append(request) }
    return requests
}

/// The error the parser throws for `bytes`, or nil.
func parseError(_ bytes: [UInt8], parser: HTTPRequestParser = HTTPRequestParser()) -> HTTPError? {
    do {
        _ = try parseAll(bytes, parser: parser)
        return nil
    } catch {
        return error
    }
}
