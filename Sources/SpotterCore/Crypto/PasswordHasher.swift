import Base64Codec
import COpenSSL

/// Password hashing with scrypt (RFC 7914) through OpenSSL's `EVP_PBE_scrypt`.
///
/// Slow and memory-hard on purpose: with the defaults (N = 2^15, r = 8, p = 1) one hash
/// takes about 32 MiB and tens of milliseconds, so call it off the event-loop thread.
///
/// Encoded form (PHC-style, unpadded standard base64):
/// `$scrypt$ln=15,r=8,p=1$<16-byte salt>$<32-byte hash>`. Each encoded hash carries its
/// own parameters, so raising the defaults later keeps old hashes verifiable.
public struct PasswordHasher: Sendable {
    /// log2 of the CPU/memory cost N.
    public let logN: Int
    /// Block size.
    public let r: Int
    /// Parallelisation.
    public let p: Int

    static let saltLength = 16
    static let hashLength = 32
    /// The most memory one verification may use (`128·r·N`): bounds the cost of a hostile encoded hash.
    static let maxMemoryBytes: UInt64 = 256 << 20

    /// Defaults N = 2^15, r = 8, p = 1. Tests may pass a small `logN` for speed.
    /// Precondition: the parameters are within the limits `verify` accepts.
    public init(logN: Int = 15, r: Int = 8, p: Int = 1) {
        precondition(Self.parametersAcceptable(logN: logN, r: r, p: p), "scrypt parameters out of range")
        self.logN = logN
        self.r = r
        self.p = p
    }

    /// Hashes `password` (its UTF-8 bytes) with a fresh 16-byte random salt; returns the encoded form.
    public func hash(_ password: String) -> String {
        let salt = SecureRandom.bytes(Self.saltLength)
        guard let derived = Self.scrypt(password: Array(password.utf8), salt: salt, logN: logN, r: r, p: p,
                                        length: Self.hashLength) else {
            preconditionFailure("OpenSSL scrypt failed")
        }
        return "$scrypt$ln=\(logN),r=\(r),p=\(p)$" + Base64.encode(salt, alphabet: .standard) + "$"
            + Base64.encode(derived, alphabet: .standard)
    }

    /// Whether `password` matches `encoded`, using the parameters stored in `encoded` (not this
    /// hasher's). The final comparison is constant-time. Returns false for any malformed encoding,
    /// parameters outside the accepted limits, or salt/hash shorter than 8/16 bytes.
    public func verify(_ password: String, encoded: String) -> Bool {
        guard let parsed = Self.parse(encoded),
              let derived = Self.scrypt(password: Array(password.utf8), salt: parsed.salt, logN: parsed.logN,
                                        r: parsed.r, p: parsed.p, length: parsed.hash.count)
        else { return false }
        return Digest.constantTimeEquals(derived, parsed.hash)
    }

    /// Whether `encoded` was made with weaker parameters than this hasher's (worth re-hashing at sign-in).
    public func needsRehash(_ encoded: String) -> Bool {
        guard let parsed = Self.parse(encoded) else { return true }
        return parsed.logN < logN || parsed.r < r || parsed.p < p
    }

    struct Parsed: Equatable {
        var logN: Int, r: Int, p: Int
        var salt: [UInt8], hash: [UInt8]
    }

    /// Parses `$scrypt$ln=…,r=…,p=…$salt$hash`; nil if anything is off.
    static func parse(_ encoded: String) -> Parsed? {
        let parts = encoded.split(separator: "$", omittingEmptySubsequences: false)
        guard parts.count == 5, parts[0].isEmpty, parts[1] == "scrypt" else { return nil }
        let fields = parts[2].split(separator: ",", omittingEmptySubsequences: false)
        guard fields.count == 3,
              let logN = integer(fields[0], prefix: "ln="),
              let r = integer(fields[1], prefix: "r="),
              let p = integer(fields[2], prefix: "p="),
              parametersAcceptable(logN: logN, r: r, p: p),
              let salt = Base64.decode(parts[3], alphabet: .standard), salt.count >= 8, salt.count <= 64,
              let hash = Base64.decode(parts[4], alphabet: .standard), hash.count >= 16, hash.count <= 64
        else { return nil }
        return Parsed(logN: logN, r: r, p: p, salt: salt, hash: hash)
    }

    /// A small decimal after `prefix`: digits only, no sign, at most 4 digits.
    private static func integer(_ field: Substring, prefix: String) -> Int? {
        guard field.hasPrefix(prefix) else { return nil }
        let digits = field.dropFirst(prefix.count)
        guard !digits.isEmpty, digits.count <= 4, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int(digits)
    }

    static func parametersAcceptable(logN: Int, r: Int, p: Int) -> Bool {
        guard (1...24).contains(logN), (1...32).contains(r), (1...16).contains(p) else { return false }
        return UInt64(128 * r) << UInt64(logN) <= maxMemoryBytes
    }

    /// Raw scrypt (RFC 7914) with N = 2^logN; nil if OpenSSL refuses the parameters.
    static func scrypt(password: [UInt8], salt: [UInt8], logN: Int, r: Int, p: Int, length: Int) -> [UInt8]? {
        scrypt(password: password, salt: salt, n: UInt64(1) << UInt64(logN), r: UInt64(r), p: UInt64(p), length: length)
    }

    /// Raw scrypt (RFC 7914) with an explicit N (a power of two > 1); nil if OpenSSL refuses.
    static func scrypt(password: [UInt8], salt: [UInt8], n: UInt64, r: UInt64, p: UInt64, length: Int) -> [UInt8]? {
        guard length > 0 else { return nil }
        // OpenSSL needs 128·r·(N + 2) bytes for V plus 128·r·p for B; give it exactly that and some slack.
        let maxmem = 128 * r * (n + 2 + p) + (1 << 20)
        var key = [UInt8](repeating: 0, count: length)
        let ok = password.withUnsafeBufferPointer { passwordBuffer in
            salt.withUnsafeBufferPointer { saltBuffer in
                key.withUnsafeMutableBufferPointer { keyBuffer in
                    passwordBuffer.withMemoryRebound(to: CChar.self) { passwordChars in
                        EVP_PBE_scrypt(passwordChars.baseAddress, passwordChars.count,
                                       saltBuffer.baseAddress, saltBuffer.count,
                                       n, r, p, maxmem, keyBuffer.baseAddress, keyBuffer.count)
                    }
                }
            }
        }
        return ok == 1 ? key : nil
    }
}
