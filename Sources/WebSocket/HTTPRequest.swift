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
        var values: [String] = []
        for field in fields where field.name.caseInsensitiveEquals(name) { values.append(field.value) }
        return values
    }

    /// The comma-separated list elements of every `name` field, trimmed
    /// and lower-cased (RFC 9110 §5.6.1), e.g. `Connection: keep-alive, Upgrade`.
    public func tokens(_ name: String) -> [String] {
        var tokens: [String] = []
        for field in fields where field.name.caseInsensitiveEquals(name) {
            // An ASCII field on its bytes (the handshake's `Sec-WebSocket-Protocol` on every connect); any other
            // the Unicode way, as `lowercased()` maps some non-ASCII characters to ASCII letters.
            var value = field.value
            let ascii = value.withUTF8 { bytes in
                guard !bytes.contains(where: { $0 >= 0x80 }) else { return false }
                forEachListElement(bytes) { element in
                    tokens.append(String(unsafeUninitializedCapacity: element.count) { out in
                        for index in 0..<element.count { out[index] = asciiLower(element[index]) }
                        return element.count
                    })
                }
                return true
            }
            if !ascii {
                tokens += field.value.split(separator: ",").map { $0.trimmingHTTPWhitespace().lowercased() }.filter { !$0.isEmpty }
            }
        }
        return tokens
    }

    /// Whether `tokens(name)` contains `token` (lower-case ASCII, not empty, no spaces or commas), without
    /// building the list: each field is scanned in place. A field with a non-ASCII byte goes the long way
    /// (`lowercased()` maps some non-ASCII characters to ASCII letters, e.g. the Kelvin sign to `k`).
    public func hasToken(_ name: String, _ token: StaticString) -> Bool {
        for field in fields where field.name.caseInsensitiveEquals(name) {
            var value = field.value
            let found: Bool? = value.withUTF8 { bytes in
                token.withUTF8Buffer { wanted in listContains(bytes, wanted) }
            }
            if let found {
                if found { return true }
            } else if tokens(name).contains(token.description) {
                return true
            }
        }
        return false
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
        guard let mark = queryMark else { return nil }
        // One pass over the target's bytes, no arrays: splitting the query into pairs and copying the value
        // into an array to decode it was a sixth of a connect's instructions (a 250-byte access token).
        let start = target.utf8.distance(from: target.utf8.startIndex, to: mark) + 1
        var target = target, name = name
        let found = target.withUTF8 { bytes in name.withUTF8 { key in findQueryValue(key, in: bytes, from: start) } }
        guard let found else { return nil }
        let utf8 = target.utf8
        let lower = utf8.index(utf8.startIndex, offsetBy: found.value.lowerBound)
        let upper = utf8.index(lower, offsetBy: found.value.count)
        // Without `%` or `+` the value is its own bytes (already valid UTF-8: they are a String's).
        return found.escaped ? percentDecode(target[lower..<upper]) : String(target[lower..<upper])
    }

    /// HTTP/1.1 keeps the connection unless told to close; HTTP/1.0 the reverse.
    public var keepAlive: Bool {
        if versionMinor >= 1 { return !headers.hasToken("Connection", "close") }
        return headers.hasToken("Connection", "keep-alive")
    }
}

/// Where the value of the first `name` pair of the query starting at `start` is (byte offsets into `bytes`),
/// and whether it holds `%` or `+`; nil when no pair has that name. Pairs are separated by `&` (empty ones
/// skipped); a pair without `=` is the name alone, with the empty value.
func findQueryValue(_ name: UnsafeBufferPointer<UInt8>, in bytes: UnsafeBufferPointer<UInt8>, from start: Int)
    -> (value: Range<Int>, escaped: Bool)? {
    var pairStart = start
    while pairStart <= bytes.count {
        var pairEnd = pairStart
        var equals = -1
        var escaped = false
        while pairEnd < bytes.count, bytes[pairEnd] != UInt8(ascii: "&") {
            let byte = bytes[pairEnd]
            if byte == UInt8(ascii: "="), equals < 0 {
                equals = pairEnd
            } else if equals >= 0, byte == UInt8(ascii: "%") || byte == UInt8(ascii: "+") {
                escaped = true
            }
            pairEnd += 1
        }
        if pairEnd > pairStart {
            let nameEnd = equals < 0 ? pairEnd : equals
            if nameEnd - pairStart == name.count, memcmpEqual(bytes, pairStart, name) {
                return equals < 0 ? (pairEnd..<pairEnd, false) : ((equals + 1)..<pairEnd, escaped)
            }
        }
        pairStart = pairEnd + 1
    }
    return nil
}

private func memcmpEqual(_ bytes: UnsafeBufferPointer<UInt8>, _ at: Int, _ other: UnsafeBufferPointer<UInt8>) -> Bool {
    for index in 0..<other.count where bytes[at + index] != other[index] { return false }
    return true
}

func percentDecode(_ text: Substring) -> String {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(text.utf8.count)
    var iterator = text.utf8.makeIterator()
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

extension String {
    /// `StringProtocol.caseInsensitiveEquals` for two strings, on their bytes in place (header lookups compare
    /// every field name of a request, 30 times per connect).
    func caseInsensitiveEquals(_ other: String) -> Bool {
        guard utf8.count == other.utf8.count else { return false }
        let same = utf8.withContiguousStorageIfAvailable { left in
            other.utf8.withContiguousStorageIfAvailable { right in
                for index in 0..<left.count where asciiLower(left[index]) != asciiLower(right[index]) { return false }
                return true
            }
        }
        if let inner = same, let result = inner { return result }
        return self[...].caseInsensitiveEquals(other[...])
    }
}

extension StringProtocol {
    /// ASCII case-insensitive equality, as HTTP field names and tokens compare (RFC 9110 §5.1); other bytes
    /// must be equal. Byte by byte: `lowercased()` allocated two strings per header looked at.
    func caseInsensitiveEquals(_ other: some StringProtocol) -> Bool {
        let left = utf8, right = other.utf8
        guard left.count == right.count else { return false }
        // Indices, not `zip`: the zipped iterator was a tenth of the upgrade's header lookups.
        var i = left.startIndex, j = right.startIndex
        while i != left.endIndex {
            guard asciiLower(left[i]) == asciiLower(right[j]) else { return false }
            left.formIndex(after: &i)
            right.formIndex(after: &j)
        }
        return true
    }

    func trimmingHTTPWhitespace() -> Substring {
        var slice = Substring(self)
        while let first = slice.first, first == " " || first == "\t" { slice.removeFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice.removeLast() }
        return slice
    }
}

/// Whether the comma-separated list `bytes` has an element equal to `wanted` once trimmed of spaces and tabs and
/// ASCII-lower-cased; nil when `bytes` has a non-ASCII byte (the caller then compares the Unicode way).
private func listContains(_ bytes: UnsafeBufferPointer<UInt8>, _ wanted: UnsafeBufferPointer<UInt8>) -> Bool? {
    var start = 0
    while start <= bytes.count {
        var end = start
        while end < bytes.count, bytes[end] != UInt8(ascii: ",") {
            if bytes[end] >= 0x80 { return nil }
            end += 1
        }
        var low = start, high = end
        while low < high, bytes[low] == UInt8(ascii: " ") || bytes[low] == UInt8(ascii: "\t") { low += 1 }
        while high > low, bytes[high - 1] == UInt8(ascii: " ") || bytes[high - 1] == UInt8(ascii: "\t") { high -= 1 }
        if high - low == wanted.count, (0..<wanted.count).allSatisfy({ asciiLower(bytes[low + $0]) == wanted[$0] }) {
            return true
        }
        start = end + 1
    }
    return false
}

/// Calls `body` with each non-empty element of the comma-separated list `bytes`, trimmed of spaces and tabs.
private func forEachListElement(_ bytes: UnsafeBufferPointer<UInt8>, _ body: (UnsafeBufferPointer<UInt8>) -> Void) {
    var start = 0
    while start <= bytes.count {
        var end = start
        while end < bytes.count, bytes[end] != UInt8(ascii: ",") { end += 1 }
        var low = start, high = end
        while low < high, bytes[low] == UInt8(ascii: " ") || bytes[low] == UInt8(ascii: "\t") { low += 1 }
        while high > low, bytes[high - 1] == UInt8(ascii: " ") || bytes[high - 1] == UInt8(ascii: "\t") { high -= 1 }
        if high > low { body(UnsafeBufferPointer(rebasing: bytes[low..<high])) }
        start = end + 1
    }
}

private func asciiLower(_ byte: UInt8) -> UInt8 {
    (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte + 32 : byte
}
