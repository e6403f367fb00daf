import FoundationEssentials

/// An OAuth 2.0 access token for FCM HTTP v1, from the token endpoint's answer to the JWT-bearer grant.
/// `description` leaves the token out.
public struct FCMAccessToken: Sendable, Equatable, CustomStringConvertible {
    /// How long before its expiry a token is refreshed (at most half its lifetime, for a very short-lived one).
    public static let refreshMarginSeconds: Int64 = 60

    /// The bearer token: `authorization: Bearer <value>`.
    public let value: String
    /// When the token endpoint said it expires, Unix seconds.
    public let expiresAt: Int64
    /// When the next push should get a new token instead: a minute before `expiresAt`.
    public let refreshAt: Int64

    /// The token in the token endpoint's JSON answer (`{"access_token": …, "expires_in": <seconds>,
    /// "token_type": "Bearer"}`) received at `now`. Throws `.invalidTokenResponse` for a missing or empty
    /// token, a lifetime that is not 1 s … 1 day, or a `token_type` other than Bearer.
    public init(tokenResponse json: [UInt8], receivedAt now: Int64) throws(PushCryptoError) {
        guard let answer = try? JSONDecoder().decode(Answer.self, from: Data(json)),
              let value = answer.access_token, !value.isEmpty,
              let lifetime = answer.expires_in, (1...86_400).contains(lifetime),
              answer.token_type.map({ $0.lowercased() == "bearer" }) ?? true
        else { throw .invalidTokenResponse }
        self.init(value: value, expiresAt: now + lifetime, lifetimeSeconds: lifetime)
    }

    init(value: String, expiresAt: Int64, lifetimeSeconds: Int64) {
        self.value = value
        self.expiresAt = expiresAt
        refreshAt = expiresAt - min(Self.refreshMarginSeconds, lifetimeSeconds / 2)
    }

    public var description: String { "FCMAccessToken(expires at \(expiresAt), value: redacted)" }

    private struct Answer: Decodable {
        var access_token: String?
        var expires_in: Int64?
        var token_type: String?
    }
}

/// The access token in use and whether a grant is in flight: a pure value, with `now` passed in, that the shell
/// asks before each FCM send and tells what the token endpoint answered. One grant at a time: pushes that find
/// one in flight wait for it rather than start another.
public struct FCMAccessTokenCache: Sendable {
    /// A grant with no answer after this long is taken as lost, and the next push starts another.
    public static let grantTimeoutSeconds: Int64 = 30

    /// What the shell does with a push to FCM.
    public enum Step: Sendable, Equatable {
        /// Send it now with this token.
        case send(FCMAccessToken)
        /// No usable token and no grant in flight: post `grantRequestBody(now:)` to the token URI, hold the push,
        /// and report the answer (`received` or `grantFailed`).
        case requestToken
        /// A grant is in flight: hold the push until it is answered.
        case waitForToken
    }

    /// The token in use; nil before the first grant, after a 401, or once it is past `refreshAt`.
    public private(set) var token: FCMAccessToken?
    private var grantStartedAt: Int64?

    public init() {}

    /// What to do with a push at `now`. Answers `.requestToken` once per grant: it records the grant as in flight.
    public mutating func next(now: Int64) -> Step {
        if let token, now < token.refreshAt { return .send(token) }
        if let started = grantStartedAt, now - started < Self.grantTimeoutSeconds, now >= started {
            return .waitForToken
        }
        grantStartedAt = now
        return .requestToken
    }

    /// The token endpoint answered with `token`: it is used from now on.
    public mutating func received(_ token: FCMAccessToken) {
        self.token = token
        grantStartedAt = nil
    }

    /// The grant failed (an error answer, a timeout, a refused connection): the next push starts another (the
    /// shell backs off before it).
    public mutating func grantFailed() { grantStartedAt = nil }

    /// FCM refused `token` (401 `UNAUTHENTICATED`): if it is the one in use, the next push gets a new one.
    public mutating func providerRejected(_ token: FCMAccessToken) {
        if self.token == token { self.token = nil }
    }
}
