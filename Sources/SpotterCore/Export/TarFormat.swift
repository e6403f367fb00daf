/// POSIX ustar (IEEE Std 1003.1-1988 as POSIX.1-2001 keeps it), the parts a writer needs: a 512-byte header per
/// entry, the entry's bytes padded to a whole block, and two zero blocks at the end. Pure: it builds bytes and
/// touches no file, so the archive can be streamed a piece at a time by whoever holds the data (`ExportArchive`).
///
/// Only regular files are written. Names longer than 100 bytes are split at a `/` into the header's 155-byte
/// `prefix` field and its 100-byte `name` field; a name that cannot be split so is refused (the export keeps its
/// names short: thread ids and SHA-256 hex digests). Sizes are octal in the 11 digits ustar has (below 8 GiB).
public enum TarFormat {
    public static let blockSize = 512
    /// The largest size ustar's 11 octal digits hold: 8 GiB − 1.
    public static let maxEntryBytes: Int64 = 0o77777777777

    public enum Refusal: Error, Equatable, Sendable {
        /// Empty, not ASCII, with a NUL, absolute, with `..`, or too long to split into prefix and name.
        case badName(String)
        case tooLarge(Int64)
    }

    /// The header block of a regular file `name` of `size` bytes, modified at `modified` (Unix seconds), mode 0644.
    public static func header(name: String, size: Int64, modified: Int64) throws(Refusal) -> [UInt8] {
        guard size >= 0, size <= maxEntryBytes else { throw .tooLarge(size) }
        let (prefix, base) = try split(name)
        var block = [UInt8](repeating: 0, count: blockSize)
        put(Array(base.utf8), at: 0, width: 100, in: &block)
        put(octal(0o644, digits: 7), at: 100, width: 8, in: &block)  // mode
        put(octal(0, digits: 7), at: 108, width: 8, in: &block)  // uid
        put(octal(0, digits: 7), at: 116, width: 8, in: &block)  // gid
        put(octal(size, digits: 11), at: 124, width: 12, in: &block)
        put(octal(max(0, modified), digits: 11), at: 136, width: 12, in: &block)
        block[156] = UInt8(ascii: "0")  // typeflag: a regular file
        put(Array("ustar".utf8), at: 257, width: 6, in: &block)  // magic, NUL-terminated
        put(Array("00".utf8), at: 263, width: 2, in: &block)  // version
        put(Array(prefix.utf8), at: 345, width: 155, in: &block)
        // The checksum is the sum of the header's bytes with its own field read as eight spaces.
        for index in 148..<156 { block[index] = UInt8(ascii: " ") }
        let sum = block.reduce(0) { $0 + Int64($1) }
        put(octal(sum, digits: 6), at: 148, width: 6, in: &block)
        block[154] = 0  // six digits, NUL, and the space kept at 155
        return block
    }

    /// Zero bytes that bring an entry of `size` bytes to a whole number of blocks.
    public static func padding(after size: Int64) -> Int {
        let rest = Int(size % Int64(blockSize))
        return rest == 0 ? 0 : blockSize - rest
    }

    /// The end of an archive: two zero blocks.
    public static let end = [UInt8](repeating: 0, count: 2 * blockSize)

    /// `name` as ustar stores it: (prefix, name), the prefix empty when the name fits alone.
    static func split(_ name: String) throws(Refusal) -> (prefix: String, name: String) {
        let bytes = Array(name.utf8)
        guard !bytes.isEmpty, bytes.allSatisfy({ $0 > 0 && $0 < 0x80 }), bytes.first != UInt8(ascii: "/"),
              !name.split(separator: "/", omittingEmptySubsequences: false).contains(where: { $0 == ".." || $0.isEmpty })
        else { throw .badName(name) }
        if bytes.count <= 100 { return ("", name) }
        // The last `/` that leaves a name of at most 100 bytes and a prefix of at most 155.
        for index in bytes.indices.reversed() where bytes[index] == UInt8(ascii: "/") {
            let rest = bytes.count - index - 1
            if rest > 100 { break }
            if index <= 155 {
                return (String(decoding: bytes[..<index], as: UTF8.self), String(decoding: bytes[(index + 1)...], as: UTF8.self))
            }
        }
        throw .badName(name)
    }

    private static func octal(_ value: Int64, digits: Int) -> [UInt8] {
        let text = String(value, radix: 8)
        return Array((String(repeating: "0", count: max(0, digits - text.count)) + text).utf8)
    }

    private static func put(_ bytes: [UInt8], at offset: Int, width: Int, in block: inout [UInt8]) {
        precondition(bytes.count <= width, "a ustar field overflowed")  // the callers bound every field
        for (index, byte) in bytes.enumerated() { block[offset + index] = byte }
    }
}
