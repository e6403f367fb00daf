import Foundation
import Synchronization
import Testing
import SpotterCore
import SpotterPorts
@testable import SpotterPush

/// Tests/scripts/push-standins.py, started once for the process as a child: local APNs, FCM and Web Push
/// services over HTTP/2 and TLS, checking what the providers send with PyPI's implementations (h2, PyJWT,
/// cryptography, http_ece).
///
/// The packages are found as for the crypto interop tests: `.build/push-python` (where `.ci/run` installs them),
/// `SPOTTER_PUSH_PYTHONPATH`, or the interpreter's own path; `SPOTTER_PUSH_PYTHON` names another interpreter.
/// Without them the tests are skipped loudly, except under `CI=true`, where they fail.
final class StandIns: @unchecked Sendable {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let script = root.appendingPathComponent("Tests/scripts/push-standins.py").path
    static let isRequired = ProcessInfo.processInfo.environment["CI"] == "true"

    static let shouldRun: Bool = {
        if (try? launch(["--probe"]).waitForExit()) == 0 { return true }
        if isRequired { return true }
        print("""
            ⚠️  SKIPPED: push provider tests against the local stand-ins (Tests/scripts/push-standins.py): Python packages missing.
                Install them: python3 -m pip install --target .build/push-python h2 http_ece PyJWT cryptography
                (.ci/run does; under CI=true these tests fail instead of skipping.)
            """)
        return false
    }()

    /// The one stand-in process of this test run; it exits when this process does (its stdin closes). A test that
    /// needs it fails (throws) when it could not start.
    static func shared() throws -> StandIns { try started.get() }
    private static let started = Result { try StandIns() }

    let apns: String
    let fcm: String
    let tokenURI: String
    let webPush: String
    let caFile: String
    let apnsP8: String
    let apnsKeyID: String
    let apnsTeamID: String
    let serviceAccountJSON: [UInt8]
    let endpointBase: String
    let p256dh: String
    let auth: String
    private let process: Process
    private let stdin: Pipe
    let control: HTTP2Client

    /// A stand-in process of the caller's own, for a test that sets modes for a whole service (down, a status for
    /// every push): the shared one serves suites that run in parallel, whose modes and clears would cross.
    /// `stop()` it when done.
    static func separate() throws -> StandIns { try StandIns() }

    /// Ends a separate stand-in process (its stdin closes) and waits for it.
    func stop() {
        try? stdin.fileHandleForWriting.close()
        process.waitUntilExit()
    }

    private init() throws {
        let child = try Self.launch(["--max-seconds", "900"])
        process = child.process
        stdin = child.stdin
        let line = try child.readLine()
        guard let info = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { throw Failed(line) }
        func string(_ key: String, in object: [String: Any]? = nil) throws -> String {
            guard let value = (object ?? info)[key] as? String else { throw Failed("no \(key) in \(line.prefix(200))") }
            return value
        }
        apns = try string("apns")
        fcm = try string("fcm")
        tokenURI = try string("token_uri")
        webPush = try string("webpush")
        caFile = try string("ca")
        let key = info["apns_key"] as? [String: Any] ?? [:]
        apnsP8 = try string("p8", in: key)
        apnsKeyID = try string("key_id", in: key)
        apnsTeamID = try string("team_id", in: key)
        serviceAccountJSON = Array(try JSONSerialization.data(withJSONObject: info["service_account"] ?? [:]))
        let subscription = info["subscription"] as? [String: Any] ?? [:]
        endpointBase = try string("endpoint_base", in: subscription)
        p256dh = try string("p256dh", in: subscription)
        auth = try string("auth", in: subscription)
        control = HTTP2Client(options: .init(caFile: caFile, timeoutSeconds: 10, maxResponseBytes: 1 << 26, name: "standin-control"))
    }

    struct Failed: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    // MARK: Control

    /// What the stand-ins accepted since the last `reset`.
    func received(token: String? = nil) throws -> (pushes: [[String: Any]], grants: Int) {
        let query = token.map { "?token=" + ($0.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? $0) } ?? ""
        let response = try Self.wait(control, HTTPRequest(method: "GET", url: fcm + "/_received" + query, headers: [], body: []))
        guard response.status == 200 else { throw Failed("/_received: HTTP \(response.status)") }
        let object = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any] ?? [:]
        return (object["pushes"] as? [[String: Any]] ?? [], object["grants"] as? Int ?? -1)
    }

    /// The pushes accepted for `token`.
    func pushes(to token: String) throws -> [[String: Any]] {
        try received(token: token).pushes
    }

    func mode(_ mode: [String: Any]) throws {
        let body = Array(try JSONSerialization.data(withJSONObject: mode))
        let response = try Self.wait(control, HTTPRequest(url: fcm + "/_mode", headers: [HTTPHeader("content-type", "application/json")], body: body))
        guard response.status == 200 else { throw Failed("mode \(mode): HTTP \(response.status)") }
    }

    func clearModes(_ service: String) throws { try mode(["clear": true, "service": service]) }

    // MARK: Blocking helpers for tests

    static func wait(_ client: HTTP2Client, _ request: HTTPRequest) throws -> HTTPResponse {
        let box = Waiter<Result<HTTPResponse, HTTPClientError>>()
        client.send(request) { box.finish($0) }
        return try box.wait().get()
    }

    // MARK: The child process

    struct Child {
        var process: Process
        var stdin: Pipe
        var stdout: Pipe

        func waitForExit() -> Int32 {
            try? stdin.fileHandleForWriting.close()
            process.waitUntilExit()
            return process.terminationStatus
        }

        /// The first line on stdout (the stand-ins' JSON), read byte by byte so nothing after it is consumed.
        func readLine() throws -> String {
            var bytes: [UInt8] = []
            let handle = stdout.fileHandleForReading
            while true {
                guard let chunk = try handle.read(upToCount: 1), let byte = chunk.first else {
                    throw Failed("push-standins.py exited before printing its URLs (status \(process.isRunning ? -1 : process.terminationStatus))")
                }
                if byte == UInt8(ascii: "\n") { return String(decoding: bytes, as: UTF8.self) }
                bytes.append(byte)
            }
        }
    }

    static func launch(_ arguments: [String]) throws -> Child {
        let environment = ProcessInfo.processInfo.environment
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [environment["SPOTTER_PUSH_PYTHON"] ?? "python3", script] + arguments
        var paths = [root.appendingPathComponent(".build/push-python").path]
        if let extra = environment["SPOTTER_PUSH_PYTHONPATH"] { paths.insert(extra, at: 0) }
        if let existing = environment["PYTHONPATH"] { paths.append(existing) }
        var childEnvironment = environment
        childEnvironment["PYTHONPATH"] = paths.joined(separator: ":")
        process.environment = childEnvironment
        let stdin = Pipe(), stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        // Not the runner's stderr: a stand-in outliving the runner must not hold `swift test`'s output open.
        let log = NSTemporaryDirectory() + "push-standins-\(getpid()).log"
        FileManager.default.createFile(atPath: log, contents: nil)
        process.standardError = FileHandle(forWritingAtPath: log) ?? FileHandle.nullDevice
        try process.run()
        return Child(process: process, stdin: stdin, stdout: stdout)
    }
}

/// One value handed from a completion to the waiting test.
final class Waiter<Value: Sendable>: Sendable {
    private let value = Mutex<Value?>(nil)
    private let semaphore = DispatchSemaphore(value: 0)

    func finish(_ result: Value) {
        value.withLock { $0 = result }
        semaphore.signal()
    }

    func wait(seconds: Double = 30) -> Value {
        guard semaphore.wait(timeout: .now() + seconds) == .success else { preconditionFailure("no completion in \(seconds) s") }
        return value.withLock { $0! }
    }
}

/// A clock the test moves: Unix seconds, real time plus an offset.
final class MovableClock: Sendable {
    private let offset = Atomic<Int64>(0)
    func advance(_ seconds: Int64) { offset.add(seconds, ordering: .relaxed) }
    var now: @Sendable () -> Int64 { { [self] in Int64(Date().timeIntervalSince1970) + offset.load(ordering: .relaxed) } }
}

extension PushProvider {
    /// Sends and waits for the outcome.
    func deliver(_ message: PushMessage) -> PushOutcome {
        let box = Waiter<PushOutcome>()
        send(message) { box.finish($0) }
        return box.wait()
    }
}

/// A push with the fields every test sets the same way; `alert` nil for a silent update.
func makeMessage(id: String = UUID().uuidString, address: PushAddress, alert: PushMessage.Alert? = .init(title: "سارة", body: "موعد الجلسة غدًا", quiet: false),
                 badge: Int? = 3, collapseKey: String? = "thread-42", data: [String: String] = ["thread": "t42", "kind": "message"],
                 expiresIn: Int64 = 3600, urgent: Bool = true) -> PushMessage {
    PushMessage(id: id, address: address, alert: alert, badge: badge, collapseKey: collapseKey, category: "message",
                data: data, expiresAt: Int64(Date().timeIntervalSince1970) + expiresIn, urgent: urgent && alert != nil)
}

/// A fresh APNs device token (64 hex digits).
func apnsToken() -> String {
    (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
}
