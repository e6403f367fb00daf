import FoundationEssentials

/// Reading a VAPID `Authorization` header as a push service does (RFC 8292 §3–4): the local push-service
/// stand-in and the tests use it to check what this server sends.
public enum VAPIDAuthorization {
    /// The claims and key of `header` (`vapid t=<JWT>, k=<base64url key>`), after checking that the JWT is ES256
    /// signed by `k`, that its `aud` is `endpoint`'s origin, and that `now < exp ≤ now + 24 h`.
    ///
    /// Throws `.malformedToken` for a header of another shape, `.invalidPublicKey` for a `k` that is not a P-256
    /// point, `.badSignature`, or `.claimsRejected` naming the claim that does not hold.
    public static func verify(
        _ header: String, endpoint: String, now: Int64
    ) throws(PushCryptoError) -> (claims: VAPIDClaims, key: P256PublicKey) {
        let (token, keyText) = try parameters(of: header)
        guard let keyBytes = WebPushSubscriptionKeys.decodeBase64URL(keyText) else { throw .invalidPublicKey }
        let key = try P256PublicKey(uncompressed: keyBytes)
        let payload = try CompactJWS.verify(token, algorithm: "ES256") { key.isValidES256Signature($0, for: $1) }
        guard let claims = try? JSONDecoder().decode(VAPIDClaims.self, from: Data(payload)) else { throw .malformedToken }
        guard claims.aud == (try PushOrigin.of(endpoint: endpoint)) else {
            throw .claimsRejected("aud is not the endpoint's origin")
        }
        guard claims.exp > now else { throw .claimsRejected("exp has passed") }
        guard claims.exp <= now + VAPIDKey.maxLifetimeSeconds else { throw .claimsRejected("exp is more than 24 hours ahead") }
        return (claims, key)
    }

    /// `t` and `k` of `vapid t=…, k=…` (in either order, values optionally quoted).
    private static func parameters(of header: String) throws(PushCryptoError) -> (token: String, key: String) {
        let credentials = header.drop { $0 == " " }
        guard credentials.prefix(6).lowercased() == "vapid " else { throw .malformedToken }
        var token: String?
        var key: String?
        for parameter in credentials.dropFirst(6).split(separator: ",") {
            let pair = trimmed(parameter)
            guard let equals = pair.firstIndex(of: "=") else { throw .malformedToken }
            var value = pair[pair.index(after: equals)...]
            if value.count >= 2, value.first == "\"", value.last == "\"" { value = value.dropFirst().dropLast() }
            switch pair[..<equals].lowercased() {
            case "t": token = String(value)
            case "k": key = String(value)
            default: continue
            }
        }
        guard let token, let key else { throw .malformedToken }
        return (token, key)
    }

    private static func trimmed(_ text: Substring) -> Substring {
        var text = text.drop { $0 == " " }
        while text.last == " " { text = text.dropLast() }
        return text
    }
}
