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
        #"{"id":"","type":"typing","thread_id":"t"}"#,
        #"{"id":"t","type":"typing","thread_id":"t","extra":"x"}"#,
        #"{"id":"t","type":"typing","thread_id":7}"#,
        #"{"id":"t","type":"typing","thread_id":"a\"b"}"#,
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
        for frame in Self.frames.prefix(8) {
            #expect(FlatCommand.decode(Array(frame.utf8)) != nil, "\(frame)")
        }
        for frame in Self.frames.dropFirst(8) {
            #expect(FlatCommand.decode(Array(frame.utf8)) == nil, "\(frame)")
        }
    }

    /// Random flat frames from a small alphabet of keys and values: whenever the fast path answers, it agrees.
    @Test func randomFramesAgree() {
        let keys = ["id", "type", "thread_id", "client_message_id", "kind", "text", "seq", "meal", "x"]
        let values = [#""1""#, #""message.send""#, #""thread.read""#, #""typing""#, #""receipt.delivered""#, "7", "-1", "0",
                      #""""#, #""ب""#, "1e3", #""a\nb""#, "{}", "null", "true"]
        // Every frame names a hot command type, so that a good share of them is flat and valid: the comparison
        // then runs about 170 times per run, not a dozen (a dozen made the count below flaky).
        let hot = [#""message.send""#, #""thread.read""#, #""typing""#, #""receipt.delivered""#]
        let accepted = compareRandomFrames(10_000) { generator in
            [#""id":"r""#, "\"type\":\(hot.randomElement(using: &generator)!)"]
                + (0..<Int.random(in: 1...6, using: &generator)).map { _ in
                    "\"\(keys.randomElement(using: &generator)!)\":\(values.randomElement(using: &generator)!)"
                }
        }
        #expect(accepted > 60)  // the comparison ran for real (about 170 per run)
    }

    /// The same for the session commands, each key at most once.
    @Test func randomSessionFramesAgree() {
        let keys = ["thread_id", "start", "duration_minutes", "purpose", "session_id", "action", "reason", "x"]
        let values = [#""t1""#, #""accept""#, "1790000000", "-1", "30", "0", #""""#, #""ب""#, "1e3", #""a\nb""#, "{}", "null",
                      "true", "99999999999999999999"]
        let hot = [#""session.invite""#, #""session.request""#, #""session.act""#]
        let accepted = compareRandomFrames(30_000) { generator in
            [#""id":"s""#, "\"type\":\(hot.randomElement(using: &generator)!)"]
                + keys.shuffled(using: &generator).prefix(Int.random(in: 1...5, using: &generator)).map { key in
                    "\"\(key)\":\(values.randomElement(using: &generator)!)"
                }
        }
        #expect(accepted > 500)  // the comparison ran for real (about 950 per run)
    }

    /// Makes `count` frames of the fields `parts` gives, in random order, and checks that whatever the fast path
    /// accepts the general path decodes to the same command. Returns how many the fast path accepted.
    private func compareRandomFrames(_ count: Int, _ parts: (inout SystemRandomNumberGenerator) -> [String]) -> Int {
        var generator = SystemRandomNumberGenerator()
        var accepted = 0
        for _ in 0..<count {
            let frame = "{" + parts(&generator).shuffled(using: &generator).joined(separator: ",") + "}"
            let bytes = Array(frame.utf8)
            guard let fast = FlatCommand.decode(bytes) else { continue }
            accepted += 1
            guard case .success(let general) = SocketCommand.decodeGenerally(bytes) else {
                Issue.record("accepted what the general path refuses: \(frame)")
                continue
            }
            #expect(fast.id == general.id && fast.command.isSame(as: general.command), "\(frame)")
        }
        return accepted
    }
}
