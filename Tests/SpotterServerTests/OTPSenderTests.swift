import Logging
import Synchronization
import Testing
import SpotterServer

/// The development OTP sender keeps phone numbers and codes out of the log above debug level (no PII in logs).
@Suite("OTP senders")
struct OTPSenderTests {
    /// Every log line, with its level and metadata, as text.
    final class Recorder: LogHandler, @unchecked Sendable {
        let lines = Mutex<[(Logger.Level, String)]>([])
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(level: Logger.Level, message: Logger.Message, metadata: Logger.Metadata?, source: String, file: String,
                 function: String, line: UInt) {
            let text = "\(message) \((metadata ?? [:]).map { "\($0.key)=\($0.value)" }.sorted().joined(separator: " "))"
            lines.withLock { $0.append((level, text)) }
        }
    }

    @Test func theLogSenderWritesNoPhoneOrCodeAboveDebug() throws {
        let recorder = Recorder()
        let logger = Logger(label: "otp-test") { _ in recorder }
        try LogOTPSender(logger: logger).send(code: "482913", to: "+966551234567")
        let lines = recorder.lines.withLock { $0 }
        let above = lines.filter { $0.0 > .debug }.map(\.1)
        #expect(!above.isEmpty, "the send is still visible in the log")
        #expect(above.allSatisfy { !$0.contains("482913") && !$0.contains("551234567") }, "\(above)")
        // At debug level a developer can read them.
        #expect(lines.contains { $0.0 == .debug && $0.1.contains("482913") && $0.1.contains("+966551234567") })
    }
}
