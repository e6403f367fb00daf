import SpotterCore
import COpenSSL

/// HKDF with HMAC-SHA256 (RFC 5869), the key derivation of RFC 8291 and RFC 8188.
enum HKDF {
    /// `HKDF-Expand(HKDF-Extract(salt, ikm), info, length)`; `length` ≤ 255 × 32.
    static func sha256(salt: [UInt8], ikm: [UInt8], info: [UInt8], length: Int) -> [UInt8] {
        expand(prk: hmac(key: salt, message: ikm), info: info, length: length)
    }

    /// RFC 5869 §2.3: T(i) = HMAC(PRK, T(i-1) || info || i), concatenated and cut to `length`.
    static func expand(prk: [UInt8], info: [UInt8], length: Int) -> [UInt8] {
        precondition(length >= 0 && length <= 255 * 32, "HKDF-SHA256 output is at most 8160 bytes")
        var output: [UInt8] = []
        var block: [UInt8] = []
        var counter: UInt8 = 1
        while output.count < length {
            block = hmac(key: prk, message: block + info + [counter])
            output += block
            counter &+= 1
        }
        return Array(output.prefix(length))
    }

    /// HMAC-SHA256 of `message` under `key`: 32 bytes (the one HMAC, `Digest`'s).
    static func hmac(key: [UInt8], message: [UInt8]) -> [UInt8] { Digest.hmacSHA256(key: key, message: message) }
}
