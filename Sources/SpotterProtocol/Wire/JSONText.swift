import FoundationEssentials

/// JSON for the frames sent for every message, written by hand: the same bytes `JSONEncoder` writes with
/// `[.sortedKeys, .withoutEscapingSlashes]` (tests compare the two), at a fraction of the cost. Keys must be
/// written in sorted order; nil values are left out, as the synthesized `Encodable` conformances do.
public struct JSONText {
    public private(set) var text: String
    private var empty = true

    /// Starts an object.
    public init() {
        text = "{"
        text.reserveCapacity(160)
    }

    public mutating func field(_ key: StaticString, _ value: String?) {
        guard let value else { return }
        open(key)
        JSONText.appendString(value, to: &text)
    }

    public mutating func field(_ key: StaticString, _ value: Int64?) {
        guard let value else { return }
        open(key)
        text += String(value)
    }

    /// A value that is JSON already (an object, an array).
    public mutating func field(_ key: StaticString, json value: String) {
        open(key)
        text += value
    }

    /// Closes the object and returns it.
    public mutating func finish() -> String {
        text += "}"
        return text
    }

    private mutating func open(_ key: StaticString) {
        text += empty ? "\"" : ",\""
        empty = false
        key.withUTF8Buffer { text += String(decoding: $0, as: UTF8.self) }
        text += "\":"
    }

    /// `value` as a JSON string: quotes, backslashes and control characters escaped, everything else as is.
    public static func string(_ value: String) -> String {
        var text = ""
        appendString(value, to: &text)
        return text
    }

    public static func appendString(_ value: String, to text: inout String) {
        text += "\""
        let utf8 = value.utf8
        // Most strings need no escape: copy them whole.
        if !utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            text += value
            text += "\""
            return
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count + 16)
        for byte in utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
            case UInt8(ascii: "\\"): bytes += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
            case 0x08: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "b")]
            case 0x0C: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "f")]
            case 0x0A: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case 0x0D: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case 0x09: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                bytes += Array("\\u00".utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            default: bytes.append(byte)
            }
        }
        text += String(decoding: bytes, as: UTF8.self)
        text += "\""
    }
}

extension MessageView {
    /// This message as JSON (`JSONEncoder` for a meal log, whose numbers it formats).
    public var jsonText: String {
        if meal != nil { return JSONText.encoder.encodeToString(self) }
        var json = JSONText()
        json.field("client_message_id", clientMessageId)
        json.field("created_at", createdAt)
        json.field("kind", kind)
        json.field("sender_id", senderId)
        json.field("seq", seq)
        json.field("text", text)
        json.field("thread_id", threadId)
        return json.finish()
    }
}

extension MessageEvent {
    public var jsonText: String {
        var json = JSONText()
        json.field("message", json: message.jsonText)
        json.field("type", type)
        return json.finish()
    }
}

extension UnreadEvent {
    public var jsonText: String {
        var json = JSONText()
        json.field("read_seq", readSeq)
        json.field("thread_id", threadId)
        json.field("total_unread", totalUnread)
        json.field("type", type)
        json.field("unread", unread)
        return json.finish()
    }
}

extension ReceiptEvent {
    public var jsonText: String {
        var json = JSONText()
        json.field("delivered_seq", deliveredSeq)
        json.field("read_seq", readSeq)
        json.field("thread_id", threadId)
        json.field("type", type)
        json.field("user_id", userId)
        return json.finish()
    }
}

extension ReceiptResult {
    public var jsonText: String {
        var json = JSONText()
        json.field("delivered_seq", deliveredSeq)
        json.field("read_seq", readSeq)
        json.field("thread_id", threadId)
        json.field("total_unread", totalUnread)
        json.field("unread", unread)
        return json.finish()
    }
}

extension JSONText {
    /// The encoder whose output this type reproduces.
    public static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()
}

extension JSONEncoder {
    /// Our own wire types always encode; a failure is a programming error.
    public func encodeToString<T: Encodable>(_ value: T) -> String {
        String(decoding: try! encode(value), as: UTF8.self)
    }
}
