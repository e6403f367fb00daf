import COpenSSL

/// One OpenSSL key (`EVP_PKEY`), freed with its owner.
///
/// Immutable after creation: OpenSSL 3 lets several threads sign, verify and derive with one `EVP_PKEY` at once
/// (each operation makes its own context), which is why the key types holding a box are `Sendable`.
final class OpenSSLKey: @unchecked Sendable {
    let pointer: OpaquePointer

    init(taking pointer: OpaquePointer) { self.pointer = pointer }

    deinit { EVP_PKEY_free(pointer) }

    /// The private key in `pem` (PKCS#8 `PRIVATE KEY`, or the algorithm's own `EC PRIVATE KEY` / `RSA PRIVATE
    /// KEY`). An encrypted PEM is refused rather than prompting for a passphrase on the terminal, which is what
    /// OpenSSL's default callback would do.
    static func readPrivate(pem: String) throws(PushCryptoError) -> OpenSSLKey {
        defer { ERR_clear_error() }
        let bytes = Array(pem.utf8)
        let key: OpaquePointer? = bytes.withUnsafeBytes { raw in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
            defer { BIO_free(bio) }
            return PEM_read_bio_PrivateKey(bio, nil, { _, _, _, _ in 0 }, nil)
        }
        guard let key else { throw .unreadablePrivateKey }
        return OpenSSLKey(taking: key)
    }

    /// The key in DER `bytes`, read by `decode` (`d2i_PUBKEY`, `d2i_PrivateKey`, …); nil when OpenSSL refuses it.
    static func readDER(
        _ bytes: [UInt8],
        _ decode: (UnsafeMutablePointer<UnsafePointer<UInt8>?>, Int) -> OpaquePointer?
    ) -> OpenSSLKey? {
        defer { ERR_clear_error() }
        let key: OpaquePointer? = bytes.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return decode(&cursor, buffer.count)
        }
        return key.map(OpenSSLKey.init(taking:))
    }

    /// OpenSSL's base algorithm id (`EVP_PKEY_EC`, `EVP_PKEY_RSA`, …).
    var baseID: Int32 { EVP_PKEY_get_base_id(pointer) }

    /// The key's size in bits (256 for P-256, the modulus size for RSA).
    var bits: Int32 { EVP_PKEY_get_bits(pointer) }

    /// The EC curve's name as OpenSSL spells it ("prime256v1" for P-256); nil for other key types.
    var curveName: String? {
        var name = [CChar](repeating: 0, count: 64)
        var length = 0
        let ok = EVP_PKEY_get_utf8_string_param(pointer, "group", &name, name.count, &length)
        ERR_clear_error()
        guard ok == 1 else { return nil }
        return String(decoding: name.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// `EVP_DigestSign` with SHA-256: ECDSA (DER-encoded) for an EC key, RSASSA-PKCS1-v1_5 for an RSA key.
    func signSHA256(_ message: [UInt8]) -> [UInt8] {
        defer { ERR_clear_error() }
        guard let context = EVP_MD_CTX_new() else { preconditionFailure("OpenSSL EVP_MD_CTX_new failed") }
        defer { EVP_MD_CTX_free(context) }
        precondition(EVP_DigestSignInit(context, nil, EVP_sha256(), nil, pointer) == 1, "OpenSSL sign init failed")
        var length = 0
        let sized = message.withUnsafeBufferPointer { EVP_DigestSign(context, nil, &length, $0.baseAddress, $0.count) }
        precondition(sized == 1, "OpenSSL sign failed")
        var signature = [UInt8](repeating: 0, count: length)
        let ok = message.withUnsafeBufferPointer { input in
            signature.withUnsafeMutableBufferPointer { EVP_DigestSign(context, $0.baseAddress, &length, input.baseAddress, input.count) }
        }
        precondition(ok == 1, "OpenSSL sign failed")
        return Array(signature.prefix(length))
    }

    /// Whether `signature` (DER for ECDSA, raw for RSA) is this key's SHA-256 signature of `message`.
    func verifySHA256(_ signature: [UInt8], of message: [UInt8]) -> Bool {
        defer { ERR_clear_error() }
        guard let context = EVP_MD_CTX_new() else { preconditionFailure("OpenSSL EVP_MD_CTX_new failed") }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, pointer) == 1 else { return false }
        let result = signature.withUnsafeBufferPointer { sig in
            message.withUnsafeBufferPointer { EVP_DigestVerify(context, sig.baseAddress, sig.count, $0.baseAddress, $0.count) }
        }
        return result == 1
    }
}
