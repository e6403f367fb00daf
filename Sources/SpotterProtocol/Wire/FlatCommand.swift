/// The fast path of `SocketCommand.decode` for the commands a socket sends most (those whose body implements
/// `SocketCommandBody.flat`: `message.send`, `receipt.delivered`, `thread.read`, `typing`, `app_state`, and the
/// session commands `session.invite`, `session.request`, `session.act`): a frame that is one flat JSON object
/// whose values are strings or plain integers is read in one pass over its bytes, with the known-fields rule
/// applied as it goes. Keys stay byte ranges of the frame (no `String` per key, no dictionary); a string value
/// becomes a `String` only when the command asks for it, with its escapes (`\n`, `\"`, `\u00e9`, a surrogate
/// pair) decoded. Anything else — a nested object, a float, `null`, a lone surrogate, a duplicate or unknown
/// key, a bad `id` — returns nil and the frame takes the general path (`JSONDecoder`), which also words the
/// errors. So the fast path only ever accepts what the general one would decode to the same value (a test
/// compares the two over random and mutated frames), at a small fraction of the cost: the general path was a
/// third of the loop's time per message, and a text with a line break or a quote used to take it.
enum FlatCommand {
    enum Value: Equatable {
        /// A string's bytes between its quotes in the frame, escapes still in (`escaped`).
        case string(Range<Int>, escaped: Bool)
        case integer(Int64)
    }

    /// One `"key":value` of the object.
    struct Field {
        /// The key's bytes between its quotes (keys with escapes are left to the general path).
        let key: Range<Int>
        let value: Value
    }

    static func decode(_ bytes: [UInt8]) -> SocketCommand.Decoded? {
        guard let fields = FlatFields.parse(bytes), let id = fields.string("id") ?? nil,
              let type = fields.string("type") ?? nil,
              !id.isEmpty, id.utf8.count <= 4 * SocketCommand.maxIDLength, id.count <= SocketCommand.maxIDLength,
              let body = SocketCommand.catalog[type],
              // The known-fields rule, from the command type's own list.
              fields.allKeys(in: body.fieldNames, or: "id", "type"),
              let command = body.flat(fields)
        else { return nil }
        return (id, command)
    }

    /// The object's fields in the order written, or nil if the frame is not one flat object of strings and
    /// integers with each key once.
    static func object(_ bytes: UnsafeBufferPointer<UInt8>) -> [Field]? {
        var fields: [Field] = []
        fields.reserveCapacity(8)
        var index = 0
        let end = bytes.count
        func skipSpace() {
            while index < end, bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09 {
                index += 1
            }
        }
        /// A string's inside, from its opening quote past its closing one; nil at a control character or the end.
        func string() -> (Range<Int>, escaped: Bool)? {
            guard index < end, bytes[index] == UInt8(ascii: "\"") else { return nil }
            let start = index + 1
            var cursor = start
            var escaped = false
            while cursor < end {
                let byte = bytes[cursor]
                if byte == UInt8(ascii: "\"") { break }
                if byte < 0x20 { return nil }
                if byte == UInt8(ascii: "\\") {
                    escaped = true
                    cursor += 1  // the escaped character is never the closing quote; `unescaped` checks it
                }
                cursor += 1
            }
            guard cursor < end else { return nil }
            index = cursor + 1
            return (start..<cursor, escaped)
        }
        /// `-?(0|[1-9][0-9]*)` that fits in an Int64, not followed by a fraction or exponent.
        func plainInteger() -> Int64? {
            var negative = false
            if index < end, bytes[index] == UInt8(ascii: "-") {
                negative = true
                index += 1
            }
            let start = index
            var value: Int64 = 0
            while index < end, bytes[index] >= 0x30, bytes[index] <= 0x39 {
                let digit = Int64(bytes[index] - 0x30)
                let (times, overflow1) = value.multipliedReportingOverflow(by: 10)
                let (sum, overflow2) = negative ? times.subtractingReportingOverflow(digit) : times.addingReportingOverflow(digit)
                guard !overflow1, !overflow2 else { return nil }
                value = sum
                index += 1
            }
            let digits = index - start
            guard digits > 0, !(digits > 1 && bytes[start] == 0x30) else { return nil }
            if index < end, bytes[index] == UInt8(ascii: ".") || bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
                return nil
            }
            return value
        }

        skipSpace()
        guard index < end, bytes[index] == UInt8(ascii: "{") else { return nil }
        index += 1
        skipSpace()
        if index < end, bytes[index] == UInt8(ascii: "}") { return nil }  // no id: the general path says so
        while true {
            skipSpace()
            guard let (key, keyEscaped) = string(), !keyEscaped else { return nil }
            // A duplicate key: the general path decides which one counts.
            for field in fields where bytes[field.key].elementsEqual(bytes[key]) { return nil }
            skipSpace()
            guard index < end, bytes[index] == UInt8(ascii: ":") else { return nil }
            index += 1
            skipSpace()
            guard index < end else { return nil }
            let value: Value
            if bytes[index] == UInt8(ascii: "\"") {
                guard let (range, escaped) = string() else { return nil }
                value = .string(range, escaped: escaped)
            } else {
                guard let integer = plainInteger() else { return nil }
                value = .integer(integer)
            }
            fields.append(Field(key: key, value: value))
            skipSpace()
            guard index < end else { return nil }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            guard bytes[index] == UInt8(ascii: "}") else { return nil }
            index += 1
            skipSpace()
            return index == end ? fields : nil
        }
    }

    /// A JSON string's inside with its escapes decoded, as valid UTF-8; nil for a bad escape, a lone
    /// surrogate or bytes that are not UTF-8 (the general path words those).
    static func unescaped(_ bytes: Slice<UnsafeBufferPointer<UInt8>>) -> String? {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        let end = bytes.endIndex
        /// Four hex digits after `\u`.
        func hex4() -> UInt32? {
            guard end - index >= 4 else { return nil }
            var value: UInt32 = 0
            for _ in 0..<4 {
                let byte = bytes[index]
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
                default: return nil
                }
                value = value << 4 | UInt32(digit)
                index += 1
            }
            return value
        }
        while index < end {
            let byte = bytes[index]
            index += 1
            guard byte == UInt8(ascii: "\\") else {
                out.append(byte)
                continue
            }
            guard index < end else { return nil }
            let escape = bytes[index]
            index += 1
            switch escape {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(escape)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                guard var scalar = hex4() else { return nil }
                if (0xD800...0xDBFF).contains(scalar) {
                    // A high surrogate must be followed by `\u` and a low one.
                    guard end - index >= 6, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else { return nil }
                    index += 2
                    guard let low = hex4(), (0xDC00...0xDFFF).contains(low) else { return nil }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00...0xDFFF).contains(scalar) {
                    return nil
                }
                guard let character = Unicode.Scalar(scalar) else { return nil }
                out.append(contentsOf: UTF8.encode(character)!)
            default:
                return nil
            }
        }
        return String(validating: out, as: UTF8.self)
    }
}

/// A flat frame's fields, as a command body's `flat` reads them: the frame's bytes and where each field is.
public struct FlatFields {
    let bytes: [UInt8]
    let fields: [FlatCommand.Field]

    /// The fields of `bytes` if it is one flat JSON object of strings and integers, each key once; nil
    /// otherwise (read it with `JSONDecoder` then).
    public static func parse(_ bytes: [UInt8]) -> FlatFields? {
        bytes.withUnsafeBufferPointer { FlatCommand.object($0) }.map { FlatFields(bytes: bytes, fields: $0) }
    }

    public func contains(_ key: String) -> Bool { value(key) != nil }

    /// `.some(nil)` when absent, `.some(value)` for a string, nil for an integer (a type mismatch the general
    /// path words) or a string the fast path does not read (a bad escape, a lone surrogate).
    public func string(_ key: String) -> String?? {
        guard let value = value(key) else { return .some(nil) }
        guard case .string(let range, let escaped) = value else { return nil }
        return bytes.withUnsafeBufferPointer { buffer -> String?? in
            let text = escaped ? FlatCommand.unescaped(buffer[range]) : FlatFields.text(UnsafeBufferPointer(rebasing: buffer[range]))
            return text.map { .some($0) } ?? nil
        }
    }

    /// `bytes` as a `String` if they are valid UTF-8. ASCII, which most ids and many texts are, is recognised
    /// eight bytes at a time and needs no validation of its own (`String(validating:)` was a third of the
    /// decode).
    static func text(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        guard let base = bytes.baseAddress else { return "" }
        var index = 0
        var high: UInt64 = 0
        while index + 8 <= bytes.count {
            high |= UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self)
            index += 8
        }
        while index < bytes.count {
            high |= UInt64(base[index])
            index += 1
        }
        guard high & 0x8080_8080_8080_8080 == 0 else { return String(validating: bytes, as: UTF8.self) }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `.some(nil)` when absent, `.some(value)` for an integer, nil for a string.
    public func integer(_ key: String) -> Int64?? {
        guard let value = value(key) else { return .some(nil) }
        guard case .integer(let integer) = value else { return nil }
        return .some(integer)
    }

    /// Whether every key is one of `names`, `extra1` or `extra2`.
    func allKeys(in names: Set<String>, or extra1: StaticString, _ extra2: StaticString) -> Bool {
        bytes.withUnsafeBufferPointer { buffer in
            fields.allSatisfy { field in
                let key = UnsafeBufferPointer(rebasing: buffer[field.key])
                return FlatFields.same(key, UnsafeBufferPointer(start: extra1.utf8Start, count: extra1.utf8CodeUnitCount))
                    || FlatFields.same(key, UnsafeBufferPointer(start: extra2.utf8Start, count: extra2.utf8CodeUnitCount))
                    || names.contains { name in
                        var name = name
                        return name.withUTF8 { FlatFields.same(key, $0) }
                    }
            }
        }
    }

    private func value(_ key: String) -> FlatCommand.Value? {
        var key = key
        return key.withUTF8 { name in
            bytes.withUnsafeBufferPointer { buffer in
                fields.first { FlatFields.same(UnsafeBufferPointer(rebasing: buffer[$0.key]), name) }?.value
            }
        }
    }

    /// Byte for byte equal (keys are short: the lengths differ for most pairs).
    private static func same(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        for index in 0..<a.count where a[index] != b[index] { return false }
        return true
    }
}

// MARK: - The commands, by type

extension MeCommand: SocketCommandBody {
    public static let type = "me"
}

extension ThreadsCommand: SocketCommandBody {
    public static let type = "threads"
}

extension RefreshRequest: SocketCommandBody {
    public static let type = "auth.refresh"
}

extension HistoryCommand: SocketCommandBody {
    public static let type = "history"
}

extension ResumeCommand: SocketCommandBody {
    public static let type = "resume"
}

extension SendMessageCommand: SocketCommandBody {
    public static let type = "message.send"

    public static func flat(_ fields: FlatFields) -> SendMessageCommand? {
        // A meal card is an object: the general path reads it (here it could only be a wrong type).
        // So are attachments (a list): a string there is a type mismatch the general path words.
        guard !fields.contains("meal"), !fields.contains("attachments"), let thread = fields.string("thread_id"),
              let cmid = fields.string("client_message_id"), let kind = fields.string("kind"),
              let text = fields.string("text") else { return nil }
        return SendMessageCommand(threadId: thread, clientMessageId: cmid, kind: kind, text: text, meal: nil)
    }
}

extension ReceiptCommand: SocketCommandBody {
    public static var type: String { Mark.type }

    public static func flat(_ fields: FlatFields) -> ReceiptCommand? {
        guard let thread = fields.string("thread_id"), let seq = fields.integer("seq") else { return nil }
        return ReceiptCommand(threadId: thread, seq: seq)
    }
}

extension TypingCommand: SocketCommandBody {
    public static let type = "typing"

    public static func flat(_ fields: FlatFields) -> TypingCommand? {
        guard let thread = fields.string("thread_id") else { return nil }
        return TypingCommand(threadId: thread)
    }
}

extension SessionCreateCommand: SocketCommandBody {
    public static var type: String { Mark.type }

    public static func flat(_ fields: FlatFields) -> SessionCreateCommand? {
        guard let thread = fields.string("thread_id"), let start = fields.integer("start"),
              let minutes = fields.integer("duration_minutes"), let purpose = fields.string("purpose") else { return nil }
        return SessionCreateCommand(threadId: thread, start: start, durationMinutes: minutes.map { Int($0) }, purpose: purpose)
    }
}

extension RatingSubmitCommand: SocketCommandBody {
    public static let type = "rating.submit"
}

extension RatingSkipCommand: SocketCommandBody {
    public static let type = "rating.skip"
}

extension SessionActCommand: SocketCommandBody {
    public static let type = "session.act"

    public static func flat(_ fields: FlatFields) -> SessionActCommand? {
        guard let session = fields.string("session_id"), let action = fields.string("action"),
              let start = fields.integer("start"), let reason = fields.string("reason") else { return nil }
        return SessionActCommand(sessionId: session, action: action, start: start, reason: reason)
    }
}

extension SessionsCommand: SocketCommandBody {
    public static let type = "sessions"
}
