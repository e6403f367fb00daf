/// The fast path of `SocketCommand.decode` for the commands a socket sends most (those whose body implements
/// `SocketCommandBody.flat`: `message.send`, `receipt.delivered`, `thread.read`, `typing`, and the session
/// commands `session.invite`, `session.request`, `session.act`): a frame that is one flat JSON object whose values are plain
/// strings (no escapes, no control characters) or plain integers is read in one pass over its bytes, with the
/// known-fields rule applied as it goes. Anything else — an escape, a nested object, a float, a duplicate or
/// unknown key, a bad `id` — returns nil and the frame takes the general path (`JSONDecoder`), which also
/// words the errors. So the fast path only ever accepts what the general one would decode to the same value
/// (a test compares the two), at a small fraction of the cost: the general path was a third of the loop's
/// time per message.
enum FlatCommand {
    enum Value: Equatable {
        case string(String)
        case integer(Int64)
    }

    static func decode(_ bytes: [UInt8]) -> SocketCommand.Decoded? {
        guard let fields = object(bytes), case .string(let id)? = fields["id"], case .string(let type)? = fields["type"],
              !id.isEmpty, id.count <= SocketCommand.maxIDLength, id.utf8.count <= 4 * SocketCommand.maxIDLength,
              let body = SocketCommand.catalog[type],
              // The known-fields rule, from the command type's own list.
              fields.keys.allSatisfy({ body.fieldNames.contains($0) || $0 == "id" || $0 == "type" }),
              let command = body.flat(FlatFields(values: fields))
        else { return nil }
        return (id, command)
    }

    /// The object's fields, or nil if the frame is not a flat object of plain strings and integers.
    static func object(_ bytes: [UInt8]) -> [String: Value]? {
        var fields: [String: Value] = [:]
        var index = 0
        let end = bytes.count
        func skipSpace() {
            while index < end, bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09 {
                index += 1
            }
        }
        /// A string without escapes or control characters, as valid UTF-8; nil otherwise.
        func plainString() -> String? {
            guard index < end, bytes[index] == UInt8(ascii: "\"") else { return nil }
            let start = index + 1
            var cursor = start
            while cursor < end {
                let byte = bytes[cursor]
                if byte == UInt8(ascii: "\"") { break }
                if byte == UInt8(ascii: "\\") || byte < 0x20 { return nil }
                cursor += 1
            }
            guard cursor < end else { return nil }
            index = cursor + 1
            return String(validating: bytes[start..<cursor], as: UTF8.self)
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
            guard let key = plainString() else { return nil }
            skipSpace()
            guard index < end, bytes[index] == UInt8(ascii: ":") else { return nil }
            index += 1
            skipSpace()
            guard index < end else { return nil }
            let value: Value
            if bytes[index] == UInt8(ascii: "\"") {
                guard let string = plainString() else { return nil }
                value = .string(string)
            } else {
                guard let integer = plainInteger() else { return nil }
                value = .integer(integer)
            }
            guard fields.updateValue(value, forKey: key) == nil else { return nil }  // a duplicate key
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
}

/// A flat frame's fields, as a command body's `flat` reads them.
public struct FlatFields {
    let values: [String: FlatCommand.Value]

    /// The fields of `bytes` if it is one flat JSON object of plain strings (no escapes) and integers, each key
    /// once; nil otherwise (read it with `JSONDecoder` then).
    public static func parse(_ bytes: [UInt8]) -> FlatFields? {
        FlatCommand.object(bytes).map(FlatFields.init(values:))
    }

    public func contains(_ key: String) -> Bool { values[key] != nil }

    /// `.some(nil)` when absent, `.some(value)` for a string, nil for an integer (a type mismatch the general
    /// path words).
    public func string(_ key: String) -> String?? {
        field(key) { if case .string(let value) = $0 { value } else { nil } }
    }

    /// `.some(nil)` when absent, `.some(value)` for an integer, nil for a string.
    public func integer(_ key: String) -> Int64?? {
        field(key) { if case .integer(let value) = $0 { value } else { nil } }
    }

    private func field<T>(_ key: String, _ typed: (FlatCommand.Value) -> T?) -> T?? {
        guard let value = values[key] else { return .some(nil) }
        return typed(value).map { .some($0) } ?? nil
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
        guard !fields.contains("meal"), let thread = fields.string("thread_id"),
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
