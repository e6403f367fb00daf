import SeededRandom
import SpotterProtocol
import Testing
import WebSocket
@testable import SpotterServer

/// A success reply is written straight into the output buffer (`AppSocket.appendOKFrame`); before, it was built
/// as a `String` (`Reply.ok`) and framed. The bytes must be the same.
@Suite("Reply frame: written in place equals the framed string")
struct ReplyFrameTests {
    /// Seeded random ids (none, plain, with quotes, backslashes, control characters, Arabic, emoji, 64
    /// characters) and results (`{}`, and objects sized across the frame header's three lengths), appended
    /// behind random bytes already queued: the appended bytes equal `FrameEncoder`'s frame of `Reply.ok`.
    @Test func randomRepliesFrameAlike() {
        var generator = SeededGenerator(seed: 0x0E_9157)
        let ids: [String?] = [nil, "1", "m12345", "a\"b", "back\\slash", "tab\tand\u{1}", "مرحبا", "👋🏽",
                              String(repeating: "i", count: 64), ""]
        let sizes = [0, 10, 80, 100, 104, 105, 106, 125, 126, 200, 65_400, 65_535, 65_536, 70_000]
        for round in 0..<400 {
            let id = round < ids.count ? ids[round] : ids.randomElement(using: &generator)!
            let size = sizes[round % sizes.count] + Int.random(in: -3...3, using: &generator)
            var result = "{\"text\":\""
            while result.utf8.count < size { result += ["a", "ب", "\\n", "😀", " "].randomElement(using: &generator)! }
            result += "\"}"
            if round % 9 == 8 { result = "{}" }
            let queued = (0..<Int.random(in: 0...40, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }

            var buffer = queued
            AppSocket.appendOKFrame(id: id, resultJSON: result, to: &buffer)
            let expected = FrameEncoder.frame(.text, payload: Array(Reply.ok(id: id, resultJSON: result).utf8))
            #expect(Array(buffer.prefix(queued.count)) == queued)
            #expect(Array(buffer.dropFirst(queued.count)) == expected, "round \(round), id \(String(describing: id))")
        }
    }
}
