import Foundation
@testable import SpotterClient
import Testing

/// The reconnect rules and the token reading, as the JavaScript client's (Tests/js/client.test.js).
@Suite("SpotterClient: reconnect rules")
struct ReconnectRulesTests {
    @Test func fullJitterUnderAGrowingCeiling() {
        #expect(Reconnect.backoffMilliseconds(attempt: 0, random: { 0 }) == 0)
        #expect(Reconnect.backoffMilliseconds(attempt: 0, minDelayMilliseconds: 250, random: { 0.999 }) == 249)
        #expect(Reconnect.backoffMilliseconds(attempt: 3, minDelayMilliseconds: 250, random: { 0.5 }) == 1000)
        #expect(Reconnect.backoffMilliseconds(attempt: 30, minDelayMilliseconds: 250, maxDelayMilliseconds: 30_000, random: { 0.999 }) == 29_970)
        // Edges: a huge or negative attempt, a random outside [0, 1).
        #expect(Reconnect.backoffMilliseconds(attempt: Int.max, random: { 1.5 }) <= 30_000)
        #expect(Reconnect.backoffMilliseconds(attempt: Int.min, random: { -1 }) == 0)
    }

    @Test func aRestartNamesItsOwnDelay() {
        #expect(Reconnect.retryAfter(fromReason: "server restarting; retry_after_ms=2500") == 2500)
        #expect(Reconnect.retryAfter(fromReason: "idle timeout") == nil)
        #expect(Reconnect.retryAfter(fromReason: "retry_after_ms=") == nil)
        #expect(Reconnect.retryAfter(fromReason: "retry_after_ms=99999999999999999999") == nil)  // no overflow
    }

    @Test func theTokensExpiryIsRead() {
        let payload = Data(#"{"exp":1795309633,"sub":"u"}"#.utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        #expect(Reconnect.tokenExpiry("h.\(payload).s") == 1_795_309_633)
        #expect(Reconnect.tokenExpiry("not a token") == nil)
        #expect(Reconnect.tokenExpiry("") == nil)
        #expect(Reconnect.tokenExpiry("a.\u{0}.c") == nil)
    }

    @Test func errorsDecodeWithTheirRetryHint() throws {
        let body = Data(#"{"error":{"code":"rate_limited","message":"Slow down.","retry_after":3}}"#.utf8)
        let error = try JSONDecoder().decode(ErrorBody.self, from: body).error
        #expect(error.code == "rate_limited")
        #expect(error.retryAfter == 3)
        #expect(error.isRetryable)
        #expect(!SpotterError(code: "forbidden", message: "No.").isRetryable)
    }
}
