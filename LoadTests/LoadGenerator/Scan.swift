import LoadSupport
/// Reads the few fields the generator needs straight from a server frame's
/// bytes, without a JSON decoder: at tens of thousands of frames a second a
/// full decode would make the generator the bottleneck. Only for values the
/// generator controls or the server writes without escapes (ids, numbers,
/// our own ASCII texts).
struct Scan {
    let bytes: UnsafeBufferPointer<UInt8>

    /// Index just after `"key":` (first occurrence at or after `from`), or nil.
    func after(_ key: [UInt8], from: Int = 0) -> Int? {
        let n = bytes.count, k = key.count
        guard k > 0, n >= k else { return nil }
        var i = from
        let first = key[0]
        while i <= n - k {
            if bytes[i] == first {
                var j = 1
                while j < k && bytes[i + j] == key[j] { j += 1 }
                if j == k { return i + k }
            }
            i += 1
        }
        return nil
    }

    func int(_ key: [UInt8], from: Int = 0) -> Int64? {
        guard var i = after(key, from: from) else { return nil }
        var negative = false
        if i < bytes.count && bytes[i] == 45 { negative = true; i += 1 }
        var value: Int64 = 0
        var digits = 0
        while i < bytes.count, bytes[i] >= 48, bytes[i] <= 57 {
            value = value &* 10 &+ Int64(bytes[i] - 48)
            i += 1
            digits += 1
        }
        guard digits > 0 else { return nil }
        return negative ? -value : value
    }

    /// The raw contents of a string value (no unescaping), as a range.
    func stringRange(_ key: [UInt8], from: Int = 0) -> Range<Int>? {
        guard let start = after(key, from: from), start < bytes.count, bytes[start] == 34 else { return nil }
        var i = start + 1
        while i < bytes.count && bytes[i] != 34 {
            if bytes[i] == 92 { i += 1 }
            i += 1
        }
        guard i <= bytes.count else { return nil }
        return (start + 1)..<min(i, bytes.count)
    }

    func string(_ key: [UInt8], from: Int = 0) -> String? {
        stringRange(key, from: from).map { String(decoding: UnsafeBufferPointer(rebasing: bytes[$0]), as: UTF8.self) }
    }

    func hasPrefix(_ prefix: [UInt8]) -> Bool {
        guard bytes.count >= prefix.count else { return false }
        for i in 0..<prefix.count where bytes[i] != prefix[i] { return false }
        return true
    }

    /// Parses hex digits at `range.lowerBound + offset` (up to 16).
    func hex(at index: Int, count: Int) -> UInt64? {
        guard index >= 0, index + count <= bytes.count else { return nil }
        var value: UInt64 = 0
        for i in index..<(index + count) {
            let c = bytes[i]
            let digit: UInt64
            switch c {
            case 48...57: digit = UInt64(c - 48)
            case 97...102: digit = UInt64(c - 87)
            default: return nil
            }
            value = value << 4 | digit
        }
        return value
    }

    /// Parses a decimal unsigned number at `index` until a non-digit.
    func decimal(at index: Int) -> (value: UInt64, end: Int)? {
        var i = index, value: UInt64 = 0
        while i < bytes.count, bytes[i] >= 48, bytes[i] <= 57 { value = value &* 10 &+ UInt64(bytes[i] - 48); i += 1 }
        return i > index ? (value, i) : nil
    }
}

/// Keys, as bytes, searched for in frames.
enum Key {
    static let type = Array("\"type\":".utf8)
    static let id = Array("\"id\":".utf8)
    static let cursor = Array("\"cursor\":".utf8)
    static let seq = Array("\"seq\":".utf8)
    static let threadID = Array("\"thread_id\":".utf8)
    static let senderID = Array("\"sender_id\":".utf8)
    static let clientMessageID = Array("\"client_message_id\":".utf8)
    static let text = Array("\"text\":".utf8)
    static let totalUnread = Array("\"total_unread\":".utf8)
    static let readSeq = Array("\"read_seq\":".utf8)
    static let code = Array("\"code\":".utf8)
    static let replayed = Array("\"replayed\":".utf8)
    static let unread = Array("\"unread\":".utf8)

    static let replyPrefix = Array("{\"type\":\"reply\"".utf8)
    static let okTrue = Array("\"ok\":true".utf8)
    static let cursorPrefix = Array("{\"cursor\":".utf8)
    static let quotaPrefix = Array("{\"quota\":".utf8)
    static let messages = Array("\"messages\":".utf8)
    static let used = Array("\"used\":".utf8)
}
