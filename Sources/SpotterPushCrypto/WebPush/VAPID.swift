/// The application server's identity for Web Push (RFC 8292, VAPID): a P-256 key whose public half browsers
/// subscribed with (`applicationServerKey`), and a contact subject for the push services.
///
/// Every push request carries `Authorization: vapid t=<JWT>, k=<public key>`; the JWT is ES256 over
/// `{"aud": <the endpoint's origin>, "exp": <≤ 24 h ahead>, "sub": <subject>}`. `description` shows the public key
/// and subject, never the private key.
public struct VAPIDKey: Sendable, CustomStringConvertible {
    /// RFC 8292 §2: a push service may refuse a token that expires more than 24 hours after it is presented.
    public static let maxLifetimeSeconds: Int64 = 24 * 3600
    /// Half the maximum, so a token signed now is still good when a retry presents it hours later.
    public static let defaultLifetimeSeconds: Int64 = 12 * 3600

    public let privateKey: P256PrivateKey
    /// `mailto:…` or `https://…` (RFC 8292 §2.1): whom a push service contacts about this sender.
    public let subject: String

    /// The key in `pem` (PKCS#8 or SEC1, P-256) with its `subject`. Throws the key's errors, or `.invalidSubject`.
    public init(pem: String, subject: String) throws(PushCryptoError) {
        try self.init(privateKey: P256PrivateKey(pem: pem), subject: subject)
    }

    /// Throws `.invalidSubject` unless `subject` is a `mailto:` URI with an address or an `https:` URL.
    public init(privateKey: P256PrivateKey, subject: String) throws(PushCryptoError) {
        let lower = subject.lowercased()
        let valid = (lower.hasPrefix("mailto:") && subject.count > 7 && subject.contains("@"))
            || (lower.hasPrefix("https://") && subject.count > 8)
        guard valid, !subject.contains(where: { $0.isWhitespace || $0 == "\"" }) else { throw .invalidSubject }
        self.privateKey = privateKey
        self.subject = subject
    }

    /// The public key as base64url (87 characters): `k=` in every request, and what
    /// `GET /v1/push/vapid-public-key` answers for browsers to subscribe with.
    public var publicKeyBase64URL: String { privateKey.publicKey.base64URL }

    /// The signed JWT for `audience` (an origin, `PushOrigin.of(endpoint:)`) expiring at `expiresAt` (Unix
    /// seconds).
    public func token(audience: String, expiresAt: Int64) -> String {
        CompactJWS.sign(header: JWTHeader(alg: "ES256", typ: "JWT"),
                        claims: VAPIDClaims(aud: audience, exp: expiresAt, sub: subject),
                        with: privateKey.signES256)
    }

    /// The `Authorization` header value for a push to `endpoint`: `vapid t=<JWT>, k=<public key>`, the JWT
    /// expiring `lifetimeSeconds` after `now` (precondition: 1 s … 24 h). Throws `.invalidEndpoint` when the
    /// endpoint has no origin.
    public func authorization(
        endpoint: String, now: Int64, lifetimeSeconds: Int64 = defaultLifetimeSeconds
    ) throws(PushCryptoError) -> String {
        precondition((1...Self.maxLifetimeSeconds).contains(lifetimeSeconds), "a VAPID token lives at most 24 hours")
        let audience = try PushOrigin.of(endpoint: endpoint)
        return "vapid t=\(token(audience: audience, expiresAt: now + lifetimeSeconds)), k=\(publicKeyBase64URL)"
    }

    public var description: String { "VAPIDKey(public: \(publicKeyBase64URL), subject: \(subject), private: redacted)" }
}

/// The claims of a VAPID token (RFC 8292 §2).
public struct VAPIDClaims: Codable, Sendable, Equatable {
    /// The push service's origin.
    public var aud: String
    /// Expiry, Unix seconds.
    public var exp: Int64
    /// The sender's contact.
    public var sub: String?
}
