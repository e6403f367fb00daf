/// `POST /v1/auth/apple` and `POST /v1/auth/google`: sign in (or up) with the provider's ID token. The answer is
/// the `SessionResponse` of every sign-in (201 when the account was made now, 200 otherwise).
public struct ProviderSignInRequest: Codable, Sendable, Equatable {
    /// The provider's ID token (a JWT, RS256), as the app got it from Sign in with Apple / Google Sign-In.
    public var idToken: String?
    /// The nonce the app asked the provider to sign, raw (the token may carry it raw or as its SHA-256 in hex);
    /// when present, the token must carry it.
    public var nonce: String?
    /// The name Apple gives the app at the first sign-in only (never in the token); used for a new account.
    public var fullName: String?
    /// A new account's time zone (IANA name); UTC when absent.
    public var timeZone: String?
    /// A new account's role, as at sign-up: `client` (when absent) or `coach`. An existing account keeps its own.
    public var role: String?

    public init(idToken: String?, nonce: String? = nil, fullName: String? = nil, timeZone: String? = nil, role: String? = nil) {
        self.idToken = idToken
        self.nonce = nonce
        self.fullName = fullName
        self.timeZone = timeZone
        self.role = role
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case idToken = "id_token", nonce, fullName = "full_name", timeZone = "time_zone", role
    }
}

extension ProviderSignInRequest: KnownFields {
    public static var fieldNames: Set<String> { Set(CodingKeys.allCases.map(\.rawValue)) }
}
