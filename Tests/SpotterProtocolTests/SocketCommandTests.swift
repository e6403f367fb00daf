import Testing
@testable import SpotterProtocol

@Suite("SocketCommand: the envelope and its fields")
struct SocketCommandTests {
    func decode(_ text: String) -> Result<(id: String, command: SocketCommand), SocketCommand.DecodeFailure> {
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
        guard case .history(let history) = decoded.command else {
            Issue.record("not history: \(decoded.command)")
            return
        }
        #expect(history.threadId == "t" && history.limit == 5)
        guard case .success(let me) = decode(#"{"type":"me","id":"b"}"#) else { return }
        #expect(me.command == .me)
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
