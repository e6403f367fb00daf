/// The PROXY protocol's version 2 header (HAProxy's `send-proxy-v2`): the binary block a proxy writes before
/// anything else on a connection, naming the client it accepted. Pure: reads bytes, says what they are.
///
/// Only the address matters here: a PROXY command over TCP (IPv4 or IPv6) gives the client's address; LOCAL (the
/// proxy's own health check) and an address family with no IP address (UNSPEC, UNIX) leave the connection's own
/// peer. TLVs after the addresses are skipped. Version 1 (the text form, `PROXY TCP4 …`) is not read.
public enum ProxyHeader {
    /// The 12 bytes every version 2 header starts with.
    public static let signature: [UInt8] = [0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A]
    /// The largest address block (with its TLVs) taken, in bytes; the format allows 65535. HAProxy's own headers,
    /// TLVs for TLS and a unique id included, stay well under it.
    public static let maxPayloadBytes = 1024

    public enum Parsed: Equatable, Sendable {
        /// The bytes so far are a header's beginning: read more.
        case needMore
        /// The connection does not start with a version 2 header (at least one byte differs from the signature).
        case absent
        /// A whole header of `length` bytes; `source` is the client's address, nil when the header names none
        /// (LOCAL, UNSPEC, UNIX).
        case header(source: IPAddress?, length: Int)
        /// A header that cannot be read: the connection must close.
        case malformed(String)
    }

    public static func parse(_ bytes: some RandomAccessCollection<UInt8>) -> Parsed {
        let bytes = Array(bytes.prefix(16 + maxPayloadBytes))  // never more than one header's worth
        for (index, byte) in bytes.prefix(signature.count).enumerated() where byte != signature[index] { return .absent }
        guard bytes.count >= 16 else { return .needMore }
        let version = bytes[12] >> 4, command = bytes[12] & 0x0F
        guard version == 2 else { return .malformed("version \(version)") }
        guard command <= 1 else { return .malformed("command \(command)") }
        let family = bytes[13] >> 4, transport = bytes[13] & 0x0F
        guard family <= 3 else { return .malformed("address family \(family)") }
        guard transport <= 2 else { return .malformed("transport \(transport)") }
        let payload = Int(bytes[14]) << 8 | Int(bytes[15])
        guard payload <= maxPayloadBytes else { return .malformed("length \(payload) over \(maxPayloadBytes)") }
        guard bytes.count >= 16 + payload else { return .needMore }
        let length = 16 + payload
        // LOCAL: the proxy speaking for itself; whatever address block it sent is skipped.
        guard command == 1 else { return .header(source: nil, length: length) }
        switch family {
        case 1, 2:
            guard transport == 1 else { return .malformed("not over a stream (transport \(transport))") }
            let size = family == 1 ? 4 : 16
            // Source and destination addresses, then the two ports.
            guard payload >= 2 * size + 4 else { return .malformed("address block of \(payload) bytes is short") }
            return .header(source: IPAddress(bytes: bytes[16..<(16 + size)]), length: length)
        default:
            return .header(source: nil, length: length)  // UNSPEC or UNIX: no IP address to take
        }
    }

    /// A header naming `source` (test clients and tools; the destination is written as the unspecified address).
    public static func encode(source: IPAddress, port: UInt16 = 0, local: Bool = false, extra: [UInt8] = []) -> [UInt8] {
        let size = source.bytes.count
        var out = signature
        out.append(local ? 0x20 : 0x21)
        out.append(size == 4 ? 0x11 : 0x21)
        let payload = 2 * size + 4 + extra.count
        out += [UInt8(truncatingIfNeeded: payload >> 8), UInt8(truncatingIfNeeded: payload)]
        out += source.bytes + [UInt8](repeating: 0, count: size)
        out += [UInt8(truncatingIfNeeded: port >> 8), UInt8(truncatingIfNeeded: port), 0, 80]
        return out + extra
    }
}

/// `X-Forwarded-For` as a trusted proxy writes it: each hop appends the address it received from. Read from the
/// right, the first address not itself a trusted proxy is the client; what lies left of it was written by the
/// client and is not believed.
public enum ForwardedFor {
    /// Only the last this many bytes of the header's values are read (the entries a client can forge are on the left).
    public static let maxBytes = 2048
    /// And at most this many entries, from the right.
    public static let maxEntries = 32

    /// The client's address from every `X-Forwarded-For` value, in arrival order (several fields are one list).
    /// Entries that are not addresses are skipped. When every entry is a trusted proxy, the leftmost one; nil
    /// when there is no address at all.
    public static func client(_ values: [String], trusted: TrustedProxies) -> IPAddress? {
        var joined = values.joined(separator: ",").utf8[...]
        if joined.count > maxBytes { joined = joined.suffix(maxBytes) }  // a cut first entry is malformed: skipped
        var last: IPAddress?
        var seen = 0
        for entry in joined.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false).reversed() {
            seen += 1
            if seen > maxEntries { break }
            guard let address = IPAddress(Substring(entry).trimmingHTTPWhitespace()) else { continue }  // a cut character: U+FFFD, refused
            if !trusted.contains(address) { return address }
            last = address
        }
        return last
    }
}
