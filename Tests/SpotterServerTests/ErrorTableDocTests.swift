import Foundation
import SpotterProtocol
import Testing

/// `Protocol/errors.md` is the one table of error codes a client developer
/// reads; it must say exactly what `ErrorCode` says. Regenerate it with
/// `SPOTTER_WRITE_ERRORS_MD=1 swift test --filter ErrorTableDocTests` (the
/// hand-written section after the table, "When each code is returned", is
/// kept, and must have a row for every code).
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

    /// The hand-written section after the generated table: when each code is returned.
    static let whenHeading = "\n## When each code is returned\n"

    /// The file's hand-written part (from `whenHeading` on), or "" when it has none.
    static func handWritten(_ text: String) -> String {
        text.range(of: whenHeading).map { String(text[$0.lowerBound...]) } ?? ""
    }

    @Test func documentMatchesTheCode() throws {
        let expected = Self.rendered()
        if ProcessInfo.processInfo.environment["SPOTTER_WRITE_ERRORS_MD"] == "1" {
            // The table is regenerated; the section after it is kept.
            let kept = Self.handWritten((try? String(contentsOf: Self.path, encoding: .utf8)) ?? "")
            try (expected + kept).write(to: Self.path, atomically: true, encoding: .utf8)
        }
        let actual = try String(contentsOf: Self.path, encoding: .utf8)
        let generated = actual.range(of: Self.whenHeading).map { String(actual[..<$0.lowerBound]) } ?? actual
        #expect(generated == expected, "Protocol/errors.md is out of date; regenerate it (see this file's doc comment)")
    }

    /// Every code the server can return says when, in the section after the table (issue 26).
    @Test func everyCodeSaysWhenItIsReturned() throws {
        let section = Self.handWritten(try String(contentsOf: Self.path, encoding: .utf8))
        let undocumented = ErrorCode.allCases.filter { !section.contains("\n| `\($0.rawValue)` | ") }
        #expect(undocumented.isEmpty, "add a row to Protocol/errors.md's \"When each code is returned\" for: \(undocumented.map(\.rawValue))")
    }
}
