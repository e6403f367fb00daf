/// An incremental UTF-8 validator (RFC 3629) that fails fast.
///
/// Text messages arrive in pieces (TCP reads, WebSocket fragments), and a
/// code point may be split between two pieces. The validator keeps just
/// enough state to resume in the middle of a sequence, and reports an
/// error at the first byte that can no longer be part of valid UTF-8, so a
/// server can close with 1007 without waiting for the rest of the message
/// (RFC 6455 §8.1).
///
/// Rejected: overlong forms, surrogates (U+D800–U+DFFF), code points above
/// U+10FFFF, stray continuation bytes, and 0xC0, 0xC1, 0xF5–0xFF.
public struct UTF8Validator: Sendable, Equatable {
    /// Continuation bytes still expected for the current code point.
    private var pending: UInt8 = 0
    /// Allowed range for the next continuation byte. After most lead bytes
    /// this is 0x80...0xBF; E0, ED, F0 and F4 narrow it to rule out
    /// overlong forms, surrogates and values above U+10FFFF.
    private var low: UInt8 = 0x80
    private var high: UInt8 = 0xBF

    public init() {}

    /// True when the bytes seen so far end on a code-point boundary.
    public var isComplete: Bool { pending == 0 }

    /// Validates the next piece. Returns false at the first invalid byte;
    /// the validator must not be used again after that.
    public mutating func validate(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var index = 0
        let count = bytes.count
        guard let base = bytes.baseAddress else { return true }
        while index < count {
            if pending == 0 {
                // ASCII fast path: eight bytes at a time while no high bit is set.
                while index + 8 <= count {
                    let word = base.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                    if word & 0x8080_8080_8080_8080 != 0 { break }
                    index += 8
                }
                if index >= count { break }
            }
            let byte = base.load(fromByteOffset: index, as: UInt8.self)
            index += 1
            if pending == 0 {
                if !start(byte) { return false }
            } else {
                guard byte >= low, byte <= high else { return false }
                low = 0x80
                high = 0xBF
                pending -= 1
            }
        }
        return true
    }

    /// Convenience for arrays and other contiguous collections.
    public mutating func validate<C: Collection>(_ bytes: C) -> Bool where C.Element == UInt8 {
        if let result = bytes.withContiguousStorageIfAvailable({ validate(UnsafeRawBufferPointer($0)) }) {
            return result
        }
        return Array(bytes).withUnsafeBytes { validate($0) }
    }

    private mutating func start(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x00...0x7F:
            return true
        case 0xC2...0xDF:
            pending = 1
        case 0xE0:
            pending = 2; low = 0xA0
        case 0xED:
            pending = 2; high = 0x9F
        case 0xE1...0xEC, 0xEE...0xEF:
            pending = 2
        case 0xF0:
            pending = 3; low = 0x90
        case 0xF1...0xF3:
            pending = 3
        case 0xF4:
            pending = 3; high = 0x8F
        default:
            return false
        }
        return true
    }

    /// Validates a whole buffer in one go.
    public static func isValid<C: Collection>(_ bytes: C) -> Bool where C.Element == UInt8 {
        var validator = UTF8Validator()
        return validator.validate(bytes) && validator.isComplete
    }
}
