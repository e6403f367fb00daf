import SpotterCore
import SpotterProtocol
import SpotterPorts

#if canImport(Glibc)
import Glibc
#endif

/// `spotter serve --log-tap FILE`: a durable consumer of the log that appends each record to a file as one JSON
/// line, for operators (feeding another system, auditing what happened when) until push notifications and
/// webhooks consume the log themselves. Each line is
///
///     {"at":1767225600,"id":"pos:42","kind":"message","pos":42,"ref":"c-17","seq":5,"side":"client","thread":3}
///
/// `id` is the delivery id (the same every time the record is written), `pos` its log position, `thread` the
/// thread's number, `kind` one of `message`, `receipt`, `link`, `session`, `rating_prompt`, `tier`, `record`
/// (`unknown` for a kind a newer server wrote), `side` who made it, `seq` its seq (a message's own, else the
/// thread's last), `ref` its reference when it has one (a message's client_message_id, a session's or coaching
/// item's id, a tier, the session a rating prompt follows), `at` Unix seconds. Bodies (the texts, cards and
/// sessions) are not written: they stay in the database.
///
/// Lines are in log order. At least once: a batch written and fsynced whose position a crash kept from being
/// saved is written again after the restart, with the same ids. The tap starts at the newest record the first time
/// it runs (its position is kept in the database under `log-tap`), so turning it on does not dump the history.
final class LogTap: LogConsumer {
    let name = "log-tap"
    let start = LogConsumerStart.newest
    private let descriptor: Int32

    /// Opens (creating, mode 0640) `path` for appending. Start-up only: it blocks.
    init(path: String) throws {
        descriptor = open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0o640)
        guard descriptor >= 0 else { throw LogTapError.cannotOpen(path, errno) }
        try endCutLine()
    }

    deinit { close(descriptor) }

    /// A line cut short (by a crash, or a write that failed halfway, whose batch is written again) stays as it
    /// is; the next one starts on a line of its own.
    private func endCutLine() throws {
        let size = lseek(descriptor, 0, SEEK_END)
        var last: UInt8 = 0
        if size > 0, pread(descriptor, &last, 1, size - 1) == 1, last != UInt8(ascii: "\n") {
            try LogTap.write(descriptor, [UInt8(ascii: "\n")])
        }
    }

    func deliver(_ deliveries: [LogDelivery]) throws {
        try endCutLine()
        var bytes: [UInt8] = []
        for delivery in deliveries {
            bytes.append(contentsOf: LogTap.line(delivery).utf8)
            bytes.append(UInt8(ascii: "\n"))
        }
        try LogTap.write(descriptor, bytes)
        guard fsync(descriptor) == 0 else { throw LogTapError.cannotWrite(errno) }
    }

    /// The record's line (without its newline).
    static func line(_ delivery: LogDelivery) -> String {
        let record = delivery.record
        var json = JSONText()  // keys in sorted order
        json.field("at", record.at)
        json.field("id", delivery.id)
        json.field("kind", kindName(record.kind))
        json.field("pos", record.pos)
        json.field("ref", reference(record.content))
        json.field("seq", record.seq)
        json.field("side", record.side == .coach ? "coach" : "client")
        json.field("thread", record.threadNo)
        return json.finish()
    }

    /// What the line's `ref` names: none for a receipt or a link.
    static func reference(_ content: ChatRecord.Content) -> String? {
        switch content {
        case .message(let message): message.clientMessageID
        case .session(let session): session.sessionID
        case .coaching(let change): change.itemID
        case .tier(let tier): tier.tier
        case .ratingPrompt(.afterSession(let sessionID)): sessionID
        case .change(let change): String(change.target)
        case .erasure(let erasure): erasure.userID
        case .account(let change): change.userID
        case .ratingPrompt(.afterMessages), .receipt, .link, .unknown: nil
        }
    }

    static func kindName(_ kind: ChatRecord.Kind?) -> String {
        switch kind {
        case nil: return "unknown"
        case .message: return "message"
        case .receipt: return "receipt"
        case .link: return "link"
        case .session: return "session"
        case .ratingPrompt: return "rating_prompt"
        case .tier: return "tier"
        case .record: return "record"
        case .change: return "change"
        case .erasure: return "erasure"
        case .account: return "account"
        }
    }

    private static func write(_ descriptor: Int32, _ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                throw LogTapError.cannotWrite(errno)
            }
            offset += written
        }
    }
}

enum LogTapError: Error, CustomStringConvertible {
    case cannotOpen(String, Int32)
    case cannotWrite(Int32)

    var description: String {
        switch self {
        case .cannotOpen(let path, let code): return "cannot open the log tap \(path): \(String(cString: strerror(code)))"
        case .cannotWrite(let code): return "cannot write the log tap: \(String(cString: strerror(code)))"
        }
    }
}
