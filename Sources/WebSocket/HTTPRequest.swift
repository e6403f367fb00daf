/// Header fields in arrival order. Names compare case-insensitively.
public struct HTTPHeaders: Sendable, Equatable, Sequence {
    public private(set) var fields: [(name: String, value: String)] = []

    public init(_ fields: [(name: String, value: String)] = []) { self.fields = fields }

    public mutating func add(_ name: String, _ value: String) { fields.append((name, value)) }

    /// The first value of `name`, or nil.
    public subscript(_ name: String) -> String? {
        fields.first { $0.name.caseInsensitiveEquals(name) }?.value
    }

    /// Every value of `name`, in order.
    public func values(_ name: String) -> [String] {
        fields.filter { $0.name.caseInsensitiveEquals(name) }.map(\.value)
    }

    /// The comma-separated list elements of every `name` field, trimmed
    /// and lower-cased (RFC 9110 §5.6.1), e.g. `Connection: keep-alive, Upgrade`.
    public func tokens(_ name: String) -> [String] {
        values(name).flatMap { $0.split(separator: ",") }
            .map { $0.trimmingHTTPWhitespace().lowercased() }
            .filter { !$0.isEmpty }
    }

    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> { fields.makeIterator() }

    public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
        lhs.fields.elementsEqual(rhs.fields) { $0.name == $1.name && $0.value == $1.value }
    }
}

/// A parsed HTTP/1.x request.
public struct HTTPRequest: Sendable, Equatable {
    public var method: String
    /// The request target as sent, e.g. `/v1/ws?token=abc`.
    public var target: String
    public var versionMinor: Int
    public var headers: HTTPHeaders
    public var body: [UInt8]

    public init(method: String, target: String, versionMinor: Int = 1, headers: HTTPHeaders, body: [UInt8] = []) {
        self.method = method
        self.target = target
        self.versionMinor = versionMinor
        self.headers = headers
        self.body = body
    }

    /// The target without its query.
    public var path: Substring {
        queryMark.map { target[..<$0] } ?? target[...]
    }

    /// The query string after `?`, or nil.
    public var query: Substring? {
        queryMark.map { target[target.utf8.index(after: $0)...] }
    }

    /// Where `?` is, found on the bytes (a Character search walks grapheme clusters over the whole token).
    private var queryMark: String.Index? { target.utf8.firstIndex(of: UInt8(ascii: "?")) }

    /// The value of one query parameter (no percent-decoding beyond `%XX` and `+`).
    public func queryParameter(_ name: String) -> String? {
        guard let query else { return nil }
        // On UTF-8 bytes: splitting the String itself walks grapheme clusters, which showed in the connect
        // profile (the query carries a 200-character access token).
        let utf8 = query.utf8
        for pair in utf8.split(separator: UInt8(ascii: "&")) {
            let equals = pair.firstIndex(of: UInt8(ascii: "="))
            guard utf8[pair.startIndex..<(equals ?? pair.endIndex)].elementsEqual(name.utf8) else { continue }
            guard let equals else { return "" }
            return percentDecode(query[utf8.index(after: equals)..<pair.endIndex])
        }
        return nil
    }

    /// HTTP/1.1 keeps the connection unless told to close; HTTP/1.0 the reverse.
    public var keepAlive: Bool {
        let tokens = headers.tokens("Connection")
        if versionMinor >= 1 { return !tokens.contains("close") }
        return tokens.contains("keep-alive")
    }
}

func percentDecode(_ text: Substring) -> String {
    var bytes: [UInt8] = []
    var iterator = Array(text.utf8).makeIterator()
    while let byte = iterator.next() {
        switch byte {
        case UInt8(ascii: "+"): bytes.append(UInt8(ascii: " "))
        case UInt8(ascii: "%"):
            if let high = iterator.next(), let low = iterator.next(), let h = hexValue(high), let l = hexValue(low) {
                bytes.append(h << 4 | l)
            }
        default: bytes.append(byte)
        }
    }
    return String(decoding: bytes, as: UTF8.self)
}

private func hexValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
    default: return nil
    }
}

extension StringProtocol {
    /// ASCII case-insensitive equality, as HTTP field names and tokens compare (RFC 9110 §5.1); other bytes
    /// must be equal. Byte by byte: `lowercased()` allocated two strings per header looked at.
    func caseInsensitiveEquals(_ other: some StringProtocol) -> Bool {
        utf8.count == other.utf8.count && zip(utf8, other.utf8).allSatisfy { asciiLower($0) == asciiLower($1) }
    }

    func trimmingHTTPWhitespace() -> Substring {
        var slice = Substring(self)
        while let first = slice.first, first == " " || first == "\t" { slice.removeFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice.removeLast() }
        return slice
    }
}

private func asciiLower(_ byte: UInt8) -> UInt8 {
    (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte + 32 : byte
}
