import Base64Codec
import FoundationEssentials

/// JSON Web Signatures in compact form (RFC 7515 §7.1): `base64url(header) "." base64url(payload) "."
/// base64url(signature)`, unpadded. The providers' tokens are all JWTs (RFC 7519) of this shape; only the
/// algorithm and the claims differ.
enum CompactJWS {
    /// The signed token: `header` and `claims` as JSON (keys sorted, slashes unescaped, so one input gives one
    /// token), signed over the first two parts by `sign`.
    static func sign(header: some Encodable, claims: some Encodable, with sign: ([UInt8]) -> [UInt8]) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let headerJSON = try? encoder.encode(header), let claimsJSON = try? encoder.encode(claims) else {
            preconditionFailure("a JWT header or claims value that JSONEncoder cannot encode")
        }
        let signingInput = Base64.encode(Array(headerJSON), alphabet: .url) + "." + Base64.encode(Array(claimsJSON), alphabet: .url)
        return signingInput + "." + Base64.encode(sign(Array(signingInput.utf8)), alphabet: .url)
    }

    /// The payload of `token` if its header's `alg` is `algorithm` and `verify(signature, signingInput)` holds.
    /// Throws `.malformedToken` for anything but three canonical base64url parts with a JSON header naming
    /// `algorithm` (so a token cannot choose `none` or another algorithm), `.badSignature` when the signature
    /// does not verify.
    static func verify(
        _ token: String, algorithm: String, with verify: (_ signature: [UInt8], _ signingInput: [UInt8]) -> Bool
    ) throws(PushCryptoError) -> [UInt8] {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3,
              let headerBytes = Base64.decode(parts[0], alphabet: .url),
              let payload = Base64.decode(parts[1], alphabet: .url),
              let signature = Base64.decode(parts[2], alphabet: .url),
              let header = try? JSONDecoder().decode(AlgorithmHeader.self, from: Data(headerBytes)),
              header.alg == algorithm
        else { throw .malformedToken }
        let signingInput = Array(token.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count))
        guard verify(signature, signingInput) else { throw .badSignature }
        return payload
    }

    private struct AlgorithmHeader: Decodable {
        var alg: String
    }
}

/// A JWT's header: `{"alg": …, "typ": "JWT"}` for VAPID, `{"alg": "ES256", "kid": …}` for APNs, both and `kid`
/// for Google's grant. A nil field is left out of the JSON.
struct JWTHeader: Codable {
    var alg: String
    var kid: String? = nil
    var typ: String? = nil
}
