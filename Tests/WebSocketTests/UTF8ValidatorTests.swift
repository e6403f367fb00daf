import Testing
@testable import WebSocket

@Suite("UTF8Validator")
struct UTF8ValidatorTests {
    static let validStrings: [String] = [
        "",
        "Hello, world",
        "é ß ñ ÿ",  // 2-byte
        "€ ₿ ✓ 中文",  // 3-byte
        "مرحبا بالعالم، كيف حالك؟",  // Arabic (2-byte)
        "😀👍🏽🇸🇦 𝄞",  // 4-byte, modifiers, flags
        "\u{7F}\u{80}\u{7FF}\u{800}\u{D7FF}\u{E000}\u{FFFF}\u{10000}\u{10FFFF}",  // edges
        "a long ASCII run of more than eight bytes, then مرحبا and 😀 again abcdefghijklmnop",
    ]

    /// Feeds `pieces` to one validator: what each `validate` call returned
    /// (stopping at the first false), and `isComplete` at the end.
    struct Run: Equatable {
        var accepted: [Bool]
        var complete: Bool
    }

    static func run(_ pieces: [UInt8]...) -> Run {
        var validator = UTF8Validator()
        var accepted: [Bool] = []
        for piece in pieces {
            accepted.append(validator.validate(piece))
            if accepted.last == false { break }
        }
        return Run(accepted: accepted, complete: validator.isComplete)
    }

    @Test("valid text validates", arguments: validStrings)
    func validText(_ text: String) {
        #expect(UTF8Validator.isValid(utf8(text)))
        #expect(Self.run(utf8(text)) == Run(accepted: [true], complete: true))
    }

    static let invalidSequences: [[UInt8]] = [
        [0xC0, 0x80], [0xC1, 0xBF],  // overlong 2-byte
        [0xE0, 0x80, 0x80], [0xE0, 0x9F, 0xBF],  // overlong 3-byte
        [0xF0, 0x80, 0x80, 0x80], [0xF0, 0x8F, 0xBF, 0xBF],  // overlong 4-byte
        [0xED, 0xA0, 0x80], [0xED, 0xBF, 0xBF],  // surrogates U+D800, U+DFFF
        [0xF4, 0x90, 0x80, 0x80], [0xF7, 0xBF, 0xBF, 0xBF],  // above U+10FFFF
        [0x80], [0xBF], [0x41, 0x80], [0xC3, 0xA9, 0xA9],  // stray continuation
        [0xC2, 0x41], [0xE2, 0x82, 0x41], [0xF0, 0x9F, 0x98, 0x41],  // sequence cut by ASCII
        [0xF5, 0x80, 0x80, 0x80], [0xF8], [0xFC], [0xFE], [0xFF],
        [0x48, 0x65, 0x6C, 0x6C, 0x6F, 0x20, 0x77, 0x6F, 0x72, 0x6C, 0x64, 0xFF],  // after the ASCII fast path
    ]

    @Test("invalid sequences are rejected", arguments: invalidSequences)
    func invalidSequence(_ bytes: [UInt8]) {
        #expect(!UTF8Validator.isValid(bytes))
        #expect(Self.run(bytes).accepted == [false])
    }

    @Test("every lead byte F5...FF is rejected on its own")
    func highLeadBytes() {
        for byte in UInt8(0xF5)...0xFF {
            #expect(Self.run([byte]).accepted == [false], "byte \(byte)")
            #expect(!UTF8Validator.isValid([byte, 0x80, 0x80, 0x80]), "byte \(byte)")
        }
    }

    @Test("boundaries of the narrowed continuation ranges")
    func narrowedRanges() {
        #expect(UTF8Validator.isValid([0xE0, 0xA0, 0x80]))  // U+0800
        #expect(UTF8Validator.isValid([0xED, 0x9F, 0xBF]))  // U+D7FF
        #expect(UTF8Validator.isValid([0xF0, 0x90, 0x80, 0x80]))  // U+10000
        #expect(UTF8Validator.isValid([0xF4, 0x8F, 0xBF, 0xBF]))  // U+10FFFF
        #expect(UTF8Validator.isValid([0xEE, 0x80, 0x80]))  // U+E000
        // The narrowing applies to the first continuation byte only.
        #expect(UTF8Validator.isValid([0xE0, 0xA0, 0xBF, 0xED, 0x80, 0xBF]))
    }

    @Test("every valid string split at every byte validates the same", arguments: validStrings)
    func splitAnywhere(_ text: String) {
        let bytes = utf8(text)
        for cut in 0...bytes.count {
            let head = Array(bytes[..<cut]), tail = Array(bytes[cut...])
            // Mid-sequence cuts leave the validator waiting, not failed.
            let boundary = cut == bytes.count || bytes[cut] & 0xC0 != 0x80
            #expect(Self.run(head) == Run(accepted: [true], complete: boundary), "cut \(cut)")
            #expect(Self.run(head, tail) == Run(accepted: [true, true], complete: true), "cut \(cut)")
        }
    }

    @Test("a 4-byte code point fed one byte at a time")
    func oneByteAtATime() {
        var validator = UTF8Validator()
        var completeAfter: [Bool] = []
        for byte in [0xF0, 0x9F, 0x98, 0x80] as [UInt8] {
            let accepted = validator.validate([byte])
            completeAfter.append(accepted && validator.isComplete)
        }
        #expect(completeAfter == [false, false, false, true])
        #expect(Self.run([0xF0], [0x9F], [0x98]) == Run(accepted: [true, true, true], complete: false))
    }

    @Test("fails fast on the first bad piece although the message is not finished")
    func failFast() {
        #expect(Self.run(utf8("Hello مرحبا "), [0x41, 0xC0, 0x80, 0x41], utf8("more")).accepted == [true, false])
        // "€" begun, then ASCII where a continuation byte is due.
        #expect(Self.run([0xE2, 0x82], [0x41], [0xAC]).accepted == [true, false])
        // ED A0 is a surrogate: refused at the second byte, before the third.
        #expect(Self.run([0xED], [0xA0], [0x80]).accepted == [true, false])
        // F4 90 is above U+10FFFF: refused at once.
        #expect(Self.run([0x61, 0xF4, 0x90]).accepted == [false])
        #expect(Self.run([0xE2, 0x82], [0xAC]) == Run(accepted: [true, true], complete: true))
    }

    @Test("ending in the middle of a sequence is incomplete", arguments: [
        [0xC3], [0xE2], [0xE2, 0x82], [0xF0, 0x9F], [0xF0, 0x9F, 0x98], [0x41, 0x42, 0xD9],
    ] as [[UInt8]])
    func endsMidSequence(_ bytes: [UInt8]) {
        #expect(Self.run(bytes) == Run(accepted: [true], complete: false))
        #expect(!UTF8Validator.isValid(bytes))
    }

    @Test("a bad byte anywhere in a long ASCII run is found (8-byte fast path)")
    func badByteInAsciiRun() {
        for length in [7, 8, 9, 16, 23, 40] {
            for position in 0..<length {
                var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: length)
                bytes[position] = 0x80
                #expect(!UTF8Validator.isValid(bytes), "length \(length), position \(position)")
                bytes[position] = 0x7F
                #expect(UTF8Validator.isValid(bytes), "length \(length), position \(position)")
            }
        }
    }

    @Test("validate works on buffers that do not start at an aligned address")
    func unalignedBuffer() {
        let bytes = [UInt8](repeating: 0x61, count: 3) + utf8("abcdefghijklmnop") + [0xC0]
        for start in 0..<4 {
            let valid = bytes.withUnsafeBytes { raw -> Bool in
                var validator = UTF8Validator()
                return validator.validate(UnsafeRawBufferPointer(rebasing: raw[start..<(raw.count - 1)]))
                    && validator.isComplete
            }
            #expect(valid)
            #expect(!UTF8Validator.isValid(bytes[start...]))
        }
    }
}
