#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An IPv4 or IPv6 address as bytes (4 or 16). An IPv4-mapped IPv6 address (`::ffff:a.b.c.d`) is kept as the
/// IPv4 address it carries, so a dual-stack socket's peer matches IPv4 ranges and counts under one key.
public struct IPAddress: Sendable, Hashable, CustomStringConvertible {
    /// 4 bytes for IPv4, 16 for IPv6.
    public let bytes: [UInt8]

    public var isIPv4: Bool { bytes.count == 4 }

    /// From raw bytes (a PROXY header's), nil unless 4 or 16 of them.
    public init?(bytes: some Collection<UInt8>) {
        let raw = Array(bytes)
        switch raw.count {
        case 4: self.bytes = raw
        case 16: self.bytes = IPAddress.isMapped(raw) ? Array(raw[12...]) : raw
        default: return nil
        }
    }

    /// Parses the text form: dotted IPv4 or IPv6 (RFC 4291), an IPv6 address may come in brackets. No ports,
    /// zones, prefixes or surrounding blanks; anything else (empty, too long, a host name) is nil.
    public init?(_ text: some StringProtocol) {
        var text = Substring(text)
        if text.first == "[" {
            guard text.last == "]", text.count >= 2 else { return nil }
            text = text.dropFirst().dropLast()
            guard text.contains(":") else { return nil }
        }
        // The longest IPv6 text is 45 characters (with an embedded IPv4); refuse more before any copy.
        guard !text.isEmpty, text.utf8.count <= 45 else { return nil }
        for byte in text.utf8 {
            let allowed = (byte >= 0x30 && byte <= 0x39) || (byte >= 0x61 && byte <= 0x66) || (byte >= 0x41 && byte <= 0x46)
                || byte == 0x2E || byte == 0x3A
            guard allowed else { return nil }
        }
        let string = String(text)
        // On the bytes (all of them ASCII by now): a Character search here cost 2,000 instructions an accept.
        if text.utf8.contains(UInt8(ascii: ":")) {
            var storage = [UInt8](repeating: 0, count: 16)
            guard inet_pton(AF_INET6, string, &storage) == 1 else { return nil }
            self.init(bytes: storage)
        } else {
            var storage = [UInt8](repeating: 0, count: 4)
            // inet_pton takes only the four-part dotted decimal form (no "010", no "1.2.3").
            guard inet_pton(AF_INET, string, &storage) == 1 else { return nil }
            self.init(bytes: storage)
        }
    }

    /// "192.0.2.1", "2001:db8::1" (RFC 5952's compressed form).
    public var description: String {
        if isIPv4 {
            // Digits appended as bytes: mapping to four strings and joining them was a sixth of an accept.
            var text: [UInt8] = []
            text.reserveCapacity(15)
            for (index, byte) in bytes.enumerated() {
                if index > 0 { text.append(UInt8(ascii: ".")) }
                if byte >= 100 { text.append(UInt8(ascii: "0") + byte / 100) }
                if byte >= 10 { text.append(UInt8(ascii: "0") + byte / 10 % 10) }
                text.append(UInt8(ascii: "0") + byte % 10)
            }
            return String(decoding: text, as: UTF8.self)
        }
        var text = [CChar](repeating: 0, count: 64)
        _ = bytes.withUnsafeBytes { raw in inet_ntop(AF_INET6, raw.baseAddress, &text, socklen_t(text.count)) }
        return String(cString: text)
    }

    static func isMapped(_ raw: [UInt8]) -> Bool {
        raw.count == 16 && raw[0..<10].allSatisfy { $0 == 0 } && raw[10] == 0xFF && raw[11] == 0xFF
    }
}

/// A CIDR block, `10.0.0.0/8` or `2001:db8::/32`; a bare address is a block of one (/32, /128). An IPv4 block
/// holds IPv4 addresses (and IPv4-mapped IPv6 ones, which are read as IPv4); an IPv6 block holds IPv6 ones.
public struct AddressRange: Sendable, Hashable, CustomStringConvertible {
    public let network: IPAddress
    public let prefixLength: Int

    public enum ParseError: Error, Equatable, CustomStringConvertible {
        case notAnAddress(String)
        case badPrefix(String)
        case hostBitsSet(String, suggestion: String)

        public var description: String {
            switch self {
            case .notAnAddress(let text): "'\(text)' is not an IPv4 or IPv6 address or CIDR block"
            case .badPrefix(let text): "'\(text)' has a prefix length out of range (0–32 for IPv4, 0–128 for IPv6)"
            case .hostBitsSet(let text, let suggestion): "'\(text)' has bits set past its prefix; did you mean \(suggestion)?"
            }
        }
    }

    /// Parses `address[/prefix]`. Bits set past the prefix are refused (`10.0.0.1/8`: a typo more often than not).
    public init(parsing text: String) throws(ParseError) {
        let shown = String(text.prefix(80))
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard text.utf8.count <= 64, let address = IPAddress(parts[0]) else { throw .notAnAddress(shown) }
        let mappedText = parts[0].contains(":") && address.isIPv4  // ::ffff:a.b.c.d/len counts the mapped prefix
        var length = address.bytes.count * 8
        if parts.count == 2 {
            let digits = parts[1]
            guard !digits.isEmpty, digits.utf8.count <= 3, digits.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                  let given = Int(digits) else { throw .badPrefix(shown) }
            length = given
            if mappedText {
                guard (96...128).contains(length) else { throw .badPrefix(shown) }
                length -= 96
            }
        }
        guard (0...(address.bytes.count * 8)).contains(length) else { throw .badPrefix(shown) }
        let masked = AddressRange.mask(address.bytes, length)
        guard masked == address.bytes else {
            throw .hostBitsSet(shown, suggestion: "\(IPAddress(bytes: masked)!)/\(length)")
        }
        network = address
        prefixLength = length
    }

    public func contains(_ address: IPAddress) -> Bool {
        address.bytes.count == network.bytes.count && AddressRange.mask(address.bytes, prefixLength) == network.bytes
    }

    public var description: String { "\(network)/\(prefixLength)" }

    static func mask(_ bytes: [UInt8], _ length: Int) -> [UInt8] {
        var out = bytes
        for index in out.indices {
            let kept = min(8, max(0, length - index * 8))
            out[index] &= kept == 0 ? 0 : UInt8(truncatingIfNeeded: 0xFF << (8 - kept))
        }
        return out
    }
}

/// The peers whose word on the client's address is taken (`--trusted-proxy`). Empty: nobody's.
public struct TrustedProxies: Sendable, Equatable {
    public var ranges: [AddressRange]

    public init(_ ranges: [AddressRange] = []) { self.ranges = ranges }

    public var isEmpty: Bool { ranges.isEmpty }

    public func contains(_ address: IPAddress) -> Bool { ranges.contains { $0.contains(address) } }
}
