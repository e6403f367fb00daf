import Foundation
import TestSupport

/// Tests/scripts/webhook-receiver.py in a child process: a local HTTP receiver that checks each delivery's
/// signature with the documented Python example (Python's hmac) and records what came. One per test; `stop()`
/// closes its stdin, which ends it (and so does the runner's exit).
final class WebhookReceiver: @unchecked Sendable {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    private let process = Process()
    private let stdin = Pipe()
    let port: Int
    var url: String { "http://127.0.0.1:\(port)/hooks" }
    private var control: APIClient { APIClient(port: port) }

    init() throws {
        let stdout = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", Self.root.appendingPathComponent("Tests/scripts/webhook-receiver.py").path, "--max-seconds", "600"]
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = FileHandle.nullDevice
        try process.run()
        killWhenRunnerExits(process.processIdentifier)
        var line: [UInt8] = []
        let handle = stdout.fileHandleForReading
        while true {
            let byte = handle.readData(ofLength: 1)
            guard let first = byte.first else { throw BlockingSocket.Failure(description: "webhook receiver did not start") }
            if first == UInt8(ascii: "\n") { break }
            line.append(first)
        }
        let info = try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any]
        guard let port = info?["port"] as? Int else { throw BlockingSocket.Failure(description: "webhook receiver said \(line)") }
        self.port = port
    }

    /// The secrets to check with, the status to answer with, and a wait before answering.
    func configure(secrets: [String], status: Int = 200, delay: Double = 0) throws {
        let answer = try control.call("POST", "/_config", ["secrets": secrets, "status": status, "delay": delay])
        guard answer.status == 204 else { throw BlockingSocket.Failure(description: "receiver /_config: \(answer.status)") }
    }

    /// Every delivery so far, in arrival order.
    func log() throws -> [[String: Any]] {
        try control.call("GET", "/_log").array
    }

    /// The deliveries answered 2xx, in arrival order.
    func accepted() throws -> [[String: Any]] {
        try log().filter { ($0["answered"] as? Int).map { (200..<300).contains($0) } ?? false }
    }

    /// Waits until `condition` holds for the log (at most `timeout` seconds); returns the log.
    @discardableResult
    func waitFor(_ timeout: TimeInterval, _ what: String, _ condition: ([[String: Any]]) -> Bool) throws -> [[String: Any]] {
        var last: [[String: Any]] = []
        try waitUntil(timeout, "\(what); the receiver has \(last.count)") {
            last = (try? log()) ?? []
            return condition(last)
        }
        return last
    }

    func stop() {
        try? stdin.fileHandleForWriting.close()
        _ = reap(process, timeout: 5)
    }
}
