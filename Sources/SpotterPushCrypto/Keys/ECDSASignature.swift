import COpenSSL

/// ECDSA P-256 signatures between OpenSSL's DER (`SEQUENCE { INTEGER r, INTEGER s }`, 70–72 bytes) and JOSE's
/// fixed form (`r || s`, each left-padded to 32 bytes; RFC 7518 §3.4). JWT verifiers reject DER, and a JOSE
/// signature must be turned back into DER for OpenSSL to check it.
enum ECDSASignature {
    static let componentBytes = 32

    /// `r || s` from a DER signature; nil if it is not a DER pair of integers that fit in 32 bytes each.
    static func jose(fromDER der: [UInt8]) -> [UInt8]? {
        defer { ERR_clear_error() }
        let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_ECDSA_SIG(nil, &cursor, buffer.count)
        }
        guard let parsed else { return nil }
        defer { ECDSA_SIG_free(parsed) }
        var out = [UInt8](repeating: 0, count: 2 * componentBytes)
        let ok = out.withUnsafeMutableBufferPointer { buffer in
            BN_bn2binpad(ECDSA_SIG_get0_r(parsed), buffer.baseAddress, Int32(componentBytes)) == Int32(componentBytes)
                && BN_bn2binpad(ECDSA_SIG_get0_s(parsed), buffer.baseAddress! + componentBytes, Int32(componentBytes))
                    == Int32(componentBytes)
        }
        return ok ? out : nil
    }

    /// The DER signature for a JOSE `r || s`; nil unless `jose` is exactly 64 bytes.
    static func der(fromJOSE jose: [UInt8]) -> [UInt8]? {
        guard jose.count == 2 * componentBytes else { return nil }
        defer { ERR_clear_error() }
        guard let signature = ECDSA_SIG_new() else { return nil }
        defer { ECDSA_SIG_free(signature) }
        let (r, s) = jose.withUnsafeBufferPointer { buffer in
            (BN_bin2bn(buffer.baseAddress, Int32(componentBytes), nil),
             BN_bin2bn(buffer.baseAddress! + componentBytes, Int32(componentBytes), nil))
        }
        guard let r, let s else {
            BN_free(r)
            BN_free(s)
            return nil
        }
        guard ECDSA_SIG_set0(signature, r, s) == 1 else {
            BN_free(r)
            BN_free(s)
            return nil
        }
        let length = i2d_ECDSA_SIG(signature, nil)
        guard length > 0 else { return nil }
        var der = [UInt8](repeating: 0, count: Int(length))
        let written = der.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
            return i2d_ECDSA_SIG(signature, &cursor)
        }
        return written == length ? der : nil
    }
}
