import SeededRandom
import Testing
@testable import WebSocket

/// Random valid client streams must decode to the same events however the
/// bytes are split.
@Suite("FrameReader properties")
struct FrameReaderPropertyTests {
    struct Stream {
        var bytes: [UInt8] = []
        var expected: [WebSocketEvent] = []
    }

    /// How many frames used each length encoding, to prove the generator
    /// reaches all three.
    struct Coverage {
        var short = 0, medium = 0, long = 0, emptyFragments = 0, multiByteSplits = 0
        mutating func count(_ length: Int) {
            if length < 126 { short += 1 } else if length <= 0xFFFF { medium += 1 } else { long += 1 }
        }
    }

    static let maxMessageBytes = 200_000

    static func messageLength(_ rng: inout SeededGenerator, small: Bool) -> Int {
        if small { return rng.below(5) == 0 ? 0 : rng.below(40) }
        switch rng.below(100) {
        case 0..<8: return 0
        case 8..<55: return 1 + rng.below(125)
        case 55..<85: return 126 + rng.below(900)
        case 85..<93: return [125, 126, 127, 65535][rng.below(4)]
        case 93..<97: return 1000 + rng.below(65535 - 1000)
        default: return 65536 + rng.below(5000)
        }
    }

    static func maskingKey(_ rng: inout SeededGenerator) -> UInt32 {
        rng.chance(5) ? 0 : UInt32(truncatingIfNeeded: rng.next())
    }

    static func maybeControlFrame(_ rng: inout SeededGenerator, into stream: inout Stream, coverage: inout Coverage) {
        guard rng.chance(30) else { return }
        let payload = rng.bytes(rng.chance(10) ? 125 : rng.below(20))
        let isPing = rng.chance(50)
        FrameEncoder.append(isPing ? .ping : .pong, payload: payload, maskingKey: maskingKey(&rng), to: &stream.bytes)
        stream.expected.append(isPing ? .ping(payload) : .pong(payload))
        coverage.count(payload.count)
    }

    /// A stream of `messageCount` messages, each cut into 1...5 frames with
    /// pings and pongs between them, every frame masked with its own key.
    /// Some streams end with a close frame followed by junk to be ignored.
    static func randomStream(_ rng: inout SeededGenerator, messageCount: Int, small: Bool, coverage: inout Coverage) -> Stream {
        var stream = Stream()
        for _ in 0..<messageCount {
            let isText = rng.chance(50)
            let length = messageLength(&rng, small: small)
            let payload = isText ? randomUTF8(&rng, atLeast: length) : rng.bytes(length)
            let fragmentCount = length > 65535 && rng.chance(50) ? 1 : 1 + rng.below(5)
            let cuts = ([0] + (1..<fragmentCount).map { _ in rng.below(payload.count + 1) } + [payload.count]).sorted()
            for index in 0..<fragmentCount {
                maybeControlFrame(&rng, into: &stream, coverage: &coverage)
                let fragment = Array(payload[cuts[index]..<cuts[index + 1]])
                let opcode: Opcode = index > 0 ? .continuation : (isText ? .text : .binary)
                FrameEncoder.append(opcode, payload: fragment, fin: index == fragmentCount - 1,
                                    maskingKey: maskingKey(&rng), to: &stream.bytes)
                coverage.count(fragment.count)
                if fragment.isEmpty { coverage.emptyFragments += 1 }
                if isText, cuts[index + 1] < payload.count, payload[cuts[index + 1]] & 0xC0 == 0x80 {
                    coverage.multiByteSplits += 1
                }
            }
            stream.expected.append(isText ? .text(payload) : .binary(payload))
        }
        maybeControlFrame(&rng, into: &stream, coverage: &coverage)
        if rng.chance(25) {
            let code = [CloseCode.normal, .goingAway, .protocolError, .invalidPayload, CloseCode(3000), CloseCode(4999)][rng.below(6)]
            let reason = String(decoding: randomUTF8(&rng, atLeast: rng.below(30)), as: UTF8.self)
            let payload = FrameEncoder.closePayload(code, reason: reason)
            FrameEncoder.append(.close, payload: payload, maskingKey: maskingKey(&rng), to: &stream.bytes)
            stream.expected.append(.close(code: code, reason: String(decoding: payload[2...], as: UTF8.self)))
            stream.bytes += rng.bytes(rng.below(16))  // ignored after the close
        }
        return stream
    }

    func check(_ outcome: ReadOutcome, _ stream: Stream, _ label: @autoclosure () -> String) {
        let same = outcome.error == nil && outcome.events == stream.expected
        #expect(same, "\(label()): got \(summary(outcome.events)) error \(outcome.error.map { "\($0)" } ?? "none"); expected \(summary(stream.expected))")
    }

    @Test("random streams decode identically whole and split at random points")
    func randomSplits() {
        var rng = SeededGenerator(seed: 0xF4A3_E5_0001)
        var coverage = Coverage()
        var totalBytes = 0
        for round in 0..<300 {
            let stream = Self.randomStream(&rng, messageCount: 1 + rng.below(6), small: false, coverage: &coverage)
            totalBytes += stream.bytes.count
            check(readFrames(stream.bytes, role: .server, maxMessageBytes: Self.maxMessageBytes), stream, "round \(round) whole")
            for attempt in 0..<2 {
                // Sometimes many small pieces, sometimes a few large ones.
                let pieceCount = attempt == 0 ? 1 + rng.below(8) : 10 + rng.below(60)
                let cuts = (0..<pieceCount).map { _ in rng.below(stream.bytes.count + 1) }
                check(readFrames(stream.bytes, role: .server, maxMessageBytes: Self.maxMessageBytes, cuts: cuts),
                      stream, "round \(round) cuts \(cuts.sorted())")
            }
            // Pieces of 1...20 bytes across the first kilobyte, then the rest whole.
            var cuts: [Int] = []
            var position = 0
            while position < min(1024, stream.bytes.count) {
                position += 1 + rng.below(20)
                cuts.append(position)
            }
            check(readFrames(stream.bytes, role: .server, maxMessageBytes: Self.maxMessageBytes, cuts: cuts),
                  stream, "round \(round) small pieces")
        }
        #expect(coverage.short > 500)
        #expect(coverage.medium > 100)
        #expect(coverage.long >= 3)
        #expect(coverage.emptyFragments > 20)
        #expect(coverage.multiByteSplits > 20)
        #expect(totalBytes > 1_000_000)
    }

    @Test("short streams decode identically split at every point and one byte at a time")
    func everySplit() {
        var rng = SeededGenerator(seed: 0xF4A3_E5_0002)
        var coverage = Coverage()
        for round in 0..<40 {
            let stream = Self.randomStream(&rng, messageCount: 1 + rng.below(3), small: true, coverage: &coverage)
            let whole = readFrames(stream.bytes, role: .server)
            check(whole, stream, "round \(round) whole")
            check(readByteByByte(stream.bytes, role: .server), stream, "round \(round) byte by byte")
            for cut in 1..<max(1, stream.bytes.count) {
                check(readFrames(stream.bytes, role: .server, cuts: [cut]), stream, "round \(round) cut \(cut)")
            }
        }
        #expect(coverage.short > 40)
    }

    @Test("a client session's frames decode back through a server reader")
    func sessionEncodeRoundTrip() {
        var rng = SeededGenerator(seed: 0xF4A3_E5_0003)
        var session = WebSocketSession(role: .client, maxMessageBytes: 1 << 20, maskSeed: 42)
        var bytes: [UInt8] = []
        var expected: [WebSocketEvent] = []
        for _ in 0..<200 {
            let length = Self.messageLength(&rng, small: false) % 3000
            let isText = rng.chance(50)
            let payload = isText ? randomUTF8(&rng, atLeast: length) : rng.bytes(length)
            let frame = session.encode(isText ? .text : .binary, payload)
            #expect(frame.map { $0[1] & 0x80 } == 0x80)  // masked
            bytes += frame ?? []
            expected.append(isText ? .text(payload) : .binary(payload))
        }
        let cuts = (0..<50).map { _ in rng.below(bytes.count + 1) }
        check(readFrames(bytes, role: .server, cuts: cuts), Stream(bytes: bytes, expected: expected), "session frames")
    }
}
