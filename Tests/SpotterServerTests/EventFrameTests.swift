import SeededRandom
import SpotterBroker
import Testing
import WebSocket

/// An event's frame is made once and shared by every socket it goes to (`EventFrame`); before, each socket
/// framed the event's text itself. The shared bytes must be exactly what that per-socket encoding gave.
@Suite("EventFrame: the shared frame equals the per-socket encoding")
struct EventFrameTests {
    /// What a socket used to send for a logged event: the text `{"cursor":N,…}` built as a `String`, framed by
    /// `FrameEncoder` into the socket's own buffer.
    static func perSocket(cursor: Int64, object: String) -> [UInt8] {
        let text = "{\"cursor\":\(cursor)," + object.dropFirst()
        var buffer: [UInt8] = []
        text.utf8.withContiguousStorageIfAvailable { FrameEncoder.append(.text, payload: UnsafeRawBufferPointer($0), to: &buffer) }
            ?? FrameEncoder.append(.text, payload: Array(text.utf8), to: &buffer)
        return buffer
    }

    /// Random events (a seeded generator): objects of random fields whose strings mix ASCII, escapes, Arabic and
    /// emoji, sized across the frame header's three lengths (≤ 125, ≤ 65,535, more) and their edges; cursors at
    /// 0, ±1, ±2^63 and random. Both a logged event's frame and an ephemeral one's equal the per-socket bytes, and
    /// the JSON reads back.
    @Test func randomEventsFrameAlike() {
        var generator = SeededGenerator(seed: 0xF2A3_E5)
        let pieces = ["a", "thread", "\\n", "\\\"", "مرحبا", "👋🏽", " ", "\\u0000", "0123456789"]
        let edgeCursors: [Int64] = [0, 1, -1, .max, .min, .max - 1, .min + 1, 9, 10, 99, 100]
        // Payload sizes around the header's boundaries (the cursor prefix adds 11 to 31 bytes).
        let sizes = [0, 1, 2, 90, 113, 114, 115, 125, 126, 127, 200, 65_500, 65_535, 65_536, 70_000]
        for round in 0..<600 {
            let cursor = round < edgeCursors.count ? edgeCursors[round] : Int64.random(in: .min ... .max, using: &generator)
            let target = sizes[round % sizes.count] + Int.random(in: -3...3, using: &generator)
            var object = "{\"type\":\"message\",\"text\":\""
            while object.utf8.count < target { object += pieces.randomElement(using: &generator)! }
            object += "\"}"
            if round % 10 == 9 { object = "{}" }
            if round % 50 == 49 { object = "" }  // nothing after the prefix, as the concatenation gave

            let shared = EventFrame(cursor: cursor, object: object)
            #expect(shared.bytes == Self.perSocket(cursor: cursor, object: object), "round \(round), cursor \(cursor)")
            #expect(shared.json == "{\"cursor\":\(cursor)," + object.dropFirst())

            let ephemeral = EventFrame(object)
            #expect(ephemeral.bytes == FrameEncoder.frame(.text, payload: Array(object.utf8)), "round \(round)")
            #expect(ephemeral.json == object)
        }
    }
}
