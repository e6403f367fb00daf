import SeededRandom
import Testing
@testable import WebSocket

/// The validator against the standard library's decoder, on random input.
@Suite("UTF8Validator properties")
struct UTF8ValidatorPropertyTests {
    /// Bytes around every boundary the validator checks.
    static let interesting: [UInt8] = [
        0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF,
        0xE0, 0xE1, 0xEC, 0xED, 0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xF8, 0xFF,
    ]

    /// A random byte array: uniform noise, boundary bytes, valid UTF-8, or
    /// valid UTF-8 with one byte changed or the end cut off.
    static func randomInput(_ rng: inout SeededGenerator) -> [UInt8] {
        let length = rng.below(24)
        switch rng.below(5) {
        case 0:
            return rng.bytes(length)
        case 1:
            return (0..<length).map { _ in interesting[rng.below(interesting.count)] }
        case 2:
            return randomUTF8(&rng, atLeast: length)
        case 3:
            var bytes = randomUTF8(&rng, atLeast: max(1, length))
            let index = rng.below(bytes.count)
            bytes[index] = rng.chance(50) ? interesting[rng.below(interesting.count)] : UInt8(truncatingIfNeeded: rng.next())
            return bytes
        default:
            let bytes = randomUTF8(&rng, atLeast: max(1, length))
            return Array(bytes.dropLast(rng.below(3) + 1))
        }
    }

    static func reference(_ bytes: [UInt8]) -> Bool {
        String(validating: bytes, as: UTF8.self) != nil
    }

    @Test("isValid agrees with String(validating:as:) on random bytes")
    func agreesWithStandardLibrary() {
        var rng = SeededGenerator(seed: 0x5EED_0001)
        var validCount = 0
        var invalidCount = 0
        for round in 0..<4000 {
            let bytes = Self.randomInput(&rng)
            let expected = Self.reference(bytes)
            #expect(UTF8Validator.isValid(bytes) == expected, "round \(round): \(bytes)")
            if expected { validCount += 1 } else { invalidCount += 1 }
        }
        // The generator must exercise both outcomes, or the test proves little.
        #expect(validCount > 800)
        #expect(invalidCount > 800)
    }

    @Test("splitting random bytes into pieces never changes the verdict")
    func piecesAgree() {
        var rng = SeededGenerator(seed: 0x5EED_0002)
        for round in 0..<3000 {
            let bytes = Self.randomInput(&rng)
            let expected = Self.reference(bytes)
            let cuts = (0..<rng.below(4)).map { _ in rng.below(bytes.count + 1) }
            var validator = UTF8Validator()
            var valid = true
            for piece in pieces(bytes, cuts: cuts) where !validator.validate(piece) {
                valid = false
                break
            }
            #expect((valid && validator.isComplete) == expected, "round \(round): \(bytes) cut at \(cuts)")
        }
    }

    @Test("the validator fails at the first invalid byte, whatever follows")
    func failsAtFirstBadByte() {
        var rng = SeededGenerator(seed: 0x5EED_0003)
        for round in 0..<1000 {
            let bytes = Self.randomInput(&rng)
            // The shortest prefix the validator refuses: nothing before it may
            // be refused, and per the standard library no valid string can
            // start with it (appending any continuation cannot repair it).
            var firstBad: Int?
            for end in stride(from: 1, through: bytes.count, by: 1) {
                var validator = UTF8Validator()
                if !validator.validate(bytes[..<end]) { firstBad = end; break }
            }
            guard let firstBad else {
                // Never refused: the bytes are valid or merely unfinished.
                let completions: [[UInt8]] = [[]] + [0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF].flatMap { (b: UInt8) in
                    [[b], [b, 0x80], [b, 0x80, 0x80]]
                }
                #expect(completions.contains { Self.reference(bytes + $0) }, "round \(round): \(bytes)")
                continue
            }
            var validator = UTF8Validator()
            let accepted = validator.validate(bytes[..<firstBad] + utf8("tail"))
            #expect(!accepted, "round \(round)")
            #expect(!Self.reference(Array(bytes[..<firstBad])), "round \(round)")
        }
    }
}
