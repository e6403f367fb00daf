import Foundation
import Logging
import SpotterServer
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `--log-format json`: each entry one line that any JSON reader takes back whole, whatever the message holds.
@Suite("JSON log lines")
struct JSONLogHandlerTests {
    final class Lines: Sendable {
        let written = Mutex<[String]>([])
        var all: [String] { written.withLock { $0 } }
    }

    static func logger(_ lines: Lines, label: String = "spotter") -> Logger {
        Logger(label: label) { label in
            var handler = JSONLogHandler(label: label, write: { line in lines.written.withLock { $0.append(line) } },
                                         now: { timespec(tv_sec: 1_795_000_000, tv_nsec: 7_000_000) })
            handler.logLevel = .debug
            return handler
        }
    }

    static func parse(_ line: String) throws -> [String: Any] {
        #expect(line.hasSuffix("\n") && line.dropLast().firstIndex(of: "\n") == nil, "one line: \(line.debugDescription)")
        return try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    }

    @Test func awkwardTextComesBackEqual() throws {
        let lines = Lines()
        var logger = Self.logger(lines)
        let awkward = [
            #"say "hi" \ back\slash"#, "two\nlines\r\nand\ttab", "nul\u{0}bell\u{7}esc\u{1b}[31mdel\u{7f}",
            "unicode: مرحبا 👋🏽 e\u{301} \u{2028}\u{2029} \u{FEFF}", "", String(repeating: "x", count: 100_000),
            "</script>{\"injected\":true}",
        ]
        logger[metadataKey: "user"] = .string("u\"1\n")
        for text in awkward {
            logger.warning("\(text)", metadata: ["detail": .string(text), "count": .stringConvertible(-9_223_372_036_854_775_808)])
        }
        #expect(lines.all.count == awkward.count)
        for (line, text) in zip(lines.all, awkward) {
            let object = try Self.parse(line)
            #expect(object["message"] as? String == text)
            #expect(object["detail"] as? String == text)
            #expect(object["count"] as? String == "-9223372036854775808")
            #expect(object["user"] as? String == "u\"1\n")
            #expect(object["level"] as? String == "warning")
            #expect(object["label"] as? String == "spotter")
            #expect(object["ts"] as? String == "2026-11-18T11:06:40.007Z")
        }
    }

    @Test func metadataIsFlattenedAndCannotHideTheFields() throws {
        let lines = Lines()
        let logger = Self.logger(lines, label: "spotter.\"nats\"")
        logger.info("m", metadata: [
            "message": "not the message", "ts": "0", "peer": ["host": "127.0.0.1", "port": "80", "inner": ["deep": "yes"]],
            "list": ["a", "b\u{1}"], "empty": [:],
        ])
        let object = try Self.parse(try #require(lines.all.first))
        #expect(object["message"] as? String == "m")
        #expect(object["meta.message"] as? String == "not the message")
        #expect(object["meta.ts"] as? String == "0")
        #expect(object["ts"] as? String == "2026-11-18T11:06:40.007Z")
        #expect(object["label"] as? String == "spotter.\"nats\"")
        #expect(object["peer.host"] as? String == "127.0.0.1" && object["peer.port"] as? String == "80")
        #expect(object["peer.inner.deep"] as? String == "yes")
        #expect(object["list"] as? [String] == ["a", "b\u{1}"])
        #expect((object["empty"] as? [String: Any])?.isEmpty == true)
        #expect(object["level"] as? String == "info")
    }

    @Test func levelsBelowTheHandlersAreNotWritten() {
        let lines = Lines()
        var logger = Self.logger(lines)
        logger.logLevel = .notice
        logger.info("quiet")
        logger.debug("quieter")
        logger.error("loud")
        #expect(lines.all.count == 1 && lines.all[0].contains("\"loud\""))
    }

    @Test func timestampsAtTheEdgesOfTheCalendar() throws {
        let lines = Lines()
        for (seconds, nanos, text) in [(0, 0, "1970-01-01T00:00:00.000Z"), (951_782_400, 999_999_999, "2000-02-29T00:00:00.999Z"),
                                       (4_102_444_799, 1_000_000, "2099-12-31T23:59:59.001Z")] {
            let logger = Logger(label: "t") { label in
                JSONLogHandler(label: label, write: { line in lines.written.withLock { $0.append(line) } },
                               now: { timespec(tv_sec: seconds, tv_nsec: nanos) })
            }
            logger.notice("x")
            #expect(try Self.parse(try #require(lines.all.last))["ts"] as? String == text)
        }
    }
}
