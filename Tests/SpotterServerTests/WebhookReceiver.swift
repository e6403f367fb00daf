import Foundation
import Synchronization
import SpotterPush
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
    let tls: TLSFiles?
    var url: String { "\(tls == nil ? "http" : "https")://127.0.0.1:\(port)/hooks" }

    /// A self-signed certificate for 127.0.0.1 (made with the openssl command) and its key; `cert` is its own CA.
    struct TLSFiles {
        let cert: String
        let key: String

        static func make(in directory: String) throws -> TLSFiles {
            let files = TLSFiles(cert: directory + "/receiver.pem", key: directory + "/receiver.key")
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                                 "-keyout", files.key, "-out", files.cert, "-days", "1", "-subj", "/CN=127.0.0.1",
                                 "-addext", "subjectAltName=IP:127.0.0.1"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            guard reap(process, timeout: 30) == 0 else { throw BlockingSocket.Failure(description: "openssl req failed") }
            return files
        }
    }

    init(tls: TLSFiles? = nil) throws {
        self.tls = tls
        let stdout = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", Self.root.appendingPathComponent("Tests/scripts/webhook-receiver.py").path, "--max-seconds", "600"]
            + (tls.map { ["--tls-cert", $0.cert, "--tls-key", $0.key] } ?? [])
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

    /// The receiver's control calls (plain HTTP; over HTTPS through libcurl trusting its certificate).
    private func control(_ method: String, _ path: String, _ body: [String: Any]? = nil) throws -> (status: Int, body: [UInt8]) {
        guard let tls else {
            let answer = try APIClient(port: port).call(method, path, body)
            return (answer.status, Array(answer.text.utf8))
        }
        let client = HTTP2Client(options: .init(caFile: tls.cert, timeoutSeconds: 10, name: "receiver-control"))
        defer { client.shutdown() }
        let answer = Mutex<Result<SpotterPush.HTTPResponse, HTTPClientError>?>(nil)
        let done = DispatchSemaphore(value: 0)
        let bytes = try body.map { Array(try JSONSerialization.data(withJSONObject: $0)) } ?? []
        client.send(SpotterPush.HTTPRequest(method: method, url: "https://127.0.0.1:\(port)\(path)", headers: [], body: bytes)) { result in
            answer.withLock { $0 = result }
            done.signal()
        }
        guard done.wait(timeout: .now() + 15) == .success, let result = answer.withLock({ $0 }) else {
            throw BlockingSocket.Failure(description: "receiver \(path): no answer")
        }
        let response = try result.get()
        return (response.status, response.body)
    }

    /// The secrets to check with, the status to answer with, and a wait before answering.
    func configure(secrets: [String], status: Int = 200, delay: Double = 0) throws {
        let answer = try control("POST", "/_config", ["secrets": secrets, "status": status, "delay": delay])
        guard answer.status == 204 else { throw BlockingSocket.Failure(description: "receiver /_config: \(answer.status)") }
    }

    /// Every delivery so far, in arrival order.
    func log() throws -> [[String: Any]] {
        let answer = try control("GET", "/_log")
        return (try JSONSerialization.jsonObject(with: Data(answer.body))) as? [[String: Any]] ?? []
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
