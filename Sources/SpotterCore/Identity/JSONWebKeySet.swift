import Base64Codec
import FoundationEssentials

/// A provider's published signing keys (RFC 7517 JWK Set), reduced to what RS256 needs: `kid` → RSA key.
/// Pure: parsed from bytes however they were fetched.
public struct JSONWebKeySet: Sendable {
    /// Bound on the document: Apple's and Google's are about 1–2 KB.
    public static let maxBytes = 256 * 1024
    /// Bound on the keys kept: providers publish two or three at a time (the current one and the next).
    public static let maxKeys = 32

    public private(set) var keys: [String: RSAPublicKey]

    public init(keys: [String: RSAPublicKey]) { self.keys = keys }

    public enum Failure: Error, Sendable, Equatable {
        case tooLarge
        /// Not a JSON object with a `keys` array.
        case malformed
        /// No usable RSA signing key in it.
        case empty
    }

    /// Keeps every key that is RSA, for signatures (`use` absent or "sig"), for RS256 (`alg` absent or "RS256"),
    /// with a `kid` and a modulus and exponent `RSAPublicKey` accepts; skips the rest (an EC key, a key for
    /// encryption) without failing the set, as a key set may carry keys for other uses. The first of two keys with
    /// one `kid` wins.
    public init(parsing bytes: [UInt8]) throws(Failure) {
        guard bytes.count <= Self.maxBytes else { throw .tooLarge }
        guard let document = try? JSONDecoder().decode(Document.self, from: Data(bytes)) else { throw .malformed }
        var keys: [String: RSAPublicKey] = [:]
        for jwk in document.keys where keys.count < Self.maxKeys {
            guard jwk.kty == "RSA", jwk.use == nil || jwk.use == "sig", jwk.alg == nil || jwk.alg == "RS256",
                  let kid = jwk.kid, !kid.isEmpty, kid.utf8.count <= IDToken.maxFieldBytes, keys[kid] == nil,
                  let n = jwk.n.flatMap({ Base64.decode($0, alphabet: .url) }),
                  let e = jwk.e.flatMap({ Base64.decode($0, alphabet: .url) }),
                  let key = RSAPublicKey(modulus: n, exponent: e)
            else { continue }
            keys[kid] = key
        }
        guard !keys.isEmpty else { throw .empty }
        self.keys = keys
    }

    private struct Document: Decodable {
        var keys: [Key]
    }

    /// Every member optional: one odd key must not make the others unreadable.
    private struct Key: Decodable {
        var kty: String?
        var kid: String?
        var use: String?
        var alg: String?
        var n: String?
        var e: String?
    }

    /// Seconds a fetched key set stays fresh: `max-age` of a `Cache-Control` header (Google sends one, about
    /// 6 hours), bounded to 1 minute … 1 day; `fallback` without one (or with `no-store` / `no-cache`, which mean
    /// the minimum).
    public static func freshness(cacheControl: String?, fallback: Int64 = 3600) -> Int64 {
        let bounds: ClosedRange<Int64> = 60...86_400
        guard let cacheControl else { return fallback }
        var result: Int64?
        for directive in cacheControl.lowercased().split(separator: ",") {
            let item = String(directive.drop(while: { $0 == " " || $0 == "\t" }).reversed().drop(while: { $0 == " " || $0 == "\t" }).reversed())
            if item == "no-store" || item == "no-cache" { return bounds.lowerBound }
            if item.hasPrefix("max-age=") {
                let digits = item.dropFirst("max-age=".count)
                guard !digits.isEmpty, digits.count <= 18, digits.allSatisfy({ $0.isASCII && $0.isNumber }),
                      let seconds = Int64(digits) else { continue }
                result = seconds
            }
        }
        guard let result else { return fallback }
        return min(max(result, bounds.lowerBound), bounds.upperBound)
    }
}
