import Foundation
import Testing
@testable import SpotterCore

/// The log stream's fast decode (`LogStreamCodec+Flat`) gives what `JSONDecoder` gives, over random batches and
/// their mutations, or declines (nil) and leaves the batch to it.
@Suite("LogStreamCodec: the fast decode agrees with JSONDecoder")
struct LogStreamCodecFlatTests {
    /// A small deterministic generator (xorshift), so a failure repeats.
    struct Random {
        var state: UInt64
        mutating func next() -> UInt64 {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return state
        }
        mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
        mutating func integer() -> Int64 {
            switch below(6) {
            case 0: return [0, 1, -1, Int64.max, Int64.min, Int64.max - 1][below(6)]
            case 1: return -Int64(below(1000))
            default: return Int64(bitPattern: next()) >> Int64(below(63))
            }
        }
        mutating func text() -> String? {
            guard below(5) != 0 else { return nil }
            let pieces = ["a", "\"", "\\", "/", "\n", "\t", "\u{1}", "\u{1F}", "é", "مرحبا", "👋", "{", "}", "[", "]", ",", ":", " ", "\u{2028}", "null"]
            return (0..<below(12)).map { _ in pieces[below(pieces.count)] }.joined()
        }
    }

    static func record(_ random: inout Random) -> ChatRecord {
        ChatRecord(pos: random.integer(), threadNo: random.integer(), side: Int64(random.below(2)), seq: random.integer(),
                   at: random.integer(), columns: ChatRecord.Columns(kind: Int64(random.below(10)), a: random.integer(),
                                                                     b: random.integer(), ref: random.text(), body: random.text()))
    }

    @Test func randomBatchesDecodeTheSameBothWays() throws {
        var random = Random(state: 0x9E37_79B9_7F4A_7C15)
        var fast = 0
        for _ in 0..<2000 {
            let batch = (0..<random.below(5)).map { _ in Self.record(&random) }
            let text = LogStreamCodec.encode(batch)
            // Random columns need not survive as typed content (flags packed in `b`): the paths are compared.
            let general = LogStreamCodec.generalDecode(text)
            #expect(general != nil, "\(text)")
            if let flat = LogStreamCodec.flatDecode(text) {
                fast += 1
                #expect(flat == general, "\(text)")
            }
            // Mutations: a byte dropped, doubled or changed; both paths agree whenever the fast one answers.
            var bytes = Array(text.utf8)
            guard !bytes.isEmpty else { continue }
            let at = random.below(bytes.count)
            switch random.below(3) {
            case 0: bytes.remove(at: at)
            case 1: bytes.insert(bytes[at], at: at)
            default:
                let swaps = Array(#"{}[]",:0-9e."\ an"#.utf8)
                bytes[at] = swaps[random.below(swaps.count)]
            }
            let mutated = String(decoding: bytes, as: UTF8.self)
            if let flat = LogStreamCodec.flatDecode(mutated) {
                #expect(flat == LogStreamCodec.generalDecode(mutated), "\(mutated)")
            }
        }
        #expect(fast > 1900, "the fast path declined \(2000 - fast) of the batches the server writes")
    }

    /// The hand-written encode reads back as `JSONEncoder`'s did, on both decode paths, whatever the strings hold
    /// (quotes, backslashes, control characters, U+2028, emoji) and at the integers' edges.
    @Test func handWrittenEncodeReadsBackAsJSONEncodersDid() throws {
        var random = Random(state: 0xD1B5_4A32_D192_ED03)
        for _ in 0..<2000 {
            let batch = (0..<random.below(6)).map { _ in Self.record(&random) }
            let text = LogStreamCodec.encode(batch)
            let before = try #require(LogStreamCodec.generalDecode(LogStreamCodec.generalEncode(batch)))
            #expect(LogStreamCodec.generalDecode(text) == before, "\(text)")
            #expect(LogStreamCodec.flatDecode(text) == before, "\(text)")
            #expect(before.count == batch.count)
        }
        #expect(LogStreamCodec.encode([]) == "[]")
    }

    @Test func edges() {
        #expect(LogStreamCodec.flatDecode("[]") == [])
        #expect(LogStreamCodec.flatDecode(" [ ] ") == [])
        #expect(LogStreamCodec.flatDecode("") == nil && LogStreamCodec.decode("") == nil)
        let one = #"{"p":1,"k":0,"t":2,"s":0,"q":3,"a":0,"b":0,"at":4}"#
        #expect(LogStreamCodec.flatDecode("[\(one)]")?.first?.pos == 1)
        // What the fast path leaves to JSONDecoder: null, a float, a missing field, a duplicate key, an unknown kind.
        #expect(LogStreamCodec.flatDecode(#"[{"p":1,"k":0,"t":2,"s":0,"q":3,"a":0,"b":0,"at":4,"r":null}]"#) == nil)
        #expect(LogStreamCodec.flatDecode(#"[{"p":1.0,"k":0,"t":2,"s":0,"q":3,"a":0,"b":0,"at":4}]"#) == nil)
        #expect(LogStreamCodec.flatDecode(#"[{"k":0,"t":2,"s":0,"q":3,"a":0,"b":0,"at":4}]"#) == nil)
        #expect(LogStreamCodec.flatDecode(#"[{"p":1,"p":2,"k":0,"t":2,"s":0,"q":3,"a":0,"b":0,"at":4}]"#) == nil)
        #expect(LogStreamCodec.flatDecode(#"[{"p":1,"k":99,"t":2,"s":0,"q":3,"a":0,"b":0,"at":4}]"#) == nil)
        #expect(LogStreamCodec.decode(#"[{"p":1,"k":99,"t":2,"s":0,"q":3,"a":0,"b":0,"at":4}]"#) == nil)
        #expect(LogStreamCodec.flatDecode("[\(one),]") == nil && LogStreamCodec.flatDecode("[\(one)") == nil)
        #expect(LogStreamCodec.flatDecode("[\(one)]x") == nil)
    }
}
