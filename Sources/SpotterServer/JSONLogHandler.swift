import Logging
import SpotterProtocol

#if canImport(Glibc)
import Glibc
#endif

/// `--log-format json`: every log entry as one JSON object on one line — `ts` (UTC, ISO 8601 with milliseconds),
/// `level`, `label`, `message`, then the metadata's keys beside them (a nested dictionary as `outer.inner`, a list
/// as an array of strings; a key that would hide one of the four is written `meta.<key>`). Strings are escaped as
/// JSON asks (quotes, backslashes, every control character), so a message with newlines stays on its line.
public struct JSONLogHandler: LogHandler {
    public var logLevel: Logger.Level = .info
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    private let label: String
    private let write: @Sendable (String) -> Void
    private let now: @Sendable () -> timespec

    /// - Parameters:
    ///   - write: takes one finished line (with its newline); the default writes it to standard error at once.
    ///   - now: the wall clock (tests pass a fixed one).
    public init(label: String, metadataProvider: Logger.MetadataProvider? = nil,
                write: @escaping @Sendable (String) -> Void = { JSONLogHandler.standardError($0) },
                now: @escaping @Sendable () -> timespec = { JSONLogHandler.wallClock() }) {
        self.label = label
        self.metadataProvider = metadataProvider
        self.write = write
        self.now = now
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { _, new in new } }
        if let given = event.metadata { merged.merge(given) { _, new in new } }
        write(Self.line(ts: now(), level: event.level, label: label, message: event.message.description, metadata: merged))
    }

    /// One entry as its JSON line (with the newline).
    public static func line(ts: timespec, level: Logger.Level, label: String, message: String, metadata: Logger.Metadata) -> String {
        var out = "{\"ts\":" + JSONText.string(timestamp(ts)) + ",\"level\":" + JSONText.string(level.rawValue)
            + ",\"label\":" + JSONText.string(label) + ",\"message\":" + JSONText.string(message)
        var flat: [(String, String)] = []
        flatten(metadata, prefix: "", into: &flat)
        for (key, value) in flat.sorted(by: { $0.0 < $1.0 }) {
            let name = reserved.contains(key) ? "meta." + key : key
            out += "," + JSONText.string(name) + ":" + value
        }
        return out + "}\n"
    }

    private static let reserved: Set<String> = ["ts", "level", "label", "message"]

    /// Nested dictionaries as dotted keys; each value already as JSON.
    private static func flatten(_ metadata: Logger.Metadata, prefix: String, into flat: inout [(String, String)]) {
        for (key, value) in metadata {
            let name = prefix + key
            switch value {
            case .dictionary(let inner) where !inner.isEmpty: flatten(inner, prefix: name + ".", into: &flat)
            default: flat.append((name, json(value)))
            }
        }
    }

    private static func json(_ value: Logger.Metadata.Value) -> String {
        switch value {
        case .string(let text): return JSONText.string(text)
        case .stringConvertible(let convertible): return JSONText.string(convertible.description)
        case .array(let items): return "[" + items.map(json).joined(separator: ",") + "]"
        case .dictionary(let inner):
            return "{" + inner.sorted { $0.key < $1.key }.map { JSONText.string($0.key) + ":" + json($0.value) }.joined(separator: ",") + "}"
        }
    }

    /// `2026-11-26T21:30:55.123Z`.
    static func timestamp(_ time: timespec) -> String {
        var seconds = time_t(time.tv_sec)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func padded(_ value: Int, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        let millis = Int(time.tv_nsec / 1_000_000)
        return padded(Int(parts.tm_year) + 1900, 4) + "-" + padded(Int(parts.tm_mon) + 1, 2) + "-" + padded(Int(parts.tm_mday), 2)
            + "T" + padded(Int(parts.tm_hour), 2) + ":" + padded(Int(parts.tm_min), 2) + ":" + padded(Int(parts.tm_sec), 2)
            + "." + padded(millis, 3) + "Z"
    }

    /// The system's wall clock, for log lines only (what the server decides reads `ServerConfig.clock`).
    public static func wallClock() -> timespec {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return time
    }

    /// Writes a line to standard error in one `write(2)`, so lines of different threads do not interleave.
    public static func standardError(_ line: String) {
        let bytes = Array(line.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.write(2, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                return
            }
            offset += written
        }
    }
}
