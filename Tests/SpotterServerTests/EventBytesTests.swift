import SeededRandom
import SpotterBroker
import SpotterCore
import SpotterProtocol
import Testing
import WebSocket

/// A send's events go from the core to the sockets as bytes (`ChatState.messageEvents`, `MessageView.jsonBytes`,
/// `MessageEvent.jsonBytes`, `EventFrame(cursor:object: [UInt8])`): no `String` between the fields and the frame.
/// The slow path they replace, and must equal byte for byte (clients and the Protocol transcripts read these
/// frames): the `Codable` event written by `JSONEncoder` (sorted keys, unescaped slashes) as a `String`, the
/// cursor put in front as text, and the text framed per socket.
@Suite("Event bytes: the core's fast path equals JSONEncoder's frames")
struct EventBytesTests {
    /// Pieces of random texts: every JSON escape, control characters, quotes and backslashes, slashes, CR LF,
    /// combining marks, emoji with skin tones and joiners, flags, Arabic, the line separators, a BOM.
    static let pieces = [
        "a", "Z", " ", "\"", "\\", "/", "\\u0000", "\n", "\r\n", "\r", "\t", "\u{0}", "\u{1}", "\u{8}", "\u{c}", "\u{b}",
        "\u{1f}", "\u{7f}", "\u{85}", "e\u{301}", "\u{301}", "💪", "👩🏽‍💻", "🇸🇦", "1\u{fe0f}\u{20e3}", "مَرْحَبًا", "\u{2028}",
        "\u{2029}", "\u{feff}", "\u{600}1", "{", "}", ",", ":", "</script>", "\u{10ffff}", "😀",
    ]

    static func randomText(_ generator: inout SeededGenerator, maxPieces: Int) -> String {
        var text = ""
        for _ in 0..<Int.random(in: 0...maxPieces, using: &generator) {
            if Int.random(in: 0..<4, using: &generator) == 0 {
                // Any scalar at all (not a surrogate).
                let value = UInt32.random(in: 0...0x10FFFF, using: &generator)
                text.unicodeScalars.append(UnicodeScalar(value) ?? "?")
            } else {
                text += pieces.randomElement(using: &generator)!
            }
        }
        return text
    }

    static let edges: [Int64] = [0, 1, -1, .max, .min, .max - 1, .min + 1, 9, 10, 99, 100, 1_790_000_000]

    static func randomNumber(_ generator: inout SeededGenerator) -> Int64 {
        Bool.random(using: &generator) ? edges.randomElement(using: &generator)! : Int64.random(in: .min ... .max, using: &generator)
    }

    /// The slow path: `JSONEncoder`'s text of the event, the cursor in front, framed for one socket.
    static func slowFrame(cursor: Int64, _ event: MessageEvent) -> [UInt8] {
        EventFrameTests.perSocket(cursor: cursor, object: JSONText.encoder.encodeToString(event))
    }

    @Test func randomSendsFrameAsJSONEncoderWritesThem() throws {
        var generator = SeededGenerator(seed: 0xB17E5)
        for round in 0..<800 {
            let coach = "c-" + Self.randomText(&generator, maxPieces: 3), client = "u-" + Self.randomText(&generator, maxPieces: 3)
            let threadID = Self.randomText(&generator, maxPieces: 4)
            // Read positions and the thread's last seq as a thread may hold them; the record's numbers anything.
            let read = Int64.random(in: 0...1_000, using: &generator)
            let state = ChatState()
            state.add(ChatThread(ThreadRow(id: threadID, no: 1, coachID: coach, clientID: client, createdAt: 0, active: true,
                                           coach: .init(delivered: read, read: read), client: .init(delivered: 0, read: 0))))
            let text = Self.randomText(&generator, maxPieces: round % 50 == 0 ? 400 : 12)
            let edited: Int64? = Bool.random(using: &generator) ? Self.randomNumber(&generator) : nil
            let deleted: Int64? = round % 7 == 3 ? Self.randomNumber(&generator) : nil
            let message = MessageRecord(clientMessageID: Self.randomText(&generator, maxPieces: 4), body: text,
                                        editedAt: edited, deletedAt: deleted)
            let side: Side = Bool.random(using: &generator) ? .coach : .client
            let seq = round < 40 ? Int64.random(in: 1...2_000, using: &generator) : Self.randomNumber(&generator)
            let cursor = Self.randomNumber(&generator)
            let record = ChatRecord(pos: cursor, threadNo: 1, side: side, seq: seq, at: Self.randomNumber(&generator), .message(message))
            state.apply(record)
            let thread = try #require(state.thread(no: 1))

            // The fast path, as `CoachingCore.apply` and `CoreRunner.publish` take it.
            let view = try #require(state.messageView(record))
            let fast = state.messageEvents(for: record, messageJSON: view.jsonBytes)
            try #require(fast.map(\.userID) == [coach, client])
            for ((userID, json), readerSide) in zip(fast, [Side.coach, .client]) {
                let event = MessageEvent(message: view, unread: thread.unread(readerSide), totalUnread: state.totalUnread(userID))
                let frame = EventFrame(cursor: cursor, object: json)
                #expect(frame.bytes == Self.slowFrame(cursor: cursor, event), "round \(round): \(Array(text.unicodeScalars.map(\.value)))")
                #expect(frame.json == "{\"cursor\":\(cursor)," + JSONText.encoder.encodeToString(event).dropFirst())
            }
            // The message's own JSON (the sender's reply), and the text path kept for `resume` and the cluster.
            #expect(view.jsonBytes == Array(JSONText.encoder.encodeToString(view).utf8), "round \(round)")
            #expect(state.events(for: record).map(\.payload) == fast.map { String(decoding: $0.json, as: UTF8.self) })
            // Without the message's JSON given, the events write it themselves: the same bytes.
            #expect(state.messageEvents(for: record).map(\.json) == fast.map(\.json))
        }
    }

    /// Counts past what a thread holds, and none (`MessageEvent`'s optional counts are left out when nil).
    @Test func extremeAndMissingCountsWriteAsJSONEncoderWritesThem() {
        let view = MessageView(threadId: "t\"\\/\u{0}", seq: .min, senderId: nil, clientMessageId: "m", kind: "system",
                               text: "\u{1}é💪\r\n", meal: nil, createdAt: .max, sessionId: "s")
        for unread in [Int64?.none, 0, .max, .min] {
            for total in [Int64?.none, -1, .max, .min] {
                let event = MessageEvent(message: view, unread: unread, totalUnread: total)
                let bytes = MessageEvent.jsonBytes(message: view.jsonBytes, unread: unread, totalUnread: total)
                #expect(bytes == Array(JSONText.encoder.encodeToString(event).utf8))
                #expect(EventFrame(cursor: .min, object: bytes).bytes == Self.slowFrame(cursor: .min, event))
            }
        }
        // An empty object, as the concatenation read it: nothing after the cursor's comma.
        #expect(EventFrame(cursor: 5, object: [UInt8]()).bytes == EventFrameTests.perSocket(cursor: 5, object: ""))
        #expect(EventFrame(cursor: 5, object: Array("{}".utf8)).bytes == EventFrameTests.perSocket(cursor: 5, object: "{}"))
    }
}
