import Foundation

/// The real `spotter` binary in a child process, for crash tests. With `SPOTTER_TEST_CLUSTER=N` (and no store of
/// the caller's), N processes on the data directory's PostgreSQL database and the suite's `nats-server`, behind a
/// balanced port (`TestCluster`); `process` is the first.
public final class ServerProcess {
    public let process = Process()
    /// Where tests connect: this process's own port, or a cluster's balanced port.
    public var port: Int { balancedPort ?? ownPort }
    /// This process's own port.
    public let ownPort: Int
    public let dataDirectory: String
    /// A cluster's other processes.
    private var siblings: [ServerProcess] = []
    private var balancedPort: Int?

    /// The `spotter` executable built next to the test bundle (or `SPOTTER_BINARY`).
    public static var binary: URL {
        if let path = ProcessInfo.processInfo.environment["SPOTTER_BINARY"] { return URL(fileURLWithPath: path) }
        return URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("spotter")
    }

    /// Starts `spotter serve` on a free port and waits until `/healthz` answers.
    /// - Parameters:
    ///   - store: a PostgreSQL URL to keep everything in (by default: the data directory's database in the
    ///     suite's PostgreSQL pass, SQLite otherwise).
    ///   - environment: variables added to the test runner's (`SPOTTER_TOKEN_SECRET` for a cluster).
    ///   - logFile: where the server's output goes (nowhere by default).
    public init(dataDirectory: String, arguments: [String] = [], store: String? = nil, environment: [String: String] = [:],
                logFile: String? = nil) throws {
        self.dataDirectory = dataDirectory
        let port = try Self.freePort()
        ownPort = port
        process.executableURL = Self.binary
        // In the suite's PostgreSQL pass, the binary keeps everything in the data directory's database.
        let url = try store ?? (TestServer.onPostgres ? TestServer.postgresDatabase(for: dataDirectory) : nil)
        // A cluster of the test mode's size, unless the caller chose the store or the broker (the cluster suite).
        var arguments = arguments
        let clusterOfTheMode = TestCluster.isOn && store == nil && !arguments.contains("--broker")
        if clusterOfTheMode { arguments += ["--broker", try TestCluster.nats(for: dataDirectory).url] }
        process.arguments = ["serve", "--port", String(port), "--data-dir", dataDirectory, "--log-level", logFile == nil ? "warning" : "info"]
            + (url.map { ["--store", $0] } ?? []) + arguments
        if !environment.isEmpty { process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        // A child must not hold the test runner's pipes open.
        if let logFile, FileManager.default.createFile(atPath: logFile, contents: nil), let handle = FileHandle(forWritingAtPath: logFile) {
            process.standardOutput = handle
            process.standardError = handle
        } else {
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
        }
        try process.run()
        // A runner that dies leaves no server behind (only if the PID is still a spotter: PIDs are reused).
        let pid = process.processIdentifier
        try? whenRunnerExits(run: "grep -q spotter /proc/\(pid)/cmdline 2>/dev/null && kill -9 \(pid)")
        for _ in 0..<100 {
            if let client = try? HTTPTestClient(port: port), (try? client.request("GET", "/healthz"))?.status == 200 {
                guard clusterOfTheMode, let url else { return }
                do {
                    // One at a time: the first made the data directory's token secret, the others read it.
                    for _ in 1..<TestCluster.size {
                        siblings.append(try ServerProcess(dataDirectory: dataDirectory, arguments: arguments, store: url,
                                                          environment: environment))
                    }
                    balancedPort = try TestCluster.balance([port] + siblings.map(\.ownPort))
                } catch {
                    stop()
                    throw error
                }
                return
            }
            guard process.isRunning else { break }
            Thread.sleep(forTimeInterval: 0.1)
        }
        process.terminate()
        throw BlockingSocket.Failure(description: "spotter did not start on port \(port)")
    }

    /// Sends `signal` and waits for the process to end; returns its status.
    @discardableResult
    public func stop(signal: Int32 = SIGTERM) -> Int32 {
        if let balancedPort { TestCluster.release(balancedPort) }
        balancedPort = nil
        // A cluster's status: the first process's, unless another ended otherwise.
        let others = siblings.map { $0.stop(signal: signal) }
        siblings = []
        let own = stopOwn(signal: signal)
        return others.first { $0 != own } ?? own
    }

    private func stopOwn(signal: Int32) -> Int32 {
        kill(process.processIdentifier, signal)
        guard let status = reap(process, timeout: 30) else {
            kill(process.processIdentifier, SIGKILL)  // a server that does not stop must not outlive the test
            reap(process)
            return -1
        }
        return status
    }

    /// Runs `spotter serve` with `options` on a fresh data folder until it exits: its status and what it wrote to
    /// standard error (for options refused before the server starts). An option wrongly accepted starts a server:
    /// it is stopped after 10 s (it then drains and exits 0) rather than hang.
    public static func serveUntilExit(_ options: [String]) throws -> (status: Int32, stderr: String) {
        let process = Process()
        process.executableURL = binary
        process.arguments = ["serve", "--port", "0", "--data-dir", NSTemporaryDirectory() + "spotter-refused-\(UUID().uuidString)"]
            + options
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = Pipe()
        try process.run()
        DispatchQueue.global().asyncAfter(deadline: .now() + 10) { if process.isRunning { process.terminate() } }
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, text)
    }

    public static func freePort() throws -> Int {
        let (fd, port) = try boundLoopbackSocket()
        close(fd)
        return port
    }

    /// A TCP socket bound to an ephemeral port of 127.0.0.1 (not listening), and that port. Kept open, the port is
    /// reserved: no other listener of this runner can take it.
    public static func boundLoopbackSocket() throws -> (fd: Int32, port: Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = fd >= 0 && withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else {
            if fd >= 0 { close(fd) }
            throw BlockingSocket.Failure(description: "no free port on 127.0.0.1")
        }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }
}
