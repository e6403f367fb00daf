import COpenSSL

/// P-256 (secp256r1) public keys, checked by OpenSSL.
public enum P256 {
    /// Bytes of an uncompressed point (SEC 1 §2.3.3): 0x04, then x and y, 32 bytes each.
    public static let uncompressedPointLength = 65

    /// Whether `bytes` is an uncompressed P-256 point that lies on the curve: a public key a Web Push message can be
    /// encrypted to (RFC 8291 §3.1, a browser's `p256dh`). Sixty-five bytes that start with 0x04 but are not a point
    /// (a typo, a key of another curve, random bytes) are refused here rather than at the first push.
    /// Pure and thread-safe.
    public static func isPublicKey(_ bytes: [UInt8]) -> Bool {
        guard bytes.count == uncompressedPointLength, bytes.first == 0x04 else { return false }
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else { return false }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_fromdata_init(context) == 1 else { return false }
        var key: OpaquePointer?
        // OSSL_PARAM keeps the pointers it is given: static strings, and the bytes held for the whole call.
        let imported = bytes.withUnsafeBufferPointer { point -> Int32 in
            var params = [
                OSSL_PARAM_construct_utf8_string(cString(groupKey), UnsafeMutablePointer(mutating: cString(groupName)), 0),
                OSSL_PARAM_construct_octet_string(cString(publicKeyKey), UnsafeMutableRawPointer(mutating: point.baseAddress),
                                                  point.count),
                OSSL_PARAM_construct_end(),
            ]
            return EVP_PKEY_fromdata(context, &key, selectPublicKey, &params)
        }
        guard imported == 1, let key else { return false }
        defer { EVP_PKEY_free(key) }
        // The import already refuses a point off the curve (a flipped bit of y fails there); the public-key check is
        // OpenSSL's documented validation, kept as the second look.
        guard let check = EVP_PKEY_CTX_new_from_pkey(nil, key, nil) else { return false }
        defer { EVP_PKEY_CTX_free(check) }
        return EVP_PKEY_public_check(check) == 1
    }

    /// `EVP_PKEY_PUBLIC_KEY` (a macro Swift does not import): the public key with its domain and other parameters.
    private static let selectPublicKey = OSSL_KEYMGMT_SELECT_PUBLIC_KEY | OSSL_KEYMGMT_SELECT_DOMAIN_PARAMETERS
        | OSSL_KEYMGMT_SELECT_OTHER_PARAMETERS
    private static let groupKey: StaticString = "group"
    private static let groupName: StaticString = "P-256"
    private static let publicKeyKey: StaticString = "pub"

    private static func cString(_ text: StaticString) -> UnsafePointer<CChar> {
        UnsafeRawPointer(text.utf8Start).assumingMemoryBound(to: CChar.self)
    }
}
