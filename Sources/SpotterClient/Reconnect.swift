import Foundation

/// The reconnect rules, as the JavaScript client has them.
public enum Reconnect {
    /// The delay before reconnect attempt `attempt` (0-based), in milliseconds: full jitter under an exponential
    /// ceiling, `random()` in [0, 1).
    public static func backoffMilliseconds(attempt: Int, minDelayMilliseconds: Int = 250, maxDelayMilliseconds: Int = 30_000,
                                           random: () -> Double) -> Int {
        let doublings = min(max(attempt, 0), 16)
        let ceiling = min(Double(maxDelayMilliseconds), Double(max(minDelayMilliseconds, 0)) * Double(1 << doublings))
        let unit = min(max(random(), 0), 0.999_999_999)
        return Int((unit * ceiling).rounded(.down))
    }

    /// The `retry_after_ms=N` a restarting server puts in its 1001 close reason, or nil.
    public static func retryAfter(fromReason reason: String) -> Int? {
        guard let range = reason.range(of: "retry_after_ms=") else { return nil }
        let digits = reason[range.upperBound...].prefix { $0.isASCII && $0.isNumber }
        guard !digits.isEmpty, digits.count <= 9 else { return nil }
        return Int(digits)
    }

    /// Seconds-since-1970 expiry (`exp`) of a JWT access token, or nil if it cannot be read.
    public static func tokenExpiry(_ token: String) -> Int? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { return nil }
        var base64 = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard let data = Data(base64Encoded: base64),
              case .object(let claims)? = try? JSONDecoder().decode(JSONValue.self, from: data),
              case .int(let expiry)? = claims["exp"] else { return nil }
        return expiry
    }
}
