import Base64Codec
import FoundationEssentials
import SpotterProtocol

/// What an access token says: who, with which role, in which session, and until when.
/// On the wire (JSON) the keys are the registered JWT names `sub`, `iat`, `exp` plus `role` and `sid`.
public struct AccessClaims: Sendable, Equatable, Codable {
    /// "sub": the user id.
    public var subject: String
    /// "role": the user's role when the token was issued.
    public var role: Role
    /// "sid": the refresh-token family id; revoking the family ends the session.
    public var sessionID: String
    /// "iat": issue time, Unix seconds.
    public var issuedAt: Int64
    /// "exp": expiry, Unix seconds; the token is invalid from this second on.
    public var expiresAt: Int64

    public init(subject: String, role: Role, sessionID: String, issuedAt: Int64, expiresAt: Int64) {
        self.subject = subject
        self.role = role
        self.sessionID = sessionID
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
    }

    enum CodingKeys: String, CodingKey {
        case subject = "sub", role, sessionID = "sid", issuedAt = "iat", expiresAt = "exp"
    }
}

extension AccessClaims {
    /// The claims in one pass when the payload is a flat object of plain strings and integers, as this server
    /// signs them; nil for anything else, which `JSONDecoder` then reads (a connect verified a token with
    /// `JSONDecoder` for a seventh of its time). Keys other than the five are ignored, as the decoder does.
    init?(flat payload: [UInt8]) {
        guard let fields = FlatFields.parse(payload),
              let subject = fields.string("sub") ?? nil, let roleName = fields.string("role") ?? nil,
              let role = Role(rawValue: roleName), let sessionID = fields.string("sid") ?? nil,
              let issuedAt = fields.integer("iat") ?? nil, let expiresAt = fields.integer("exp") ?? nil
        else { return nil }
        self.init(subject: subject, role: role, sessionID: sessionID, issuedAt: issuedAt, expiresAt: expiresAt)
    }
}

/// Why an access token was refused.
public enum AccessTokenError: Error, Sendable, Equatable {
    /// Not three base64url parts, bad JSON, missing claims, a signature that is not 32 bytes,
    /// or an algorithm other than HS256.
    case malformed
    /// Well-formed, but the signature does not match this server's secret.
    case badSignature
    /// Authentic, but `now ≥ exp`.
    case expired
}

/// Signs and verifies HS256 JSON Web Tokens (RFC 7519 / RFC 7515 compact form).
///
/// The header is always `{"alg":"HS256","typ":"JWT"}`; tokens whose header names any other
/// algorithm (including `none`) are refused as `.malformed` before any signature check, so an
/// attacker cannot choose the algorithm. base64url is unpadded and strictly canonical.
public struct AccessTokenSigner: Sendable {
    /// Access tokens live 15 minutes; refresh tokens renew them.
    public static let lifetimeSeconds: Int64 = 900

    /// The HMAC key (the secret), its padded blocks hashed once.
    private let key: HMACSHA256Key

    /// `secret` is the HMAC key. Precondition: at least 32 bytes (256 bits).
    public init(secret: [UInt8]) {
        precondition(secret.count >= 32, "the access-token secret must be at least 32 bytes")
        key = HMACSHA256Key(secret)
    }

    struct Header: Codable, Equatable {
        var alg: String
        var typ: String?
    }

    /// `base64url(header) "." base64url(claims) "." base64url(HMAC-SHA256(secret, first two parts))`.
    public func sign(_ claims: AccessClaims) -> String {
        let signingInput = Self.encodedHeader + "." + Base64.encode(Self.json(claims), alphabet: .url)
        let signature = key.mac(Array(signingInput.utf8))
        return signingInput + "." + Base64.encode(signature, alphabet: .url)
    }

    /// Checks the structure and algorithm, then the signature (constant time), then the expiry
    /// (`now ≥ exp` → `.expired`). Returns the claims only when all three pass.
    public func verify(_ token: String, now: Int64) throws(AccessTokenError) -> AccessClaims {
        // On the token's bytes in place: splitting it into parts and copying them into arrays was a third of
        // the check, and the check a quarter of a connect.
        var token = token
        let claims = token.withUTF8 { verify(bytes: $0) }
        guard let claims = try claims.get() else { throw .malformed }
        guard now < claims.expiresAt else { throw .expired }
        return claims
    }

    /// Structure, algorithm and signature; `nil` claims when the signed payload is not readable claims.
    private func verify(bytes: UnsafeBufferPointer<UInt8>) -> Result<AccessClaims?, AccessTokenError> {
        guard bytes.count <= 8192, let first = bytes.firstIndex(of: UInt8(ascii: ".")) else { return .failure(.malformed) }
        let rest = UnsafeBufferPointer(rebasing: bytes[(first + 1)...])
        guard let second = rest.firstIndex(of: UInt8(ascii: ".")).map({ first + 1 + $0 }),
              !bytes[(second + 1)...].contains(UInt8(ascii: "."))
        else { return .failure(.malformed) }
        let header = UnsafeBufferPointer(rebasing: bytes[..<first])
        // Tokens this server signed carry exactly `encodedHeader`; any other encoding is decoded and checked.
        guard header.elementsEqual(Self.encodedHeader.utf8) || Self.acceptableHeader(header),
              let payload = Base64.decode(bytes: UnsafeBufferPointer(rebasing: bytes[(first + 1)..<second]), alphabet: .url),
              !payload.isEmpty,
              let signature = Base64.decode(bytes: UnsafeBufferPointer(rebasing: bytes[(second + 1)...]), alphabet: .url),
              signature.count == Digest.sha256Length
        else { return .failure(.malformed) }

        let expected = key.mac(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[..<second])))
        guard Digest.constantTimeEquals(expected, signature) else { return .failure(.badSignature) }
        return .success(AccessClaims(flat: payload) ?? (try? JSONDecoder().decode(AccessClaims.self, from: Data(payload))))
    }

    /// HS256, typed JWT or untyped.
    private static func acceptableHeader(_ encoded: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let bytes = Base64.decode(bytes: encoded, alphabet: .url),
              let header = try? JSONDecoder().decode(Header.self, from: Data(bytes)) else { return false }
        return header.alg == "HS256" && (header.typ == nil || header.typ == "JWT")
    }

    /// The fixed header, encoded once.
    static let encodedHeader: String = Base64.encode(json(Header(alg: "HS256", typ: "JWT")), alphabet: .url)

    /// Compact JSON with sorted keys and unescaped slashes: stable bytes for stable signatures.
    static func json<T: Encodable>(_ value: T) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(value) else {
            preconditionFailure("encoding \(T.self) as JSON cannot fail")
        }
        return Array(data)
    }
}
