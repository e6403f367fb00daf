import Base64Codec
import Foundation

/// base64url (unpadded) for the tests' fixed values.
func b64(_ text: String) -> [UInt8] {
    guard let bytes = Base64.decode(Substring(text), alphabet: .url) else { preconditionFailure("not base64url: \(text)") }
    return bytes
}

func b64(_ bytes: [UInt8]) -> String { Base64.encode(bytes, alphabet: .url) }

/// The header and claims of a compact JWS as JSON objects, and its signature: what a verifier would look at.
struct DecodedJWT {
    let header: [String: Any]
    let claims: [String: Any]
    let signature: [UInt8]
    let signingInput: [UInt8]

    init(_ token: String) throws {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3,
              let header = Base64.decode(parts[0], alphabet: .url), let claims = Base64.decode(parts[1], alphabet: .url),
              let signature = Base64.decode(parts[2], alphabet: .url)
        else { throw Malformed() }
        self.header = try JSONSerialization.jsonObject(with: Data(header)) as? [String: Any] ?? [:]
        self.claims = try JSONSerialization.jsonObject(with: Data(claims)) as? [String: Any] ?? [:]
        self.signature = signature
        signingInput = Array("\(parts[0]).\(parts[1])".utf8)
    }

    struct Malformed: Error {}
}

/// `token` with its claims replaced by `claims` (the signature kept): a forgery every verifier must refuse.
func replacingClaims(of token: String, with claims: String) -> String {
    let parts = token.split(separator: ".")
    return "\(parts[0]).\(b64(Array(claims.utf8))).\(parts[2])"
}
