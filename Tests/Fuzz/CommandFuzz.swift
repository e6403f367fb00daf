import FoundationEssentials

// libFuzzer target: JSON from clients (Sources/SpotterProtocol/Wire/SocketCommand.swift, KnownFields.swift,
// JSONText.swift, Errors/APIError.swift).
//
// Built as part of the SpotterProtocol module (see Tests/scripts/fuzz.sh), so internal API is visible.
// The input is one `/v1/ws` text frame, or one HTTP request body:
// - `SocketCommand.decode` must return, never trap; a usable id is 1…64 characters;
// - the reply the server would send (`Reply.ok` / `Reply.error` with the error's JSON in both
//   languages) must be JSON that reads back with the same id, code and field;
// - the bytes are decoded as every HTTP request body type the way SpotterServer's `JSON.decode` does
//   (`Checked<T>` under the known-fields rule, an empty body read as `{}`), and each failure's
//   `jsonBody` must read back too;
// - strings that got through are written back by the hand-made `JSONText` writer, which promises
//   the same bytes as `JSONEncoder` with `[.sortedKeys, .withoutEscapingSlashes]`;
// - the bytes as an `Accept-Language` header pick a language without trapping.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))

    switch SocketCommand.decode(bytes) {
    case .success(let (id, command)):
        fuzzCheckID(id)
        let reply = Reply.ok(id: id, resultJSON: "{}")
        let read = fuzzReadReply(reply)
        precondition(read.id == id && read.ok, "ok reply does not read back: \(reply)")
        fuzzExercise(command)
    case .failure(let failure):
        if let id = failure.id { fuzzCheckID(id) }
        for language in Language.allCases {
            let errorJSON = String(decoding: failure.error.jsonObject(language), as: UTF8.self)
            let reply = Reply.error(id: failure.id, errorJSON: errorJSON)
            let read = fuzzReadReply(reply)
            precondition(read.id == failure.id && !read.ok, "error reply does not read back: \(reply)")
            precondition(read.error?.code == failure.error.code.rawValue, "error code does not read back: \(reply)")
            precondition(read.error?.field == failure.error.field, "error field does not read back: \(reply)")
        }
    }

    fuzzBody(SignUpRequest.self, bytes) { signUp in
        let user = UserView(id: "u", role: signUp.role ?? "client", fullName: signUp.fullName, email: signUp.email,
                            phone: nil, language: "en", onboardingCompleted: false)
        fuzzSameAsEncoder(user.jsonText, user)
    }
    fuzzBody(SignInRequest.self, bytes) { _ in }
    fuzzBody(RefreshRequest.self, bytes) { _ in }
    fuzzBody(OTPStartRequest.self, bytes) { _ in }
    fuzzBody(OTPVerifyRequest.self, bytes) { _ in }
    fuzzBody(LanguageRequest.self, bytes) { _ in }
    fuzzBody(ProfileRequest.self, bytes) { _ in }
    fuzzBody(OnboardingRequest.self, bytes) { _ in }
    fuzzBody(CoachChoiceRequest.self, bytes) { _ in }
    fuzzBody(ProvisionRequest.self, bytes) { _ in }

    _ = Language(acceptLanguage: String(decoding: bytes, as: UTF8.self))
    return 0
}

private func fuzzCheckID(_ id: String) {
    precondition(!id.isEmpty && id.count <= SocketCommand.maxIDLength, "unusable id accepted: \(id.utf8.count) bytes")
}

private func fuzzExercise(_ command: any SocketCommandBody) {
    guard let send = command as? SendMessageCommand else { return }
    // The message as the server writes it back, when the rules (SpotterCore) would let it through.
    if let meal = send.meal {
        let numbers = [meal.calories, meal.proteinG, meal.carbsG, meal.fatsG]
        guard numbers.allSatisfy(\.isFinite) else { return }
    }
    let view = MessageView(threadId: send.threadId ?? "t", seq: 1, senderId: "u",
                           clientMessageId: send.clientMessageId ?? "c", kind: send.kind ?? "text",
                           text: send.text, meal: send.meal, createdAt: 0)
    fuzzSameAsEncoder(view.jsonText, view)
    _ = MessageEvent(message: view).jsonText
}

/// Decodes a request body exactly as `JSON.decode` in Sources/SpotterServer/API/APIContext.swift.
private func fuzzBody<T: KnownFields>(_ type: T.Type, _ bytes: [UInt8], _ then: (T) -> Void) {
    let value: T
    do {
        value = try JSONDecoder().decode(Checked<T>.self, from: Data(bytes.isEmpty ? Array("{}".utf8) : bytes)).value
    } catch {
        let apiError = APIError(wrappingDecoding: error)
        for language in Language.allCases {
            let json = apiError.jsonBody(language)
            guard let read = try? JSONDecoder().decode(FuzzErrorBody.self, from: Data(json)) else {
                preconditionFailure("\(T.self): error body is not JSON: \(String(decoding: json, as: UTF8.self))")
            }
            precondition(read.error.code == apiError.code.rawValue && read.error.field == apiError.field,
                         "\(T.self): error body does not read back")
        }
        return
    }
    then(value)
}

/// `JSONText` promises `JSONEncoder`'s bytes.
private func fuzzSameAsEncoder<T: Encodable>(_ text: String, _ value: T) {
    let expected = JSONText.encoder.encodeToString(value)
    precondition(text == expected, "JSONText differs from JSONEncoder:\n\(text)\n\(expected)")
}

private struct FuzzErrorObject: Decodable {
    var code: String
    var message: String
    var field: String?
}

private struct FuzzErrorBody: Decodable {
    var error: FuzzErrorObject
}

private struct FuzzReplyProbe: Decodable {
    var type: String
    var id: String?
    var ok: Bool
    var error: FuzzErrorObject?
}

private func fuzzReadReply(_ reply: String) -> FuzzReplyProbe {
    do {
        let read = try JSONDecoder().decode(FuzzReplyProbe.self, from: Data(reply.utf8))
        precondition(read.type == "reply")
        return read
    } catch {
        preconditionFailure("reply is not JSON (\(error)): \(reply)")
    }
}
