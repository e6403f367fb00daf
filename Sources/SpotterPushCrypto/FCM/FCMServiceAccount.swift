import FoundationEssentials

/// A Google service account, read from its JSON key file (`--fcm-service-account PATH`): what FCM HTTP v1 needs to
/// get access tokens through the OAuth 2.0 JWT-bearer grant (RFC 7523).
///
/// `description` names the account and project, never the private key.
public struct FCMServiceAccount: Sendable, CustomStringConvertible {
    /// The scope of an access token that may send FCM messages.
    public static let messagingScope = "https://www.googleapis.com/auth/firebase.messaging"
    /// The assertion's lifetime: Google accepts at most an hour.
    public static let assertionLifetimeSeconds: Int64 = 3600

    /// `client_email`: the assertion's issuer.
    public let clientEmail: String
    /// `project_id`: names the FCM endpoint (`/v1/projects/<project_id>/messages:send`).
    public let projectID: String
    /// `token_uri`: where the grant is posted, and the assertion's audience.
    public let tokenURI: String
    /// `private_key_id`, when present: sent as the assertion header's `kid` so Google picks the right key.
    public let privateKeyID: String?
    let privateKey: RSAPrivateKey

    /// The account in the key file's JSON. Throws `.invalidServiceAccount` naming the first field that is
    /// missing, empty or (for `type`) not `service_account`, and the key's errors for `private_key`.
    public init(json: [UInt8]) throws(PushCryptoError) {
        guard let file = try? JSONDecoder().decode(KeyFile.self, from: Data(json)) else {
            throw .invalidServiceAccount(field: "JSON object")
        }
        if let type = file.type, type != "service_account" { throw .invalidServiceAccount(field: "type") }
        guard let clientEmail = file.client_email, !clientEmail.isEmpty else { throw .invalidServiceAccount(field: "client_email") }
        guard let projectID = file.project_id, !projectID.isEmpty else { throw .invalidServiceAccount(field: "project_id") }
        guard let tokenURI = file.token_uri, tokenURI.hasPrefix("https://") || tokenURI.hasPrefix("http://") else {
            throw .invalidServiceAccount(field: "token_uri")
        }
        guard let pem = file.private_key, !pem.isEmpty else { throw .invalidServiceAccount(field: "private_key") }
        self.clientEmail = clientEmail
        self.projectID = projectID
        self.tokenURI = tokenURI
        privateKeyID = file.private_key_id.flatMap { $0.isEmpty ? nil : $0 }
        privateKey = try RSAPrivateKey(pem: pem)
    }

    /// The signed JWT-bearer assertion issued at `now`: RS256 over `{"iss": client_email, "scope": messagingScope,
    /// "aud": token_uri, "iat": now, "exp": now + 3600}`.
    public func assertion(now: Int64) -> String {
        CompactJWS.sign(header: JWTHeader(alg: "RS256", kid: privateKeyID, typ: "JWT"),
                        claims: FCMAssertionClaims(iss: clientEmail, scope: Self.messagingScope, aud: tokenURI,
                                                   iat: now, exp: now + Self.assertionLifetimeSeconds),
                        with: privateKey.signRS256)
    }

    /// The grant's `application/x-www-form-urlencoded` body for an assertion issued at `now`, to POST to
    /// `tokenURI`.
    public func grantRequestBody(now: Int64) -> String {
        "grant_type=" + FormEncoding.escape("urn:ietf:params:oauth:grant-type:jwt-bearer")
            + "&assertion=" + FormEncoding.escape(assertion(now: now))
    }

    public var description: String {
        "FCMServiceAccount(client_email: \(clientEmail), project_id: \(projectID), private_key: redacted)"
    }

    /// The fields read from a key file; the others (`client_id`, `auth_uri`, …) are ignored.
    private struct KeyFile: Decodable {
        var type: String?
        var project_id: String?
        var private_key_id: String?
        var private_key: String?
        var client_email: String?
        var token_uri: String?
    }
}

/// The claims of the grant's assertion (RFC 7523 §3, Google's OAuth 2.0 for service accounts).
public struct FCMAssertionClaims: Codable, Sendable, Equatable {
    public var iss: String
    public var scope: String
    public var aud: String
    public var iat: Int64
    public var exp: Int64
}

/// `application/x-www-form-urlencoded` as WHATWG URL's serializer writes it: ASCII letters, digits and `*-._`
/// stay, a space becomes `+`, every other byte of the UTF-8 is `%XX`.
enum FormEncoding {
    static func escape(_ text: String) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "*"), UInt8(ascii: "-"), UInt8(ascii: "."),
                 UInt8(ascii: "_"):
                out.append(byte)
            case UInt8(ascii: " "):
                out.append(UInt8(ascii: "+"))
            default:
                out += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
