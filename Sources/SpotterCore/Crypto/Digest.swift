import COpenSSL

/// SHA-256, HMAC-SHA256 and constant-time comparison, computed by OpenSSL.
///
/// Every function here is pure and thread-safe. OpenSSL failures on these
/// fixed-size, in-memory operations mean a broken installation, so they trap
/// rather than return a value a caller might mistake for a real digest.
public enum Digest {
    /// SHA-256 output length in bytes.
    public static let sha256Length = 32

    /// The 32-byte SHA-256 digest of `bytes` (FIPS 180-4).
    public static func sha256(_ bytes: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: sha256Length)
        var length: UInt32 = 0
        let ok = bytes.withUnsafeBufferPointer { input in
            digest.withUnsafeMutableBufferPointer { output in
                EVP_Digest(input.baseAddress, input.count, output.baseAddress, &length, EVP_sha256(), nil)
            }
        }
        precondition(ok == 1 && length == UInt32(sha256Length), "OpenSSL SHA-256 failed")
        return digest
    }

    /// Lower-case hex of SHA-256 of the UTF-8 bytes of `text` (64 characters): how refresh
    /// tokens and OTP codes are stored, so a database leak does not reveal usable secrets.
    public static func sha256Hex(_ text: String) -> String {
        hex(sha256(Array(text.utf8)))
    }

    /// HMAC-SHA256 (RFC 2104) of `message` under `key`; 32 bytes. Keys of any length are accepted.
    public static func hmacSHA256(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var mac = [UInt8](repeating: 0, count: sha256Length)
        var length: UInt32 = 0
        let result = key.withUnsafeBufferPointer { keyBuffer in
            message.withUnsafeBufferPointer { messageBuffer in
                mac.withUnsafeMutableBufferPointer { output in
                    HMAC(EVP_sha256(), keyBuffer.baseAddress, Int32(keyBuffer.count),
                         messageBuffer.baseAddress, messageBuffer.count, output.baseAddress, &length)
                }
            }
        }
        precondition(result != nil && length == UInt32(sha256Length), "OpenSSL HMAC-SHA256 failed")
        return mac
    }

    /// Whether `a` and `b` are equal, in time that depends only on their lengths (never on where
    /// they first differ). Different lengths are unequal at once: lengths are not secret here.
    public static func constantTimeEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        if a.isEmpty { return true }
        return a.withUnsafeBytes { left in
            b.withUnsafeBytes { right in
                CRYPTO_memcmp(left.baseAddress, right.baseAddress, left.count) == 0
            }
        }
    }

    /// Lower-case hexadecimal of `bytes`.
    public static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// SHA-256 fed in pieces, for files too large to hold whole (an upload streamed to disk). One thread at a time.
public final class SHA256Stream {
    private let context: OpaquePointer

    public init() {
        guard let context = EVP_MD_CTX_new() else { preconditionFailure("OpenSSL EVP_MD_CTX_new failed") }
        precondition(EVP_DigestInit_ex(context, EVP_sha256(), nil) == 1, "OpenSSL SHA-256 init failed")
        self.context = context
    }

    deinit { EVP_MD_CTX_free(context) }

    public func update(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0 else { return }
        precondition(EVP_DigestUpdate(context, bytes.baseAddress, bytes.count) == 1, "OpenSSL SHA-256 update failed")
    }

    /// The 32-byte digest of everything fed so far.
    public func finish() -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: Digest.sha256Length)
        var length: UInt32 = 0
        let ok = digest.withUnsafeMutableBufferPointer { EVP_DigestFinal_ex(context, $0.baseAddress, &length) }
        precondition(ok == 1 && length == UInt32(Digest.sha256Length), "OpenSSL SHA-256 failed")
        return digest
    }
}
