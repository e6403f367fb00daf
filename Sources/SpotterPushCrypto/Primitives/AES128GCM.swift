import COpenSSL

/// AES-128-GCM through OpenSSL's EVP interface, with a 96-bit nonce, a 128-bit tag appended to the ciphertext
/// and no associated data: the record cipher of RFC 8188.
enum AES128GCM {
    static let keyBytes = 16
    static let nonceBytes = 12
    static let tagBytes = 16

    /// `ciphertext || tag` for `plaintext`.
    static func seal(_ plaintext: [UInt8], key: [UInt8], nonce: [UInt8]) -> [UInt8] {
        precondition(key.count == keyBytes && nonce.count == nonceBytes, "AES-128-GCM takes a 16-byte key and a 12-byte nonce")
        defer { ERR_clear_error() }
        guard let context = EVP_CIPHER_CTX_new() else { preconditionFailure("OpenSSL EVP_CIPHER_CTX_new failed") }
        defer { EVP_CIPHER_CTX_free(context) }
        precondition(EVP_EncryptInit_ex(context, EVP_aes_128_gcm(), nil, key, nonce) == 1, "OpenSSL AES-GCM init failed")
        var output = [UInt8](repeating: 0, count: plaintext.count + tagBytes)
        var written: Int32 = 0
        var finished: Int32 = 0
        let ok = output.withUnsafeMutableBufferPointer { out in
            plaintext.withUnsafeBufferPointer { input in
                EVP_EncryptUpdate(context, out.baseAddress, &written, input.baseAddress, Int32(input.count)) == 1
                    && EVP_EncryptFinal_ex(context, out.baseAddress! + Int(written), &finished) == 1
                    && EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_GET_TAG, Int32(tagBytes), out.baseAddress! + plaintext.count) == 1
            }
        }
        precondition(ok && Int(written + finished) == plaintext.count, "OpenSSL AES-GCM encryption failed")
        return output
    }

    /// The plaintext of `sealed` (`ciphertext || tag`); nil when it is shorter than a tag or does not authenticate.
    static func open(_ sealed: ArraySlice<UInt8>, key: [UInt8], nonce: [UInt8]) -> [UInt8]? {
        precondition(key.count == keyBytes && nonce.count == nonceBytes, "AES-128-GCM takes a 16-byte key and a 12-byte nonce")
        guard sealed.count >= tagBytes else { return nil }
        defer { ERR_clear_error() }
        guard let context = EVP_CIPHER_CTX_new() else { preconditionFailure("OpenSSL EVP_CIPHER_CTX_new failed") }
        defer { EVP_CIPHER_CTX_free(context) }
        precondition(EVP_DecryptInit_ex(context, EVP_aes_128_gcm(), nil, key, nonce) == 1, "OpenSSL AES-GCM init failed")
        let ciphertextCount = sealed.count - tagBytes
        var tag = Array(sealed.suffix(tagBytes))
        var output = [UInt8](repeating: 0, count: max(ciphertextCount, 1))
        var written: Int32 = 0
        var finished: Int32 = 0
        let ok = output.withUnsafeMutableBufferPointer { out in
            sealed.withUnsafeBufferPointer { input in
                EVP_DecryptUpdate(context, out.baseAddress, &written, input.baseAddress, Int32(ciphertextCount)) == 1
                    && EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_TAG, Int32(tagBytes), &tag) == 1
                    && EVP_DecryptFinal_ex(context, out.baseAddress! + Int(written), &finished) == 1
            }
        }
        guard ok, Int(written + finished) == ciphertextCount else { return nil }
        return Array(output.prefix(ciphertextCount))
    }
}
