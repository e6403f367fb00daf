import Foundation
import Logging
import SpotterServer
import SpotterStore

/// Runs a real `Server` on its own thread on a free loopback port.
public final class TestServer: @unchecked Sendable {
    public let server: Server
    public var port: Int { server.port }
    private let finished = DispatchSemaphore(value: 0)

    /// Starts a server with `configure` applied to a test configuration
    /// (port 0, echo on, in-memory store).
    public init(_ configure: (inout ServerConfig) -> Void = { _ in }) throws {
        var config = ServerConfig()
        config.port = 0
        config.echoEnabled = true
        configure(&config)
        let store = try Store.inMemory().recordingStart(version: Server.version, at: 0)
        var logger = Logger(label: "spotter.test")
        logger.logLevel = .warning
        server = Server(config: config, store: store, logger: logger)
        try server.start()
        let server = self.server
        let finished = self.finished
        Thread.detachNewThread {
            server.run()
            finished.signal()
        }
    }

    /// Asks for a graceful shutdown and waits until `run()` has returned.
    /// Returns false if it did not within `timeoutSeconds`.
    @discardableResult
    public func stop(timeoutSeconds: Double = 15) -> Bool {
        server.requestShutdown()
        return finished.wait(timeout: .now() + timeoutSeconds) == .success
    }

    /// Waits for `run()` to return by itself (e.g. after a signal).
    public func waitUntilStopped(timeoutSeconds: Double) -> Bool {
        finished.wait(timeout: .now() + timeoutSeconds) == .success
    }

    /// GET /metrics on a fresh connection, as lines.
    public func metricsText() throws -> String {
        let client = try HTTPTestClient(port: port)
        return try client.request("GET", "/metrics").bodyText
    }

    /// The value of one metric line (exact name with labels), or nil.
    public func metric(_ name: String) throws -> Double? {
        for line in try metricsText().split(separator: "\n") where line.hasPrefix(name + " ") {
            return Double(line.split(separator: " ").last!)
        }
        return nil
    }
}
