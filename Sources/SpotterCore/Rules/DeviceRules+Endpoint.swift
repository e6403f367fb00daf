import SpotterProtocol

extension DeviceRules {
    /// A Web Push endpoint the server will POST to: `https://` (RFC 8030 §8: the push service must be reached over
    /// TLS), at most 2,048 bytes of printable ASCII, a host named by DNS with at least two labels, an optional port,
    /// no user part (`https://push.example@elsewhere/` hides its real host) and no fragment. Addresses, `localhost`
    /// and single-label names are refused: push services are public named hosts, and an address would let a client
    /// aim the server's requests at its own network. (What a name resolves to is for the sender to check.)
    ///
    /// With `allowLoopbackHTTP` (`--development`, for tests with a local receiver): also `http://` on 127.0.0.1,
    /// [::1] or localhost, and `https://` on any host the URL names. Answers the endpoint as given.
    static func endpoint(_ raw: String, allowLoopbackHTTP: Bool) throws(APIError) -> String {
        let failure = APIError(.invalidPushEndpoint, field: "subscription.endpoint")
        guard let url = EndpointURL(raw) else { throw failure }
        switch url.secure {
        case true:
            guard allowLoopbackHTTP || url.host == .name else { throw failure }
        case false:
            guard allowLoopbackHTTP, url.host == .loopback else { throw failure }
        }
        return raw
    }
}

/// The parts of an endpoint URL the rules look at: its scheme and what its host is.
struct EndpointURL {
    enum Host: Equatable {
        /// A DNS name of two labels or more.
        case name
        /// 127.0.0.1, [::1] or localhost.
        case loopback
        /// Any other address, or a single-label name.
        case other
    }

    /// `https` rather than `http`.
    let secure: Bool
    let host: Host

    /// Nil for anything but `http(s)://host[:port][/path][?query]` within the bounds above.
    init?(_ raw: String) {
        let bytes = Array(raw.utf8)
        guard !bytes.isEmpty, bytes.count <= DeviceRules.maxEndpointBytes, bytes.allSatisfy(DeviceRules.isVisibleASCII),
              !bytes.contains(UInt8(ascii: "#")) else { return nil }
        guard let separator = raw.range(of: "://") else { return nil }
        switch raw[..<separator.lowerBound].lowercased() {
        case "https": secure = true
        case "http": secure = false
        default: return nil
        }
        let rest = raw[separator.upperBound...]
        let authority = rest.prefix { $0 != "/" && $0 != "?" }
        guard !authority.contains("@") else { return nil }
        // The host, then `:port` if any; an IPv6 address is in brackets.
        var hostText = authority
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            hostText = authority[...close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { return nil }
                portText = after.dropFirst()
            }
        } else if let colon = authority.lastIndex(of: ":") {
            hostText = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        }
        if let portText {
            guard (1...5).contains(portText.count), portText.allSatisfy(\.isASCIIDigit),
                  let port = Int(portText), (1...65535).contains(port) else { return nil }
        }
        guard let host = Self.kind(of: hostText) else { return nil }
        self.host = host
    }

    private static func kind(of host: Substring) -> Host? {
        let lower = host.lowercased()
        if lower == "127.0.0.1" || lower == "[::1]" || lower == "localhost" { return .loopback }
        if host.hasPrefix("[") {
            let inside = host.dropFirst().dropLast()
            guard !inside.isEmpty, inside.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else { return nil }
            return .other
        }
        let labels = host.split(separator: ".", omittingEmptySubsequences: false)
        guard labels.allSatisfy({ label in
            (1...63).contains(label.utf8.count) && label.utf8.allSatisfy { DeviceRules.isAlphanumeric($0) || $0 == UInt8(ascii: "-") }
        }) else { return nil }
        // All digits and dots is an IPv4 address (a top-level domain is never all digits).
        if labels.last!.allSatisfy(\.isASCIIDigit) || labels.count < 2 { return .other }
        return .name
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
