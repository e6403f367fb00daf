/// Base64 (RFC 4648) in the standard (§4) or URL-safe (§5) alphabet, unpadded or padded: the one base64 of
/// the server (tokens and password hashes use it unpadded, the WebSocket handshake padded).
///
/// Hand-written because tokens and password hashes need exactly this: no line breaks, and a
/// strict decoder that rejects anything a canonical encoder would not have produced (stray
/// characters, wrong padding, non-zero trailing bits), so one value has exactly one encoding and
/// a flipped unused bit cannot slip through.
public enum Base64 {
    public enum Alphabet: Sendable { case standard, url }

    private static let standardTable = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let urlTable = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// Encodes `bytes`, with `=` padding to a multiple of four characters when `padded`.
    public static func encode(_ bytes: [UInt8], alphabet: Alphabet, padded: Bool = false) -> String {
        let table = alphabet == .url ? urlTable : standardTable
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count * 4 + 2) / 3)
        var index = 0
        while index + 3 <= bytes.count {
            let chunk = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
            out.append(table[Int(chunk >> 18 & 0x3F)])
            out.append(table[Int(chunk >> 12 & 0x3F)])
            out.append(table[Int(chunk >> 6 & 0x3F)])
            out.append(table[Int(chunk & 0x3F)])
            index += 3
        }
        switch bytes.count - index {
        case 1:
            let chunk = UInt32(bytes[index]) << 16
            out.append(table[Int(chunk >> 18 & 0x3F)])
            out.append(table[Int(chunk >> 12 & 0x3F)])
        case 2:
            let chunk = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8
            out.append(table[Int(chunk >> 18 & 0x3F)])
            out.append(table[Int(chunk >> 12 & 0x3F)])
            out.append(table[Int(chunk >> 6 & 0x3F)])
        default:
            break
        }
        if padded {
            while out.count % 4 != 0 { out.append(UInt8(ascii: "=")) }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes base64 (padded exactly as `encode` pads when `padded`, else unpadded); nil for any character
    /// outside the alphabet, an impossible length (4k + 1), missing or extra padding, or non-zero unused
    /// trailing bits.
    public static func decode(_ text: Substring, alphabet: Alphabet, padded: Bool = false) -> [UInt8]? {
        // A String's bytes in place (every native string is contiguous); copying them into an array first was
        // half of a decode on the connect path (two token parts and the WebSocket key per connect).
        if let decoded = text.utf8.withContiguousStorageIfAvailable({ decode(bytes: $0, alphabet: alphabet, padded: padded) }) {
            return decoded
        }
        return Array(text.utf8).withUnsafeBufferPointer { decode(bytes: $0, alphabet: alphabet, padded: padded) }
    }

    /// `decode` of UTF-8 bytes.
    public static func decode(bytes input: UnsafeBufferPointer<UInt8>, alphabet: Alphabet, padded: Bool = false) -> [UInt8]? {
        var count = input.count
        if padded {
            guard count % 4 == 0 else { return nil }
            var pads = 0
            while pads < 2, count > 0, input[count - 1] == UInt8(ascii: "=") {
                count -= 1
                pads += 1
            }
            // The padding a canonical encoder writes for what is left: 2 characters → "==", 3 → "=".
            guard pads == (4 - count % 4) % 4 else { return nil }
        }
        if count % 4 == 1 { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for index in 0..<count {
            guard let value = sextet(input[index], alphabet: alphabet) else { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
                accumulator &= (1 << UInt32(bits)) - 1
            }
        }
        // Leftover bits (2 or 4) must be zero in a canonical encoding.
        if accumulator != 0 { return nil }
        return out
    }

    public static func decode(_ text: String, alphabet: Alphabet, padded: Bool = false) -> [UInt8]? {
        decode(text[...], alphabet: alphabet, padded: padded)
    }

    private static func sextet(_ character: UInt8, alphabet: Alphabet) -> UInt8? {
        switch character {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): return character - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): return character - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return character - UInt8(ascii: "0") + 52
        case UInt8(ascii: "+") where alphabet == .standard: return 62
        case UInt8(ascii: "/") where alphabet == .standard: return 63
        case UInt8(ascii: "-") where alphabet == .url: return 62
        case UInt8(ascii: "_") where alphabet == .url: return 63
        default: return nil
        }
    }
}
