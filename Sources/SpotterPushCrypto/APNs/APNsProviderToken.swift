/// An APNs token-signing key (a `.p8` file from Apple's developer account) with its key id and team id.
///
/// It signs provider tokens: ES256 JWTs with header `{"alg":"ES256","kid":<key id>}` and claims
/// `{"iss":<team id>,"iat":<issue time>}`, sent as `authorization: bearer <token>`. `description` names the ids,
/// never the key.
public struct APNsSigningKey: Sendable, CustomStringConvertible {
    public let privateKey: P256PrivateKey
    public let keyID: String
    public let teamID: String

    /// The `.p8` key's PEM text (PKCS#8, P-256) with its ids. Throws the key's errors, or
    /// `.invalidAPNsIdentifier` when an id is not 10 ASCII letters and digits.
    public init(p8 pem: String, keyID: String, teamID: String) throws(PushCryptoError) {
        try self.init(privateKey: P256PrivateKey(pem: pem), keyID: keyID, teamID: teamID)
    }

    public init(privateKey: P256PrivateKey, keyID: String, teamID: String) throws(PushCryptoError) {
        guard Self.isAppleIdentifier(keyID) else { throw .invalidAPNsIdentifier(which: "key id") }
        guard Self.isAppleIdentifier(teamID) else { throw .invalidAPNsIdentifier(which: "team id") }
        self.privateKey = privateKey
        self.keyID = keyID
        self.teamID = teamID
    }

    /// A provider token issued at `issuedAt` (Unix seconds).
    public func token(issuedAt: Int64) -> String {
        CompactJWS.sign(header: JWTHeader(alg: "ES256", kid: keyID),
                        claims: APNsTokenClaims(iss: teamID, iat: issuedAt),
                        with: privateKey.signES256)
    }

    static func isAppleIdentifier(_ text: String) -> Bool {
        text.utf8.count == 10 && text.allSatisfy(\.isASCIIAlphanumeric)
    }

    public var description: String { "APNsSigningKey(key id: \(keyID), team id: \(teamID), private: redacted)" }
}

/// The claims of a provider token.
public struct APNsTokenClaims: Codable, Sendable, Equatable {
    /// The team id.
    public var iss: String
    /// Issue time, Unix seconds.
    public var iat: Int64
}

/// The provider token in use, and when to sign the next: a pure value, with `now` passed in.
///
/// Apple refuses a token older than an hour (`ExpiredProviderToken`) and one renewed more often than every 20
/// minutes (`TooManyProviderTokenUpdates`), so one token serves every request until it is `renewAfterSeconds`
/// old (50 minutes by default: ten minutes of margin for clock skew and requests in flight), then the next
/// request signs a new one. A clock that steps back more than a minute before the token's `iat` also renews it,
/// since its age can no longer be told.
public struct APNsProviderToken: Sendable {
    /// The age at which the next request gets a new token, by default.
    public static let defaultRenewAfterSeconds: Int64 = 50 * 60
    /// Apple's window: no renewal before 20 minutes, no token older than 60.
    public static let renewalWindowSeconds: ClosedRange<Int64> = (20 * 60)...(60 * 60 - 1)
    /// How far the clock may step back behind a token's `iat` before the token is renewed.
    public static let clockStepBackToleranceSeconds: Int64 = 60

    public let signingKey: APNsSigningKey
    public let renewAfterSeconds: Int64
    /// The token in use and its `iat`; nil until the first request.
    public private(set) var current: (token: String, issuedAt: Int64)?

    /// Precondition: `renewAfterSeconds` inside Apple's window, 20 minutes to just under an hour.
    public init(signingKey: APNsSigningKey, renewAfterSeconds: Int64 = defaultRenewAfterSeconds) {
        precondition(Self.renewalWindowSeconds.contains(renewAfterSeconds), "APNs tokens are renewed after 20 to 60 minutes")
        self.signingKey = signingKey
        self.renewAfterSeconds = renewAfterSeconds
    }

    /// The token for a request sent at `now`: the current one while it is younger than `renewAfterSeconds`, else a
    /// new one issued at `now` (which becomes current).
    public mutating func token(now: Int64) -> String {
        if let current, now - current.issuedAt < renewAfterSeconds,
           now - current.issuedAt >= -Self.clockStepBackToleranceSeconds {
            return current.token
        }
        let token = signingKey.token(issuedAt: now)
        current = (token, now)
        return token
    }

    /// APNs refused `token` (403 `ExpiredProviderToken` or `InvalidProviderToken`): if it is the current one, the
    /// next request signs a new one whatever its age. (Renewing within 20 minutes of the last renewal risks
    /// `TooManyProviderTokenUpdates`; the caller backs off on that answer.)
    public mutating func providerRejected(_ token: String) {
        if current?.token == token { current = nil }
    }
}
