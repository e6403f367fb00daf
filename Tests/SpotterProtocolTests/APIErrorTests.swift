import Foundation
import Testing
@testable import SpotterProtocol

/// Decodes a jsonBody into its inner "error" object, failing the test if it is not one.
func decodeError(_ bytes: [UInt8]) throws -> [String: Any] {
    let object = try JSONSerialization.jsonObject(with: Data(bytes))
    let outer = try #require(object as? [String: Any])
    #expect(outer.count == 1)
    return try #require(outer["error"] as? [String: Any])
}

@Suite("APIError")
struct APIErrorTests {
    @Test("every code in every language decodes with code and message", arguments: ErrorCode.allCases)
    func decodesForEveryCode(_ code: ErrorCode) throws {
        for language in Language.allCases {
            let body = try decodeError(APIError(code).jsonBody(language))
            #expect(body["code"] as? String == code.rawValue)
            #expect(body["message"] as? String == code.message(language))
            #expect(body["field"] == nil)
            #expect(body["retry_after"] == nil)
            #expect(body.count == 2)
        }
    }

    @Test("exact bytes and key order with field and retry_after")
    func exactBytes() {
        let error = APIError(.rateLimited, field: "email", retryAfterSeconds: 42)
        let expected = #"{"error":{"code":"rate_limited","message":""#
            + ErrorCode.rateLimited.message(.english)
            + #"","field":"email","retry_after":42}}"#
        #expect(String(decoding: error.jsonBody(.english), as: UTF8.self) == expected)
    }

    @Test("exact bytes without optional keys")
    func exactBytesMinimal() {
        let expected = #"{"error":{"code":"not_found","message":""#
            + ErrorCode.notFound.message(.english) + #""}}"#
        #expect(String(decoding: APIError(.notFound).jsonBody(.english), as: UTF8.self) == expected)
    }

    @Test("field and retry_after decode with the right types")
    func optionalFields() throws {
        let body = try decodeError(APIError(.otpResendTooSoon, field: "phone", retryAfterSeconds: 17).jsonBody(.arabic))
        #expect(body["field"] as? String == "phone")
        #expect((body["retry_after"] as? NSNumber)?.intValue == 17)
        #expect(body["message"] as? String == ErrorCode.otpResendTooSoon.message(.arabic))
        let onlyRetry = try decodeError(APIError(.rateLimited, retryAfterSeconds: 1).jsonBody(.english))
        #expect(onlyRetry["field"] == nil)
        #expect((onlyRetry["retry_after"] as? NSNumber)?.intValue == 1)
    }

    @Test("Arabic is written as UTF-8, not escaped")
    func arabicIsRaw() {
        let bytes = APIError(.forbidden).jsonBody(.arabic)
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.contains(ErrorCode.forbidden.message(.arabic)))
        #expect(!text.contains("\\u06"))
        #expect(String(validating: bytes, as: UTF8.self) != nil)
    }

    @Test("quotes, backslashes and control characters are escaped", arguments: [
        "a\"b", "back\\slash", "line\nbreak", "tab\there", "nul\u{0}x", "\u{1F}\u{7F}", "emoji 💪 ok",
        "عربي\"\\", "\r\u{8}\u{C}", "</script>",
    ])
    func escaping(_ field: String) throws {
        let bytes = APIError(.missingField, field: field).jsonBody(.english)
        #expect(!bytes.contains(where: { $0 < 0x20 }), "raw control byte in output")
        let body = try decodeError(bytes)
        #expect(body["field"] as? String == field)
    }

    @Test("control characters are escaped as JSONEncoder escapes them (one escaper for every frame)")
    func controlForm() {
        let text = String(decoding: APIError(.badRequest, field: "a\nb\u{1}").jsonBody(.english), as: UTF8.self)
        #expect(text.hasSuffix(#""field":"a\nb\u0001"}}"#))
    }

    @Test("negative and large retry_after values are plain JSON numbers")
    func numbers() throws {
        let body = try decodeError(APIError(.rateLimited, retryAfterSeconds: 86_400).jsonBody(.english))
        #expect((body["retry_after"] as? NSNumber)?.intValue == 86_400)
    }

    @Test("equality covers all fields")
    func equality() {
        #expect(APIError(.invalidEmail, field: "email") == APIError(.invalidEmail, field: "email"))
        #expect(APIError(.invalidEmail, field: "email") != APIError(.invalidEmail))
        #expect(APIError(.rateLimited, retryAfterSeconds: 1) != APIError(.rateLimited, retryAfterSeconds: 2))
        #expect(APIError(.rateLimited) != APIError(.otpResendTooSoon))
    }

    @Test("output is deterministic")
    func deterministic() {
        let error = APIError(.emailTaken, field: "email")
        #expect(error.jsonBody(.arabic) == error.jsonBody(.arabic))
        #expect(error.jsonBody(.arabic) != error.jsonBody(.english))
    }
}
