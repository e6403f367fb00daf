import SeededRandom
import Testing
@testable import SpotterProtocol

extension SocketCommandBody {
    /// Whether `other` is this same command with the same fields.
    func isSame(as other: any SocketCommandBody) -> Bool { (other as? Self) == self }
}

@Suite("SocketCommand: the envelope and its fields")
struct SocketCommandTests {
    func decode(_ text: String) -> Result<SocketCommand.Decoded, SocketCommand.DecodeFailure> {
        SocketCommand.decode(Array(text.utf8))
    }

    func failure(_ text: String) -> SocketCommand.DecodeFailure? {
        if case .failure(let failure) = decode(text) { return failure }
        return nil
    }

    @Test func decodesEachCommandOnce() throws {
        guard case .success(let decoded) = decode(#"{"id":"a","type":"history","thread_id":"t","limit":5}"#) else {
            Issue.record("history did not decode")
            return
        }
        #expect(decoded.id == "a")
        let history = try #require(decoded.command as? HistoryCommand)
        #expect(history.threadId == "t" && history.limit == 5)
        guard case .success(let me) = decode(#"{"type":"me","id":"b"}"#) else { return }
        #expect(me.command.isSame(as: MeCommand()))
        #expect(!me.command.isSame(as: ThreadsCommand()))
    }

    @Test func eachTypeDecodesToItsOwnBody() throws {
        let frames: [(String, any SocketCommandBody)] = [
            (#"{"id":"a","type":"threads"}"#, ThreadsCommand()),
            (#"{"id":"a","type":"thread.read","thread_id":"t","seq":3}"#, ReceiptCommand<Read>(threadId: "t", seq: 3)),
            (#"{"id":"a","type":"receipt.delivered","thread_id":"t","seq":3}"#, ReceiptCommand<Delivered>(threadId: "t", seq: 3)),
            (#"{"id":"a","type":"typing","thread_id":"t"}"#, TypingCommand(threadId: "t")),
            (#"{"id":"a","type":"resume","cursor":9}"#, ResumeCommand(cursor: 9)),
            (#"{"id":"a","type":"auth.refresh","refresh_token":"r"}"#, RefreshRequest(refreshToken: "r")),
            (#"{"id":"a","type":"app_state","state":"background"}"#, AppStateCommand(state: "background")),
        ]
        for (frame, expected) in frames {
            guard case .success(let decoded) = decode(frame) else {
                Issue.record("did not decode: \(frame)")
                continue
            }
            #expect(decoded.command.isSame(as: expected), "\(frame)")
        }
        // A read is not a delivery, though the fields are the same.
        guard case .success(let read) = decode(#"{"id":"a","type":"thread.read","thread_id":"t","seq":3}"#) else { return }
        #expect(!read.command.isSame(as: ReceiptCommand<Delivered>(threadId: "t", seq: 3)))
        #expect(SocketCommand.catalog.count == 39)
    }

    @Test func theIdIsRequiredAndBounded() {
        #expect(failure(#"{"type":"me"}"#) == .init(id: nil, error: APIError(.missingField, field: "id")))
        #expect(failure(#"{"id":"","type":"me"}"#) == .init(id: nil, error: APIError(.outOfRange, field: "id")))
        #expect(failure(#"{"id":"\#(String(repeating: "é", count: 65))","type":"me"}"#)?.error.code == .outOfRange)
        #expect(failure(#"{"id":["x"],"type":"me"}"#) == .init(id: nil, error: APIError(.badRequest, field: "id")))
        #expect(failure("[1]")?.id == nil)
        #expect(failure("not json")?.error.code == .badRequest)
    }

    @Test func typeAndFieldsAreCheckedWithTheIdKept() {
        #expect(failure(#"{"id":"a"}"#) == .init(id: "a", error: APIError(.missingField, field: "type")))
        #expect(failure(#"{"id":"a","type":"fly"}"#) == .init(id: "a", error: APIError(.unknownCommand, field: "type")))
        #expect(failure(#"{"id":"a","type":"me","x":1}"#) == .init(id: "a", error: APIError(.unknownField, field: "x")))
        let meal = #"{"id":"a","type":"message.send","thread_id":"t","client_message_id":"c","kind":"meal_log","meal":{"name":"Oats","calories":1,"protein_g":1,"carbs_g":1,"fats_g":1,"meal_type":"lunch","ingredients":[],"colour":"red"}}"#
        #expect(failure(meal) == .init(id: "a", error: APIError(.unknownField, field: "meal.colour")))
        #expect(failure(#"{"id":"a","type":"history","thread_id":7}"#) == .init(id: "a", error: APIError(.badRequest, field: "thread_id")))
    }
}

/// The fast path accepts only frames the general path decodes to the same command.
@Suite("SocketCommand: the fast path agrees with JSONDecoder")
struct FlatCommandTests {
    static let frames: [String] = [
        #"{"id":"1","type":"message.send","thread_id":"t","client_message_id":"m1","text":"مرحبا 👋 coach"}"#,
        #" { "id" : "1" , "type" : "message.send" , "text" : "hi" } "#,
        #"{"id":"1","type":"message.send","thread_id":"t","client_message_id":"m1","kind":"text","text":"x"}"#,
        #"{"type":"thread.read","thread_id":"t","seq":42,"id":"r"}"#,
        #"{"id":"r","type":"receipt.delivered","thread_id":"t","seq":0}"#,
        #"{"id":"r","type":"receipt.delivered","thread_id":"t","seq":-3}"#,
        #"{"id":"r","type":"receipt.delivered","thread_id":"t","seq":9223372036854775807}"#,
        #"{"id":"t","type":"typing","thread_id":"t"}"#,
        #"{"id":"t","type":"typing","thread_id":"a\"b"}"#,
        #"{"id":"1","type":"message.send","thread_id":"t","client_message_id":"m1","text":"line\nnext \"quoted\" \u00e9 \ud83d\ude00"}"#,
        #"{"id":"","type":"typing","thread_id":"t"}"#,
        #"{"id":"t","type":"typing","thread_id":"t","extra":"x"}"#,
        #"{"id":"t","type":"typing","thread_id":7}"#,
        #"{"id":"t","type":"typing","thread_id":"t","thread_id":"u"}"#,
        #"{"id":"r","type":"thread.read","thread_id":"t","seq":1.5}"#,
        #"{"id":"r","type":"thread.read","thread_id":"t","seq":01}"#,
        #"{"id":"r","type":"thread.read","thread_id":"t","seq":99999999999999999999}"#,
        #"{"id":"r","type":"thread.read","thread_id":"t","seq":"3"}"#,
        #"{"id":"1","type":"message.send","thread_id":"t","client_message_id":"m1","kind":"meal_log","meal":{"name":"x"}}"#,
        #"{"id":"1","type":"threads"}"#,
        #"{"id":"1","type":"message.send",}"#,
        #"{"id":"1","type":"message.send"} x"#,
        #"{"id":"1","type":"message.send""#,
        #"[]"#,
        String(repeating: "x", count: 3),
        #"{"id":"\#(String(repeating: "i", count: 65))","type":"typing","thread_id":"t"}"#,
    ]

    @Test(arguments: frames)
    func agrees(_ frame: String) throws {
        let bytes = Array(frame.utf8)
        guard let fast = FlatCommand.decode(bytes) else { return }  // the general path decides
        guard case .success(let general) = SocketCommand.decodeGenerally(bytes) else {
            Issue.record("the fast path accepted what the general one refuses: \(frame)")
            return
        }
        #expect(fast.id == general.id && fast.command.isSame(as: general.command), "\(frame)")
    }

    @Test func theHotCommandsTakeTheFastPath() {
        for frame in Self.frames.prefix(10) {
            #expect(FlatCommand.decode(Array(frame.utf8)) != nil, "\(frame)")
        }
        for frame in Self.frames.dropFirst(10) {
            #expect(FlatCommand.decode(Array(frame.utf8)) == nil, "\(frame)")
        }
    }

    /// The fast path against the general one over random frames of the hot commands (a seeded generator, so a
    /// failure replays): random keys (the commands' own, `id`, `type`, unknown ones, a key twice) with random
    /// values — strings with escapes, `\u` escapes and surrogate pairs (and lone ones), raw control characters
    /// and non-ASCII text; integers at 0, ±1, ±2^63 and one past; floats, `null`, objects, arrays — and then
    /// each frame mutated (a byte changed, dropped or doubled). Whatever the fast path accepts, the general path
    /// decodes to the same command.
    @Test func randomAndMutatedFramesAgree() {
        var generator = SeededGenerator(seed: 0x5907_7E55)
        let types = ["message.send", "thread.read", "receipt.delivered", "typing", "session.invite", "session.request",
                     "session.act", "app_state"]
        let keys = ["thread_id", "client_message_id", "kind", "text", "seq", "meal", "attachments", "start",
                    "duration_minutes", "purpose", "session_id", "action", "reason", "state", "id", "type", "x", "Text"]
        let values = [#""t1""#, #""text""#, #""hi""#, #""""#, #""ب 👋""#, #""a\nb""#, #""q\"uote\\""#, #""\/\b\f\r\t""#,
                      #""\u00e9\u0041""#, #""\ud83d\ude00""#, #""\ud83d""#, #""\ude00x""#, #""\u12""#, #""\x""#,
                      "\"tab\there\"", "\"nul\u{0}\"", #""\u0000""#, "0", "1", "-1", "-0", "9223372036854775807",
                      "-9223372036854775808", "9223372036854775808", "-9223372036854775809", "01", "1.5", "1e3", "null",
                      "true", "{}", #"{"name":"x"}"#, "[]", #"["a"]"#, #""accept""#, #""background""#, "1790000000", "30"]
        var accepted = 0, compared = 0
        for round in 0..<40_000 {
            var parts = [#""id":"r\#(round % 7)""#, "\"type\":\"\(types.randomElement(using: &generator)!)\""]
            for _ in 0..<Int.random(in: 0...5, using: &generator) {
                parts.append("\"\(keys.randomElement(using: &generator)!)\":\(values.randomElement(using: &generator)!)")
            }
            var bytes = Array(("{" + parts.shuffled(using: &generator).joined(separator: ",") + "}").utf8)
            if round % 3 == 2, !bytes.isEmpty {  // a third of them mutated
                let at = Int.random(in: 0..<bytes.count, using: &generator)
                switch Int.random(in: 0..<3, using: &generator) {
                case 0: bytes[at] = [UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: ","), UInt8(ascii: "}"), 0x0A, 0x20,
                                     UInt8(ascii: "u"), UInt8(ascii: "9"), 0xC3, 0x80].randomElement(using: &generator)!
                case 1: bytes.remove(at: at)
                default: bytes.insert(bytes[at], at: at)
                }
            }
            compared += 1
            guard let fast = FlatCommand.decode(bytes) else { continue }
            accepted += 1
            guard case .success(let general) = SocketCommand.decodeGenerally(bytes) else {
                Issue.record("accepted what the general path refuses: \(String(decoding: bytes, as: UTF8.self))")
                continue
            }
            #expect(fast.id == general.id && fast.command.isSame(as: general.command), "\(String(decoding: bytes, as: UTF8.self))")
        }
        #expect(compared == 40_000)
        #expect(accepted > 1_000)  // the comparison ran for real
    }
}
