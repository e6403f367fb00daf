import WebSocket

extension ServerConfig {
    /// Sets `trustedProxies` from `--trusted-proxy` values (CIDR blocks or single addresses, IPv4 or IPv6).
    /// Throws the first value that is not one, saying why.
    public mutating func trustProxies(_ values: [String]) throws(AddressRange.ParseError) {
        var ranges: [AddressRange] = []
        for value in values { ranges.append(try AddressRange(parsing: value)) }
        trustedProxies = TrustedProxies(ranges)
    }

    /// The trusted blocks as given back in their canonical form ("10.0.0.0/8"), for the start-up log.
    public var trustedProxyDescriptions: [String] { trustedProxies.ranges.map(\.description) }
}
