import Foundation
import SpotterProtocol
import Testing

/// `Protocol/errors.md` is the one table of error codes a client developer
/// reads; it must say exactly what `ErrorCode` says. Regenerate it with
/// `SPOTTER_WRITE_ERRORS_MD=1 swift test --filter ErrorTableDocTests`.
@Suite("Protocol/errors.md")
struct ErrorTableDocTests {
    static let path = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Protocol/errors.md")

    static func rendered() -> String {
        var text = """
            # Error codes

            Every error — an HTTP response body or a WebSocket reply — carries one of these
            stable `code`s, with a `message` in English or Arabic (chosen by `Accept-Language`
            at request or connect time, else the user's saved language). Act on `code`;
            show `message`. `field` names the request field at fault when there is one,
            `retry_after` the seconds to wait for 429s (also in the `Retry-After` header).

            This file is generated from the server's own table, and the test suite fails
            when the two differ.

            | code | HTTP | English | العربية |
            |---|---|---|---|

            """
        for code in ErrorCode.allCases {
            text += "| `\(code.rawValue)` | \(code.httpStatus) | \(code.message(.english)) | \(code.message(.arabic)) |\n"
        }
        return text
    }

    @Test func documentMatchesTheCode() throws {
        let expected = Self.rendered()
        if ProcessInfo.processInfo.environment["SPOTTER_WRITE_ERRORS_MD"] == "1" {
            try expected.write(to: Self.path, atomically: true, encoding: .utf8)
        }
        let actual = try String(contentsOf: Self.path, encoding: .utf8)
        #expect(actual == expected, "Protocol/errors.md is out of date; regenerate it (see this file's doc comment)")
    }
}
