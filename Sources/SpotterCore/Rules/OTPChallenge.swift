/// A sign-in code sent by SMS (seed 000 AC-AUTH-01/02). The code itself is never stored: only its digest,
/// computed by the caller (e.g. `Digest.sha256Hex`).
///
/// Guarantees: pure; time is Unix seconds passed in. A code lives 5 minutes (expired when
/// `now >= issuedAt + 300`); a new code may be sent 60 seconds after the last one; after 5 wrong attempts
/// the challenge is dead and only a new code helps.
public struct OTPChallenge: Sendable, Equatable, Codable {
    /// How long a code can be used, in seconds.
    public static let lifetimeSeconds: Int64 = 300
    /// How long after sending a code another one may be sent, in seconds.
    public static let resendAfterSeconds: Int64 = 60
    /// Wrong attempts allowed before the challenge locks.
    public static let maxAttempts = 5

    /// The digest of the code that was sent.
    public var codeDigest: String
    /// When the code was sent (Unix seconds).
    public var issuedAt: Int64
    /// Wrong attempts so far.
    public var failedAttempts: Int

    public init(codeDigest: String, issuedAt: Int64, failedAttempts: Int = 0) {
        self.codeDigest = codeDigest
        self.issuedAt = issuedAt
        self.failedAttempts = failedAttempts
    }

    /// nil when a new code may be sent now (at or after `issuedAt + 60`), else the whole seconds to wait,
    /// in 1…60 (a clock that went backwards never yields more than 60).
    public func resendWait(now: Int64) -> Int? {
        let readyAt = issuedAt + Self.resendAfterSeconds
        guard now < readyAt else { return nil }
        return Int(min(readyAt - now, Self.resendAfterSeconds))
    }

    /// The outcome of one verification attempt.
    public enum Verdict: Sendable, Equatable {
        /// The code matches: sign the person in and delete the challenge.
        case accepted
        /// The code is wrong; `remainingAttempts` more tries are allowed (0 means the next try is refused).
        case wrong(remainingAttempts: Int)
        /// The code is older than 5 minutes.
        case expired
        /// 5 wrong attempts were made; even the right code is refused.
        case tooManyAttempts
    }

    /// Checks `candidateDigest` against the stored digest in constant time (for equal lengths) and counts a
    /// wrong attempt. Precedence: expired (`now >= issuedAt + 300`) wins over everything; then, after 5
    /// wrong attempts, every try is `.tooManyAttempts`; then `.accepted` or `.wrong`. Only `.wrong`
    /// mutates `self` (the caller must persist `failedAttempts`).
    public mutating func verify(candidateDigest: String, now: Int64) -> Verdict {
        if now >= issuedAt + Self.lifetimeSeconds { return .expired }
        if failedAttempts >= Self.maxAttempts { return .tooManyAttempts }
        if Self.constantTimeEquals(Array(codeDigest.utf8), Array(candidateDigest.utf8)) {
            return .accepted
        }
        failedAttempts += 1
        return .wrong(remainingAttempts: max(0, Self.maxAttempts - failedAttempts))
    }

    /// Byte equality whose time depends only on the lengths, not on where the first difference is.
    static func constantTimeEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for i in 0..<a.count { difference |= a[i] ^ b[i] }
        return difference == 0
    }
}
