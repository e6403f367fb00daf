import Base64Codec
import FoundationEssentials

/// The two sign-in providers whose ID tokens the server accepts (seed 001 "Platform": Apple Sign-In, Google
/// Sign-In). The raw value is the path segment (`POST /v1/auth/apple`) and what the identity links store.
public enum IdentityProvider: String, Sendable, CaseIterable, Codable {
    case apple
    case google

    /// The `iss` values the provider signs (Google's documents name both forms).
    public var issuers: Set<String> {
        switch self {
        case .apple: return ["https://appleid.apple.com"]
        case .google: return ["https://accounts.google.com", "accounts.google.com"]
        }
    }
}

/// Why an ID token was refused. The wire shows only `invalid_id_token` (or `id_token_expired`) and the field;
/// the case says more for tests and the debug log.
public enum IDTokenRefusal: Error, Sendable, Equatable {
    /// Longer than `IDToken.maxBytes`: refused before any parsing.
    case tooLarge
    /// Not three base64url parts of JSON objects with the claims a provider always sends.
    case malformed
    /// An `alg` other than RS256 (`none`, HS256, ES256, …).
    case algorithm
    /// No key with the header's `kid` in the provider's key set (after one refetch).
    case unknownKey
    /// The signature does not verify with that key (a tampered header or payload, another signer).
    case signature
    case issuer
    case audience
    /// `exp` is past (beyond the skew).
    case expired
    /// `iat` is in the future beyond the skew, or after `exp`.
    case issuedInFuture
    /// The request carried a nonce and the token's differs (or has none).
    case nonce
}

/// A compact JWS as the providers send it, split and decoded but not yet trusted. Pure.
public struct IDToken: Sendable, Equatable {
    /// Bound on the whole token's length: Apple's and Google's are about 1 KB; 8 KiB leaves room for long
    /// names and many audiences and keeps a hostile token from costing more than a few microseconds to refuse.
    public static let maxBytes = 8 * 1024
    /// Bound on a `kid`, a `sub` and each audience.
    public static let maxFieldBytes = 255

    public var keyID: String
    /// The signed bytes: `header.payload` as sent.
    public var signingInput: [UInt8]
    public var signature: [UInt8]
    public var claims: IDTokenClaims

    /// Splits and decodes `token`: exactly three parts, each strict unpadded base64url; the header a JSON object
    /// with `alg` RS256 and a `kid`; the payload one with `iss`, `sub`, `aud`, `exp`, `iat`.
    public init(parsing token: String) throws(IDTokenRefusal) {
        let bytes = Array(token.utf8)
        guard bytes.count <= Self.maxBytes else { throw .tooLarge }
        let parts = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, !parts[1].isEmpty, !parts[2].isEmpty else { throw .malformed }
        guard let headerBytes = Self.base64url(parts[0]), let payloadBytes = Self.base64url(parts[1]),
              let signature = Self.base64url(parts[2])
        else { throw .malformed }
        guard let header = try? JSONDecoder().decode(Header.self, from: Data(headerBytes)) else { throw .malformed }
        guard header.alg == "RS256" else { throw .algorithm }
        // Critical extensions (RFC 7515 §4.1.11) must be understood to be accepted: this reader understands none.
        // Key URLs in the header (`jku`, `x5u`, `jwk`) are never read: the keys come from the server's settings only.
        guard header.crit == nil else { throw .malformed }
        guard let kid = header.kid, !kid.isEmpty, kid.utf8.count <= Self.maxFieldBytes else { throw .malformed }
        guard let claims = try? JSONDecoder().decode(IDTokenClaims.self, from: Data(payloadBytes)) else { throw .malformed }
        guard !claims.subject.isEmpty, claims.subject.utf8.count <= Self.maxFieldBytes,
              !claims.audiences.isEmpty, claims.audiences.allSatisfy({ $0.utf8.count <= Self.maxFieldBytes })
        else { throw .malformed }
        keyID = kid
        signingInput = Array(bytes[..<(parts[0].count + 1 + parts[1].count)])
        self.signature = signature
        self.claims = claims
    }

    private static func base64url(_ part: ArraySlice<UInt8>) -> [UInt8]? {
        Base64.decode(String(decoding: part, as: UTF8.self), alphabet: .url)
    }

    private struct Header: Decodable {
        var alg: String?
        var kid: String?
        /// Present (any value) means "refuse unless you know these": decoded loosely so that any JSON counts.
        var crit: [String]?
        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            alg = try c.decodeIfPresent(String.self, forKey: .alg)
            kid = try c.decodeIfPresent(String.self, forKey: .kid)
            crit = c.contains(.crit) ? ((try? c.decode([String].self, forKey: .crit)) ?? []) : nil
        }
        enum CodingKeys: String, CodingKey { case alg, kid, crit }
    }
}

/// The payload's claims the server reads (OpenID Connect Core §2; Apple's and Google's documents).
public struct IDTokenClaims: Sendable, Equatable, Decodable {
    public var issuer: String
    public var subject: String
    /// `aud`: a string or an array of strings on the wire.
    public var audiences: [String]
    public var expiresAt: Int64
    public var issuedAt: Int64
    public var nonce: String?
    public var email: String?
    /// `email_verified`: Google sends a boolean, Apple a boolean or the string "true"/"false". Anything else
    /// (absent, another string, a number) is false.
    public var emailVerified: Bool
    /// Google's `name` (Apple sends the name to the app only, never in the token).
    public var name: String?

    public init(issuer: String, subject: String, audiences: [String], expiresAt: Int64, issuedAt: Int64,
                nonce: String? = nil, email: String? = nil, emailVerified: Bool = false, name: String? = nil) {
        self.issuer = issuer
        self.subject = subject
        self.audiences = audiences
        self.expiresAt = expiresAt
        self.issuedAt = issuedAt
        self.nonce = nonce
        self.email = email
        self.emailVerified = emailVerified
        self.name = name
    }

    enum CodingKeys: String, CodingKey {
        case issuer = "iss", subject = "sub", audiences = "aud", expiresAt = "exp", issuedAt = "iat", nonce, email
        case emailVerified = "email_verified", name
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        issuer = try c.decode(String.self, forKey: .issuer)
        subject = try c.decode(String.self, forKey: .subject)
        if let one = try? c.decode(String.self, forKey: .audiences) {
            audiences = [one]
        } else {
            audiences = try c.decode([String].self, forKey: .audiences)
        }
        expiresAt = try c.decode(Int64.self, forKey: .expiresAt)
        issuedAt = try c.decode(Int64.self, forKey: .issuedAt)
        nonce = try? c.decodeIfPresent(String.self, forKey: .nonce)
        email = try? c.decodeIfPresent(String.self, forKey: .email)
        if let flag = try? c.decode(Bool.self, forKey: .emailVerified) {
            emailVerified = flag
        } else {
            emailVerified = (try? c.decode(String.self, forKey: .emailVerified)) == "true"
        }
        name = try? c.decodeIfPresent(String.self, forKey: .name)
    }
}

/// What a verified token proves: who the provider says the person is.
public struct VerifiedIdentity: Sendable, Equatable {
    public var provider: IdentityProvider
    public var subject: String
    /// The address, only when the provider says it verified it; nil otherwise.
    public var verifiedEmail: String?
    public var name: String?

    public init(provider: IdentityProvider, subject: String, verifiedEmail: String?, name: String?) {
        self.provider = provider
        self.subject = subject
        self.verifiedEmail = verifiedEmail
        self.name = name
    }
}

/// Checks an ID token against the provider's keys and the server's settings. Pure: the keys, the time and
/// the settings come in.
public struct IDTokenVerifier: Sendable {
    public var provider: IdentityProvider
    /// The client ids (`aud`) of this server's apps with the provider; a token for any other app is refused.
    public var audiences: Set<String>
    /// Clock difference tolerated on `exp` and `iat`, seconds (bounded 0…300 by the settings).
    public var skewSeconds: Int64

    public init(provider: IdentityProvider, audiences: Set<String>, skewSeconds: Int64 = 60) {
        self.provider = provider
        self.audiences = audiences
        self.skewSeconds = max(0, min(skewSeconds, 300))
    }

    /// The claims' checks, in the order a careful reader refuses: signature first (the caller, with the key of
    /// `token.keyID`), then issuer, audience, time, nonce. `now` is Unix seconds.
    public func check(_ token: IDToken, key: RSAPublicKey, now: Int64, nonce: String?) throws(IDTokenRefusal) -> VerifiedIdentity {
        guard key.verify(signature: token.signature, of: token.signingInput) else { throw .signature }
        let claims = token.claims
        guard provider.issuers.contains(claims.issuer) else { throw .issuer }
        guard claims.audiences.contains(where: audiences.contains) else { throw .audience }
        // `now` is the server's own clock (sane); exp and iat come from outside and are only compared with it.
        guard claims.expiresAt > now - skewSeconds else { throw .expired }
        guard claims.issuedAt <= now + skewSeconds, claims.issuedAt <= claims.expiresAt else { throw .issuedInFuture }
        if let nonce {
            guard let signed = claims.nonce, Self.nonceMatches(signed: signed, sent: nonce) else { throw .nonce }
        }
        let email = claims.emailVerified ? claims.email.flatMap { try? AccountRules.normalizeEmail($0) } : nil
        return VerifiedIdentity(provider: provider, subject: claims.subject, verifiedEmail: email, name: claims.name)
    }

    /// The token's nonce is the one the app sent, or its SHA-256 in lowercase hex (Apple's flow: the app hands
    /// Apple the digest of its raw nonce and keeps the raw one). Compared in constant time.
    static func nonceMatches(signed: String, sent: String) -> Bool {
        constantTimeEqual(Array(signed.utf8), Array(sent.utf8))
            || constantTimeEqual(Array(signed.utf8), Array(Digest.sha256Hex(sent).utf8))
    }

    private static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for (x, y) in zip(a, b) { difference |= x ^ y }
        return difference == 0
    }
}
