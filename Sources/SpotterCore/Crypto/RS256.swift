import COpenSSL

/// An RSA public key from a JSON Web Key's modulus and exponent (RFC 7518 §6.3.1), for RS256 signatures
/// (RSASSA-PKCS1-v1_5 with SHA-256, RFC 7518 §3.3): what Apple and Google sign their ID tokens with.
///
/// The key is imported once (OpenSSL 3's `EVP_PKEY_fromdata` from two BIGNUMs) and then only read: OpenSSL
/// allows one `EVP_PKEY` to verify on several threads at once, each with its own digest context.
public final class RSAPublicKey: @unchecked Sendable {
    /// Moduli accepted, in bits: below 2048 is breakable, above 8192 only makes a verify slow (Apple and
    /// Google publish 2048-bit keys).
    public static let modulusBits = 2048...8192

    private let key: OpaquePointer
    /// The modulus's length in bytes: an RS256 signature is exactly this long.
    public let modulusBytes: Int

    /// nil for a modulus outside `modulusBits` (leading zero bytes aside), an even modulus, an exponent that is
    /// not odd, not above 1 or longer than 4 bytes, or anything OpenSSL refuses.
    public init?(modulus: [UInt8], exponent: [UInt8]) {
        let n = Array(modulus.drop(while: { $0 == 0 }))
        let e = Array(exponent.drop(while: { $0 == 0 }))
        guard let first = n.first, let low = n.last, low & 1 == 1 else { return nil }
        let bits = (n.count - 1) * 8 + (8 - first.leadingZeroBitCount)
        guard Self.modulusBits.contains(bits) else { return nil }
        guard (1...4).contains(e.count), let eLow = e.last, eLow & 1 == 1, e.count > 1 || eLow > 1 else { return nil }
        guard let key = Self.importKey(n: n, e: e) else { return nil }
        self.key = key
        modulusBytes = n.count
    }

    deinit { EVP_PKEY_free(key) }

    /// Whether `signature` is this key's RS256 signature of `message`. A signature of the wrong length is
    /// refused before OpenSSL sees it. Thread-safe.
    public func verify(signature: [UInt8], of message: [UInt8]) -> Bool {
        guard signature.count == modulusBytes else { return false }
        guard let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, key) == 1 else { return false }
        // RSA's default padding in OpenSSL is PKCS #1 v1.5, which RS256 is.
        return signature.withUnsafeBufferPointer { signed in
            message.withUnsafeBufferPointer { data in
                EVP_DigestVerify(context, signed.baseAddress, signed.count, data.baseAddress, data.count) == 1
            }
        }
    }

    private static let modulusName: StaticString = "n"
    private static let exponentName: StaticString = "e"

    private static func cString(_ text: StaticString) -> UnsafePointer<CChar> {
        UnsafeRawPointer(text.utf8Start).assumingMemoryBound(to: CChar.self)
    }

    private static func importKey(n: [UInt8], e: [UInt8]) -> OpaquePointer? {
        guard let builder = OSSL_PARAM_BLD_new() else { return nil }
        defer { OSSL_PARAM_BLD_free(builder) }
        let modulus = n.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, Int32($0.count), nil) }
        let exponent = e.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, Int32($0.count), nil) }
        defer {
            BN_free(modulus)
            BN_free(exponent)
        }
        guard let modulus, let exponent,
              // The builder keeps the name pointers until `to_param`: static strings, not Swift's temporaries.
              OSSL_PARAM_BLD_push_BN(builder, cString(modulusName), modulus) == 1,
              OSSL_PARAM_BLD_push_BN(builder, cString(exponentName), exponent) == 1,
              let params = OSSL_PARAM_BLD_to_param(builder)
        else { return nil }
        defer { OSSL_PARAM_free(params) }
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "RSA", nil) else { return nil }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_fromdata_init(context) == 1 else { return nil }
        var key: OpaquePointer?
        // EVP_PKEY_PUBLIC_KEY is a macro Swift does not import: the public key with the other parameters.
        let selection = OSSL_KEYMGMT_SELECT_PUBLIC_KEY | OSSL_KEYMGMT_SELECT_DOMAIN_PARAMETERS
            | OSSL_KEYMGMT_SELECT_OTHER_PARAMETERS
        guard EVP_PKEY_fromdata(context, &key, selection, params) == 1 else { return nil }
        return key
    }
}
