import Foundation

/// `nats-server` on a free loopback port, stopped by PID (SIGTERM, then SIGKILL), at the latest when this
/// object goes, and by a watchdog if the test runner dies.
public final class NATSServer: @unchecked Sendable {
    public private(set) var port = 0
    private var process: Process?
    public var url: String { "nats://127.0.0.1:\(port)" }

    /// Debian's path, or the first `nats-server` on PATH.
    public static var binary: String? {
        let path = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map { "\($0)/nats-server" }
        return (["/usr/sbin/nats-server"] + path).first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// On a port the kernel just handed out; another one if the server could not take it (3 tries).
    public init() throws {
        guard Self.binary != nil else {
            throw BlockingSocket.Failure(description: """
                nats-server not found: install Debian's nats-server (deploy/install-deps.sh --test) — the cluster \
                broker's tests need a real server
                """)
        }
        for attempt in 1...3 {
            port = try Self.freePort()
            do {
                try start()
                return
            } catch where attempt < 3 {
                stop()
            }
        }
    }

    deinit { stop() }

    public static func freePort() throws -> Int { try ServerProcess.freePort() }

    /// Starts the server on `port` and waits (at most 10 s) until it accepts connections.
    public func start() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.binary!)
        process.arguments = ["-a", "127.0.0.1", "-p", String(port)]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
        killWhenRunnerExits(process.processIdentifier)
        try waitUntil(10, "nats-server accepting on port \(port)") { !process.isRunning || (try? BlockingSocket(port: self.port)) != nil }
        guard process.isRunning else { throw BlockingSocket.Failure(description: "nats-server exited at start on port \(port)") }
    }

    /// Stops and starts the server on the same port.
    public func restart() throws {
        stop()
        try start()
    }

    /// SIGTERM, and SIGKILL if it is still running 3 s later.
    public func stop() {
        guard let process else { return }
        self.process = nil
        let pid = process.processIdentifier
        kill(pid, SIGTERM)
        if reap(process, timeout: 3) == nil {
            kill(pid, SIGKILL)
            reap(process)
        }
    }
}
