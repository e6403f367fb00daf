import Base64Codec
import COpenSSL

/// Cryptographically strong randomness from OpenSSL's CSPRNG (`RAND_bytes`).
///
/// Thread-safe. If OpenSSL cannot provide random bytes the process traps: handing out
/// predictable codes, tokens or salts would be worse than stopping.
public enum SecureRandom {
    /// `count` cryptographically strong random bytes (`count` ≥ 0).
    public static func bytes(_ count: Int) -> [UInt8] {
        precondition(count >= 0, "negative byte count")
        var buffer = [UInt8](repeating: 0, count: count)
        if count == 0 { return buffer }
        let ok = buffer.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress, Int32($0.count)) }
        precondition(ok == 1, "OpenSSL RAND_bytes failed")
        return buffer
    }

    /// A uniformly distributed 6-digit code, "000000"…"999999". Rejection sampling over
    /// 32-bit values below the largest multiple of 10⁶ removes modulo bias.
    public static func sixDigitCode() -> String {
        let range: UInt32 = 1_000_000
        let limit = UInt32.max - UInt32.max % range   // 4_294_000_000: a multiple of 10⁶
        while true {
            let raw = bytes(4)
            let value = UInt32(raw[0]) << 24 | UInt32(raw[1]) << 16 | UInt32(raw[2]) << 8 | UInt32(raw[3])
            if value < limit {
                let digits = String(value % range)
                return String(repeating: "0", count: 6 - digits.count) + digits
            }
        }
    }

    /// 32 random bytes (256 bits), base64url without padding: always 43 characters from
    /// `A–Z a–z 0–9 - _`. Used for refresh tokens.
    public static func token() -> String {
        Base64.encode(bytes(32), alphabet: .url)
    }

    /// A random UUID (RFC 9562 version 4): lower-case, hyphenated, 36 characters, with
    /// version nibble 4 and variant bits 10 (third group starts with 4, fourth with 8, 9, a or b).
    public static func uuid() -> String {
        var raw = bytes(16)
        raw[6] = raw[6] & 0x0F | 0x40
        raw[8] = raw[8] & 0x3F | 0x80
        let hex = Array(Digest.hex(raw))
        let groups = [0..<8, 8..<12, 12..<16, 16..<20, 20..<32]
        return groups.map { String(hex[$0]) }.joined(separator: "-")
    }
}
