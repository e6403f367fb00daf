import COpenSSL
import Foundation

/// A stand-in sign-in provider for tests: an RSA key pair made by OpenSSL, its public half as a JWKS, and ID
/// tokens signed RS256 with it (or tampered with, or signed otherwise) the way Apple and Google make theirs.
public final class IDTokenForge: @unchecked Sendable {
    public let kid: String
    private let key: OpaquePointer

    /// A fresh key (2048 bits unless told): about 0.1 s of OpenSSL's time.
    public init(kid: String = "test-key-1", bits: Int = 2048) {
        self.kid = kid
        let context = EVP_PKEY_CTX_new_from_name(nil, "RSA", nil)!
        defer { EVP_PKEY_CTX_free(context) }
        precondition(EVP_PKEY_keygen_init(context) == 1)
        precondition(EVP_PKEY_CTX_set_rsa_keygen_bits(context, Int32(bits)) == 1)
        var made: OpaquePointer?
        precondition(EVP_PKEY_generate(context, &made) == 1)
        key = made!
    }

    deinit { EVP_PKEY_free(key) }

    /// The public key's modulus and exponent, big-endian.
    public var modulus: [UInt8] { bigNumber("n") }
    public var exponent: [UInt8] { bigNumber("e") }

    /// The JWK of the public key (`kty` RSA, `use` sig, `alg` RS256).
    public func jwk(kid: String? = nil) -> [String: Any] {
        ["kty": "RSA", "kid": kid ?? self.kid, "use": "sig", "alg": "RS256",
         "n": Self.base64url(modulus), "e": Self.base64url(exponent)]
    }

    /// A key set document holding `keys` (this forge's JWK unless told).
    public func jwks(_ keys: [[String: Any]]? = nil) -> Data {
        try! JSONSerialization.data(withJSONObject: ["keys": keys ?? [jwk()]], options: [.sortedKeys])
    }

    /// The private key as PEM (PKCS #8), for an independent signer (PyJWT).
    public var privateKeyPEM: String {
        let bio = BIO_new(BIO_s_mem())!
        defer { BIO_free(bio) }
        precondition(PEM_write_bio_PrivateKey(bio, key, nil, nil, 0, nil, nil) == 1)
        var pointer: UnsafeMutablePointer<CChar>?
        let length = BIO_ctrl(bio, BIO_CTRL_INFO, 0, &pointer)
        return String(decoding: UnsafeRawBufferPointer(start: pointer, count: Int(length)), as: UTF8.self)
    }

    /// A compact JWS: `header` (alg RS256 and this kid unless told) and `claims`, signed with the key.
    public func token(_ claims: [String: Any], header: [String: Any]? = nil) -> String {
        let head = header ?? ["alg": "RS256", "kid": kid, "typ": "JWT"]
        let input = Self.base64url(Self.json(head)) + "." + Self.base64url(Self.json(claims))
        return input + "." + Self.base64url(sign(Array(input.utf8)))
    }

    /// Claims as Apple or Google sends them, valid at `now` for `audience`.
    public static func claims(issuer: String, audience: String, subject: String, now: Int64, lifetime: Int64 = 600,
                              email: String? = nil, emailVerified: Any? = nil, nonce: String? = nil) -> [String: Any] {
        var claims: [String: Any] = ["iss": issuer, "aud": audience, "sub": subject, "iat": now, "exp": now + lifetime]
        if let email { claims["email"] = email }
        if let emailVerified { claims["email_verified"] = emailVerified }
        if let nonce { claims["nonce"] = nonce }
        return claims
    }

    /// RS256 of `message`.
    public func sign(_ message: [UInt8]) -> [UInt8] {
        let context = EVP_MD_CTX_new()!
        defer { EVP_MD_CTX_free(context) }
        precondition(EVP_DigestSignInit(context, nil, EVP_sha256(), nil, key) == 1)
        var length = 0
        precondition(EVP_DigestSign(context, nil, &length, message, message.count) == 1)
        var signature = [UInt8](repeating: 0, count: length)
        precondition(EVP_DigestSign(context, &signature, &length, message, message.count) == 1)
        return Array(signature.prefix(length))
    }

    public static func base64url(_ bytes: [UInt8]) -> String {
        base64url(Data(bytes))
    }

    public static func base64url(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    public static func json(_ object: [String: Any]) -> Data {
        try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
    }

    private func bigNumber(_ name: String) -> [UInt8] {
        var number: OpaquePointer?
        precondition(EVP_PKEY_get_bn_param(key, name, &number) == 1)
        defer { BN_free(number) }
        var bytes = [UInt8](repeating: 0, count: (Int(BN_num_bits(number)) + 7) / 8)
        _ = BN_bn2bin(number, &bytes)
        return bytes
    }
}
