import EventLoop
import Foundation
import SpotterBroker
@testable import SpotterNATS
import TestSupport

/// What a socket would have been sent.
final class Recorder: BrokerSubscriber, @unchecked Sendable {
    private let lock = NSLock()
    private var logged: [(Int64, String)] = []
    private var others: [String] = []

    func deliver(cursor: Int64, frame: String) { lock.withLock { logged.append((cursor, frame)) } }
    func deliverEphemeral(_ frame: String) { lock.withLock { others.append(frame) } }

    var cursors: [Int64] { lock.withLock { logged.map(\.0) } }
    var frames: [String] { lock.withLock { logged.map(\.1) } }
    var ephemeral: [String] { lock.withLock { others } }

    func waitFor(logged count: Int, timeout: TimeInterval = 5) throws {
        try poll(timeout, "\(count) logged events (have \(cursors.count))") { self.cursors.count >= count }
    }

    func waitFor(ephemeral count: Int, timeout: TimeInterval = 5) throws {
        try poll(timeout, "\(count) ephemeral events (have \(ephemeral.count))") { self.ephemeral.count >= count }
    }
}

/// Waits until `condition` holds, or throws after `timeout` saying what did not happen.
func poll(_ timeout: TimeInterval, _ what: @autoclosure () -> String = "condition", _ condition: () -> Bool) throws {
    let deadline = Date().addingTimeInterval(timeout)
    while !condition() {
        guard Date() < deadline else { throw BlockingSocket.Failure(description: "\(what()): not within \(timeout) s") }
        Thread.sleep(forTimeInterval: 0.01)
    }
}

/// Threads of this process now (Linux).
func threadCount() -> Int {
    (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count) ?? 0
}

/// A loop running on a thread of its own, kept alive by a timer; the test thread runs blocks on it and waits.
final class LoopThread: @unchecked Sendable {
    private(set) var loop: Loop!
    private let ready = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private var keepAlive: EventLoop.Timer?

    init() {
        Thread.detachNewThread { [self] in
            loop = Loop()
            keepAlive = EventLoop.Timer(loop: loop)
            keepAlive!.start(after: 60_000, repeat: 60_000) {}
            ready.signal()
            loop.run()
            loop.closeAllHandles()
            finished.signal()
        }
        ready.wait()
    }

    /// Runs `body` on the loop and returns its value; a loop that does not answer within 10 s is a failure
    /// (the test stops there instead of hanging the suite).
    func value<T>(_ body: @escaping (Loop) -> T) -> T {
        let box = LockedBox<T>()
        let done = DispatchSemaphore(value: 0)
        let loop = self.loop!
        nonisolated(unsafe) let body = body
        loop.execute {
            box.set(body(loop))
            done.signal()
        }
        precondition(done.wait(timeout: .now() + 10) == .success, "the loop did not run a job within 10 s")
        return box.get()
    }

    func stop() {
        value { [self] loop in
            keepAlive?.close()
            loop.stop()
        }
        finished.wait()
    }
}

final class LockedBox<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: T?
    func set(_ value: T) { lock.withLock { stored = value } }
    func get() -> T { lock.withLock { stored! } }
}

/// One Spotter process's broker: its own loop, thread and NATS connection.
final class Node: @unchecked Sendable {
    private let thread = LoopThread()
    private var broker: NATSBroker!
    let nodeID: String

    init(_ url: String, beat: UInt64 = NATSBrokerTests.beat, deadAfter: UInt64 = NATSBrokerTests.dead) throws {
        let id = NATSBroker.randomNodeID()
        nodeID = id
        let made = thread.value { loop in
            Result { try NATSBroker(loop: loop, url: url, nodeID: id, heartbeatMilliseconds: beat, deadAfterMilliseconds: deadAfter) }
        }
        guard case .success(let broker) = made else {
            thread.stop()
            _ = try made.get()
            return
        }
        self.broker = broker
    }

    func run(_ body: @escaping (NATSBroker) -> Void) {
        let broker = self.broker!
        thread.value { _ in body(broker) }
    }

    func value<T>(_ body: @escaping (NATSBroker) -> T) -> T {
        let broker = self.broker!
        return thread.value { _ in body(broker) }
    }

    func waitUntil(timeout: TimeInterval = 5, _ what: String = "condition", _ condition: @escaping (NATSBroker) -> Bool) throws {
        try poll(timeout, what) { value(condition) }
    }

    /// Until this process has heard `node` report `user` online.
    func waitUntilRemote(_ node: String, has user: String, timeout: TimeInterval = 5) throws {
        try waitUntil(timeout: timeout, "\(nodeID) hears \(node) report \(user) online") { $0.remoteReports(node: node, user: user) }
    }

    /// As kill -9 would: the connection goes without a goodbye and the beats stop.
    func crash() {
        run { $0.abandon() }
    }

    func stop() {
        run { $0.close() }
        thread.stop()
    }
}

/// `nats-server` on a free loopback port, stopped by PID (SIGTERM, then SIGKILL), at the latest when this
/// object goes, and by a watchdog if the test runner dies.
final class NATSServer: @unchecked Sendable {
    private(set) var port = 0
    private var process: Process?
    var url: String { "nats://127.0.0.1:\(port)" }

    /// Debian's path, or the first `nats-server` on PATH.
    static var binary: String? {
        let path = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map { "\($0)/nats-server" }
        return (["/usr/sbin/nats-server"] + path).first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// On a port the kernel just handed out; another one if the server could not take it (3 tries).
    init() throws {
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

    static func freePort() throws -> Int { try ServerProcess.freePort() }

    /// Starts the server on `port` and waits (at most 10 s) until it accepts connections.
    func start() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.binary!)
        process.arguments = ["-a", "127.0.0.1", "-p", String(port)]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
        killWhenRunnerExits(process.processIdentifier)
        try poll(10, "nats-server accepting on port \(port)") { !process.isRunning || (try? BlockingSocket(port: self.port)) != nil }
        guard process.isRunning else { throw BlockingSocket.Failure(description: "nats-server exited at start on port \(port)") }
    }

    /// Stops and starts the server on the same port.
    func restart() throws {
        stop()
        try start()
    }

    /// SIGTERM, and SIGKILL if it is still running 3 s later.
    func stop() {
        guard let process else { return }
        self.process = nil
        let pid = process.processIdentifier
        kill(pid, SIGTERM)
        if (try? poll(3) { !process.isRunning }) == nil { kill(pid, SIGKILL) }
        process.waitUntilExit()
    }
}
