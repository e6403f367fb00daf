import Foundation
import SpotterClient
import TestSupport

/// The real `spotter` binary for the client's tests, restartable on the same port and data (the client reconnects to
/// where it was), killable with SIGKILL and freezable with SIGSTOP.
final class LiveServer: @unchecked Sendable {
    let port: Int
    let directory: String
    /// `serve`'s options after the port and data; may change between `stop()` and `start()` (TLS on, say).
    var arguments: [String]
    private var process: Process?

    init(arguments: [String] = []) throws {
        port = try ServerProcess.freePort()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("spotter-client-\(UUID().uuidString)").path
        self.arguments = arguments
        try start()
    }

    var url: URL { URL(string: "http://127.0.0.1:\(port)")! }
    var api: APIClient { APIClient(port: port) }

    /// Starts `spotter serve` (again: same port, same data) and waits for /healthz.
    func start() throws {
        let process = Process()
        process.executableURL = ServerProcess.binary
        let store = try TestServer.onPostgres ? TestServer.postgresDatabase(for: directory) : nil
        process.arguments = ["serve", "--port", String(port), "--data-dir", directory, "--log-level", "warning"]
            + (store.map { ["--store", $0] } ?? []) + arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
        let pid = process.processIdentifier
        try? whenRunnerExits(run: "grep -q spotter /proc/\(pid)/cmdline 2>/dev/null && kill -9 \(pid)")
        let tls = arguments.contains("--tls-cert")
        for _ in 0..<150 {
            // With TLS on the port, a TCP connect is as far as the plain test client gets.
            if tls, process.isRunning, (try? BlockingSocket(port: port)) != nil { return }
            if !tls, let client = try? HTTPTestClient(port: port), (try? client.request("GET", "/healthz"))?.status == 200 { return }
            guard process.isRunning else { break }
            Thread.sleep(forTimeInterval: 0.1)
        }
        process.terminate()
        throw BlockingSocket.Failure(description: "spotter did not start on port \(port)")
    }

    func signal(_ number: Int32) {
        guard let process else { return }
        kill(process.processIdentifier, number)
    }

    /// kill -9: no goodbye to anyone.
    func kill9() {
        guard let process else { return }
        kill(process.processIdentifier, SIGKILL)
        reap(process)
        self.process = nil
    }

    /// SIGTERM; the data stays for the next `start()`.
    func stop() {
        guard let process else { return }
        kill(process.processIdentifier, SIGTERM)
        if reap(process, timeout: 20) == nil {
            kill(process.processIdentifier, SIGKILL)
            reap(process)
        }
        self.process = nil
    }

    /// SIGTERM, then the data directory goes.
    func cleanup() {
        if let process {
            kill(process.processIdentifier, SIGTERM)
            if reap(process, timeout: 20) == nil {
                kill(process.processIdentifier, SIGKILL)
                reap(process)
            }
        }
        process = nil
        try? FileManager.default.removeItem(atPath: directory)
    }

    typealias Account = APIClient.Account

    /// A coach and a client linked by a thread.
    func pair(_ tag: String = "a") throws -> (coach: Account, client: Account, thread: String) {
        let (coach, clients, threads) = try api.coachWithClients(1, domain: "\(tag).client.test")
        return (coach, clients[0], threads[0])
    }

    /// A client of this server for `account`, quick to reconnect.
    func client(_ account: Account, language: String? = nil, cursor: Int? = nil, persistence: (any SpotterPersistence)? = nil,
                transport: (any WebSocketTransport)? = nil,
                refresh: (@Sendable (String) async throws -> Tokens)? = nil) -> SpotterClient {
        SpotterClient(configuration: SpotterConfiguration(
            url: url, tokens: Tokens(accessToken: account.access, refreshToken: account.refresh), language: language,
            persistence: persistence ?? InMemoryPersistence(), cursor: cursor, transport: transport ?? DefaultWebSocketTransport(),
            minDelayMilliseconds: 50, maxDelayMilliseconds: 400, refresh: refresh))
    }
}

/// Every event a client emits, kept for the test to look at.
final class Recorder: Sendable {
    private let events = Locked<[SpotterEvent]>([])
    private let task = Locked<Task<Void, Never>?>(nil)

    init(_ client: SpotterClient) async {
        let stream = await client.events()
        let task = Task { [events] in
            for await event in stream { events.withLock { $0.append(event) } }
        }
        self.task.withLock { $0 = task }
    }

    deinit { task.withLock { $0?.cancel() } }

    var all: [SpotterEvent] { events.withLock { $0 } }

    var messages: [MessageEvent] { all.compactMap { if case .message(let event) = $0 { event } else { nil } } }
    var receipts: [ReceiptEvent] { all.compactMap { if case .receipt(let event) = $0 { event } else { nil } } }
    var acknowledged: [Message] { all.compactMap { if case .acknowledged(let message) = $0 { message } else { nil } } }
    var tokens: [Tokens] { all.compactMap { if case .tokens(let tokens) = $0 { tokens } else { nil } } }
    var cursors: [Int] { all.compactMap { if case .cursor(let cursor) = $0 { cursor } else { nil } } }
    var resets: [SpotterError] { all.compactMap { if case .reset(let error) = $0 { error } else { nil } } }
    var disconnects: [Int] { all.compactMap { if case .disconnected(let code, _) = $0 { code } else { nil } } }
    var stops: [StopReason] { all.compactMap { if case .stopped(let reason, _) = $0 { reason } else { nil } } }
}

/// A value behind a lock, for closures that outlive the test's frame (a Mutex cannot be captured).
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func withLock<R>(_ body: (inout Value) -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}

/// Waits until `condition` holds (checking every 20 ms), or throws after `timeout` seconds saying what did not happen.
func eventually(_ what: String, _ condition: () async -> Bool) async throws {
    try await eventually(15, what, condition)
}

func eventually(_ timeout: Double, _ what: String, _ condition: () async -> Bool) async throws {
    let deadline = Date().addingTimeInterval(timeout)
    while !(await condition()) {
        guard Date() < deadline else { throw BlockingSocket.Failure(description: "\(what): not within \(timeout) s") }
        try await Task.sleep(for: .milliseconds(20))
    }
}

/// Records both sides' events from the start, connects them, and waits until both are live.
func connectRecorded(_ coachSide: SpotterClient, _ clientSide: SpotterClient) async throws -> (Recorder, Recorder) {
    let coachHeard = await Recorder(coachSide)
    let clientHeard = await Recorder(clientSide)
    await coachSide.connect()
    await clientSide.connect()
    try await live(coachSide, clientSide)
    return (coachHeard, clientHeard)
}

func live(_ clients: SpotterClient...) async throws {
    for client in clients {
        try await eventually("the client to be live") { await client.state == .live }
    }
}

/// The error `body` throws, as a SpotterError (nil when it did not throw one).
func refusal(_ body: () async throws -> Void) async -> SpotterError? {
    do {
        try await body()
        return nil
    } catch {
        return error as? SpotterError
    }
}
