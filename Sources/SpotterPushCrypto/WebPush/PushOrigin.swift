/// The origin of a push endpoint (RFC 6454 §6.2): `scheme "://" host [ ":" port ]`, lower-case, without a default
/// port. VAPID's `aud` claim is the origin of the push resource (RFC 8292 §2), so a token serves every endpoint of
/// one push service.
public enum PushOrigin {
    /// The origin of `endpoint`, an `https://` (or, for a local stand-in, `http://`) URL. Throws
    /// `.invalidEndpoint` for another scheme, a missing or malformed host, user information (`user@`), or a port
    /// that is not 1–65535.
    public static func of(endpoint: String) throws(PushCryptoError) -> String {
        guard let colon = endpoint.firstIndex(of: ":"), endpoint[colon...].hasPrefix("://") else { throw .invalidEndpoint }
        let scheme = endpoint[..<colon].lowercased()
        let defaultPort: Int
        switch scheme {
        case "https": defaultPort = 443
        case "http": defaultPort = 80
        default: throw .invalidEndpoint
        }
        let rest = endpoint[colon...].dropFirst(3)
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        let (host, portText) = try split(authority)
        var origin = scheme + "://" + host
        if let portText {
            guard !portText.isEmpty, portText.utf8.count <= 5, portText.allSatisfy({ $0.isASCIIDigit }),
                  let port = Int(portText), (1...65535).contains(port)
            else { throw .invalidEndpoint }
            if port != defaultPort { origin += ":\(port)" }
        }
        return origin
    }

    /// The lower-cased host (a bracketed IPv6 literal kept in its brackets) and the port text after its colon.
    private static func split(_ authority: Substring) throws(PushCryptoError) -> (String, Substring?) {
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw .invalidEndpoint }
            let literal = authority[authority.index(after: authority.startIndex)..<close]
            guard !literal.isEmpty, literal.allSatisfy({ ($0.isASCII && $0.isHexDigit) || $0 == ":" || $0 == "." }) else {
                throw .invalidEndpoint
            }
            let after = authority[authority.index(after: close)...]
            if after.isEmpty { return ("[" + literal.lowercased() + "]", nil) }
            guard after.first == ":" else { throw .invalidEndpoint }
            return ("[" + literal.lowercased() + "]", after.dropFirst())
        }
        let colon = authority.firstIndex(of: ":")
        let host = authority[..<(colon ?? authority.endIndex)]
        guard !host.isEmpty, host.allSatisfy({ $0.isASCIIAlphanumeric || $0 == "." || $0 == "-" || $0 == "_" }) else {
            throw .invalidEndpoint
        }
        return (host.lowercased(), colon.map { authority[authority.index(after: $0)...] })
    }
}

extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
    var isASCIIAlphanumeric: Bool { isASCII && (isLetter || isNumber) }
}
