import COpenSSL

/// HMAC-SHA256 (RFC 2104) under one fixed key, with the key's two padded blocks hashed once.
///
/// `Digest.hmacSHA256` asks OpenSSL's one-shot `HMAC`, which looks the algorithm up, allocates a context and
/// hashes the two key blocks on every call: 27,000 instructions of a connect's token check. Here the SHA-256
/// states after `key ⊕ ipad` and `key ⊕ opad` are kept, and each MAC copies them and hashes the message and
/// the inner digest only. The same bytes as `Digest.hmacSHA256` for every key and message.
///
/// Thread-safe: the two kept states are only read (copied) after `init`; each call works on its own copy.
public final class HMACSHA256Key: @unchecked Sendable {
    private let inner: OpaquePointer
    private let outer: OpaquePointer

    public init(_ key: [UInt8]) {
        // RFC 2104 §2: a key longer than the block is hashed first; then zero-padded to the 64-byte block.
        var block = key.count > 64 ? Digest.sha256(key) : key
        block += [UInt8](repeating: 0, count: 64 - block.count)
        inner = Self.state(after: block.map { $0 ^ 0x36 })
        outer = Self.state(after: block.map { $0 ^ 0x5c })
    }

    deinit {
        EVP_MD_CTX_free(inner)
        EVP_MD_CTX_free(outer)
    }

    private static func state(after block: [UInt8]) -> OpaquePointer {
        guard let context = EVP_MD_CTX_new() else { preconditionFailure("OpenSSL EVP_MD_CTX_new failed") }
        let ok = block.withUnsafeBytes { bytes in
            EVP_DigestInit_ex(context, EVP_sha256(), nil) == 1 && EVP_DigestUpdate(context, bytes.baseAddress, bytes.count) == 1
        }
        precondition(ok, "OpenSSL SHA-256 failed")
        return context
    }

    /// The 32-byte MAC of `message`.
    public func mac(_ message: UnsafeRawBufferPointer) -> [UInt8] {
        guard let context = EVP_MD_CTX_new() else { preconditionFailure("OpenSSL EVP_MD_CTX_new failed") }
        defer { EVP_MD_CTX_free(context) }
        var digest = [UInt8](repeating: 0, count: Digest.sha256Length)
        var length: UInt32 = 0
        let ok = digest.withUnsafeMutableBufferPointer { out in
            guard EVP_MD_CTX_copy_ex(context, inner) == 1,
                  message.isEmpty || EVP_DigestUpdate(context, message.baseAddress, message.count) == 1,
                  EVP_DigestFinal_ex(context, out.baseAddress, &length) == 1, length == UInt32(Digest.sha256Length),
                  EVP_MD_CTX_copy_ex(context, outer) == 1,
                  EVP_DigestUpdate(context, out.baseAddress, out.count) == 1
            else { return false }
            return EVP_DigestFinal_ex(context, out.baseAddress, &length) == 1
        }
        precondition(ok && length == UInt32(Digest.sha256Length), "OpenSSL HMAC-SHA256 failed")
        return digest
    }

    public func mac(_ message: [UInt8]) -> [UInt8] {
        message.withUnsafeBytes { mac($0) }
    }
}
