import EventLoop
import Foundation
import Synchronization
import Testing
import SpotterBroker
import SpotterCore
@testable import SpotterNATS
import TestSupport

/// The NATS broker between processes, against a real `nats-server` started on a free port. Each "process" is a
/// loop on its own thread with its own broker and connection, as in a cluster.
@Suite("NATS broker", .serialized)
struct NATSBrokerTests {
    /// Short beats so that presence tests take well under a second.
    static let beat: UInt64 = 100
    static let dead: UInt64 = 500

    @Test func eventsPublishedOnOneProcessReachTheUsersSocketsOnAnotherInOrderOnce() throws {
        let nats = try NATSServer()
        defer { nats.stop() }
        let a = try Node(nats.url), b = try Node(nats.url)
        defer { a.stop(); b.stop() }
        let onA = Recorder(), onB = Recorder()
        b.run { $0.subscribe(onB, userID: "u1") }
        a.run { $0.subscribe(onA, userID: "u1") }
        try a.waitUntil { $0.isOnline("u1") }
        // B's subscription is active once A has seen B's presence (same connection, NATS keeps its order).
        try a.waitUntilRemote(b.nodeID, has: "u1")
        a.run { broker in
            for cursor in 1...1000 { broker.publish(userID: "u1", cursor: Int64(cursor), frame: #"{"n":\#(cursor)}"#) }
            broker.publishEphemeral(userID: "u1", frame: "typing")
        }
        try onB.waitFor(logged: 1000)
        #expect(onB.cursors == Array(1...1000))
        #expect(onB.frames.last == #"{"n":1000}"#)
        try onB.waitFor(ephemeral: 1)
        // A's own socket got its own publications once each (no echo from NATS).
        #expect(onA.cursors == Array(1...1000))
        #expect(onA.ephemeral == ["typing"])
        Thread.sleep(forTimeInterval: 0.2)
        #expect(onB.cursors.count == 1000 && onA.cursors.count == 1000)
    }

    @Test func aUsersDevicesOnTwoProcessesEachGetEveryEventOfAThird() throws {
        let nats = try NATSServer()
        defer { nats.stop() }
        let a = try Node(nats.url), b = try Node(nats.url), c = try Node(nats.url)
        defer { a.stop(); b.stop(); c.stop() }
        let phone = Recorder(), laptop = Recorder()
        a.run { $0.subscribe(phone, userID: "coach") }
        b.run { $0.subscribe(laptop, userID: "coach") }
        try c.waitUntilRemote(a.nodeID, has: "coach")
        try c.waitUntilRemote(b.nodeID, has: "coach")
        c.run { broker in
            for cursor in 1...200 { broker.publish(userID: "coach", cursor: Int64(cursor), frame: "f\(cursor)") }
        }
        try phone.waitFor(logged: 200)
        try laptop.waitFor(logged: 200)
        #expect(phone.cursors == Array(1...200) && laptop.cursors == Array(1...200))
    }

    @Test func presenceIsClusterWideAndAProcessThatStopsBeatingLeavesNoGhosts() throws {
        let nats = try NATSServer()
        defer { nats.stop() }
        let a = try Node(nats.url), b = try Node(nats.url)
        defer { a.stop(); b.stop() }
        let changes = Mutex<[String]>([])
        b.run { broker in broker.presenceChanged = { user, online in changes.withLock { $0.append("\(user) \(online)") } } }
        let first = Recorder(), second = Recorder(), onB = Recorder()
        a.run { $0.subscribe(first, userID: "u") }
        try b.waitUntil { $0.isOnline("u") }
        a.run { $0.subscribe(second, userID: "u") }  // a second device changes nothing
        a.run { $0.unsubscribe(first, userID: "u") }
        Thread.sleep(forTimeInterval: 0.2)
        #expect(b.value { $0.isOnline("u") })
        a.run { $0.unsubscribe(second, userID: "u") }
        try b.waitUntil { !$0.isOnline("u") }
        #expect(changes.withLock { $0 } == ["u true", "u false"])

        // Online on both: leaving one keeps it online everywhere.
        a.run { $0.subscribe(first, userID: "v") }
        b.run { $0.subscribe(onB, userID: "v") }
        try b.waitUntilRemote(a.nodeID, has: "v")
        b.run { $0.unsubscribe(onB, userID: "v") }
        #expect(b.value { $0.isOnline("v") })

        // A process that joins later learns who is online already.
        let late = try Node(nats.url)
        defer { late.stop() }
        try late.waitUntil { $0.isOnline("v") }

        // A dies without a goodbye (kill -9): its users go offline once its beats stop.
        let died = Date()
        a.crash()
        try b.waitUntil(timeout: 5) { !$0.isOnline("v") }
        try late.waitUntil(timeout: 5) { !$0.isOnline("v") }
        let took = Date().timeIntervalSince(died)
        #expect(took >= Double(Self.dead) / 1000 * 0.8, "offline after \(took) s: before the dead-after time")
    }

    @Test func aNATSRestartIsSurvivedWithoutHelp() throws {
        let nats = try NATSServer()
        defer { nats.stop() }
        let a = try Node(nats.url), b = try Node(nats.url)
        defer { a.stop(); b.stop() }
        let links = Mutex<[String]>([])
        a.run { broker in broker.connectionChanged = { up in links.withLock { $0.append(up ? "up" : "down") } } }
        let onB = Recorder()
        b.run { $0.subscribe(onB, userID: "u") }
        try a.waitUntilRemote(b.nodeID, has: "u")

        try nats.restart()
        try a.waitUntil(timeout: 10) { $0.isConnected }
        #expect(links.withLock { $0 } == ["down", "up"])
        // Presence heals (both announce again on reconnect) and events flow again.
        try b.waitUntil(timeout: 10) { $0.isConnected }
        try a.waitUntilRemote(b.nodeID, has: "u", timeout: 10)
        a.run { $0.publish(userID: "u", cursor: 7, frame: "after") }
        try onB.waitFor(logged: 1)
        #expect(onB.frames == ["after"])
    }

    /// The log stream with two writers: a follower gets every batch and puts both writers' records in position
    /// order, each once (positions interleave as two processes' commits do).
    @Test func aFollowerOrdersTwoWritersRecordsFromTheLogStream() throws {
        let nats = try NATSServer()
        defer { nats.stop() }
        let a = try Node(nats.url), c = try Node(nats.url), follower = try Node(nats.url)
        defer { a.stop(); c.stop(); follower.stop() }
        let out = Mutex<[Int64]>([])
        let sequencer = Mutex(LogSequencer(after: 0))
        follower.run { broker in
            try! broker.followLog { text in
                guard let records = LogStreamCodec.decode(text) else { return }
                let ready = sequencer.withLock { $0.receive(records, now: 0) }
                out.withLock { $0 += ready.map(\.pos) }
            }
        }
        // The subscription is active once the follower's presence reached the writers (same connection, in order).
        follower.run { $0.subscribe(Recorder(), userID: "marker") }
        try a.waitUntilRemote(follower.nodeID, has: "marker")
        try c.waitUntilRemote(follower.nodeID, has: "marker")
        func batch(_ positions: [Int64]) -> String {
            LogStreamCodec.encode(positions.map {
                ChatRecord(pos: $0, kind: .message, threadNo: $0 % 2 + 1, side: .client, seq: $0, ref: "m\($0)", body: "b\($0)", at: 0)
            })
        }
        // A commits the odd positions, C the even ones, in batches of two; each publishes after its commit.
        for start in stride(from: 1, through: 197, by: 4) {
            let first = Int64(start)
            a.run { $0.publishLog(batch([first, first + 2])) }
            c.run { $0.publishLog(batch([first + 1, first + 3])) }
        }
        try poll(5) { out.withLock { $0.count } == 200 }
        #expect(out.withLock { $0 } == Array(1...200))
        #expect(sequencer.withLock { $0.waitingCount } == 0)
    }

    @Test func anUnreachableServerIsATypedErrorNamingIt() throws {
        let port = try NATSServer.freePort()
        let loop = LoopThread()
        defer { loop.stop() }
        let outcome = loop.value { loop in
            Result { try NATSBroker(loop: loop, url: "nats://127.0.0.1:\(port)") }
        }
        guard case .failure(let error) = outcome else {
            Issue.record("connected to nothing")
            return
        }
        #expect(error is NATSBrokerError)
        #expect("\(error)".contains("nats://127.0.0.1:\(port)"))
    }

    @Test func aUserIDCannotReachAnotherUsersSubject() throws {
        for id in ["a.b", "a.*", ">", "a b", "", "=61", "é"] {
            let subject = NATSBroker.subject(id)
            #expect(subject.dropFirst("spotter.user.".count).allSatisfy { $0 != "." && $0 != "*" && $0 != ">" && $0 != " " },
                    "\(id) → \(subject)")
            #expect(NATSBroker.userID(subject: subject) == (id.isEmpty ? nil : id) || id.isEmpty)
        }
        #expect(NATSBroker.subject("a.b") != NATSBroker.subject("a"))
        #expect(NATSBroker.subject("=61") != NATSBroker.subject("a"))  // "a" is 0x61: an id spelled like an encoding stays apart

        let nats = try NATSServer()
        defer { nats.stop() }
        let a = try Node(nats.url), b = try Node(nats.url)
        defer { a.stop(); b.stop() }
        let plain = Recorder(), dotted = Recorder()
        b.run { $0.subscribe(plain, userID: "a"); $0.subscribe(dotted, userID: "a.b") }
        try a.waitUntilRemote(b.nodeID, has: "a.b")
        a.run { $0.publish(userID: "a.b", cursor: 1, frame: "for a.b"); $0.publish(userID: ">", cursor: 2, frame: "for >") }
        try dotted.waitFor(logged: 1)
        Thread.sleep(forTimeInterval: 0.2)
        #expect(plain.cursors.isEmpty && dotted.cursors == [1])
    }
}

// MARK: - Fixtures

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
        try poll(timeout) { self.cursors.count >= count }
    }

    func waitFor(ephemeral count: Int, timeout: TimeInterval = 5) throws {
        try poll(timeout) { self.ephemeral.count >= count }
    }
}

func poll(_ timeout: TimeInterval, _ condition: () -> Bool) throws {
    let deadline = Date().addingTimeInterval(timeout)
    while !condition() {
        guard Date() < deadline else { throw BlockingSocket.Failure(description: "condition not met within \(timeout) s") }
        Thread.sleep(forTimeInterval: 0.01)
    }
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

    /// Runs `body` on the loop and returns its value.
    func value<T>(_ body: @escaping (Loop) -> T) -> T {
        let box = LockedBox<T>()
        let done = DispatchSemaphore(value: 0)
        let loop = self.loop!
        nonisolated(unsafe) let body = body
        loop.execute {
            box.set(body(loop))
            done.signal()
        }
        done.wait()
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

/// One Spotter process's broker.
final class Node: @unchecked Sendable {
    private let thread = LoopThread()
    private var broker: NATSBroker!
    let nodeID: String

    init(_ url: String) throws {
        let id = NATSBroker.randomNodeID()
        nodeID = id
        broker = try thread.value { loop in
            Result { try NATSBroker(loop: loop, url: url, nodeID: id, heartbeatMilliseconds: NATSBrokerTests.beat,
                                    deadAfterMilliseconds: NATSBrokerTests.dead) }
        }.get()
    }

    func run(_ body: @escaping (NATSBroker) -> Void) {
        let broker = self.broker!
        thread.value { _ in body(broker) }
    }

    func value<T>(_ body: @escaping (NATSBroker) -> T) -> T {
        let broker = self.broker!
        return thread.value { _ in body(broker) }
    }

    func waitUntil(timeout: TimeInterval = 5, _ condition: @escaping (NATSBroker) -> Bool) throws {
        try poll(timeout) { value(condition) }
    }

    /// Until this process has heard `node` report `user` online.
    func waitUntilRemote(_ node: String, has user: String, timeout: TimeInterval = 5) throws {
        try waitUntil(timeout: timeout) { $0.remoteReports(node: node, user: user) }
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

/// `nats-server` on a free loopback port, stopped by PID (and by a watchdog if the test runner dies).
final class NATSServer: @unchecked Sendable {
    private(set) var port = 0
    private var process: Process?
    var url: String { "nats://127.0.0.1:\(port)" }

    static var binary: String? {
        ["/usr/sbin/nats-server", "/usr/bin/nats-server", "/usr/local/bin/nats-server"]
            .first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// On a port the kernel just handed out; another one if the server could not take it (3 tries).
    init() throws {
        for attempt in 1...3 {
            port = try Self.freePort()
            do {
                try start()
                return
            } catch where attempt < 3 && Self.binary != nil {
                stop()
            }
        }
    }

    static func freePort() throws -> Int { try ServerProcess.freePort() }

    private func start() throws {
        guard let binary = Self.binary else {
            throw BlockingSocket.Failure(description: """
                nats-server not found: install Debian's nats-server (deploy/install-deps.sh --test does) — the \
                cluster broker's tests need a real server
                """)
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["-a", "127.0.0.1", "-p", String(port)]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
        killWhenRunnerExits(process.processIdentifier)
        try poll(10) { !process.isRunning || (try? BlockingSocket(port: self.port)) != nil }
        guard process.isRunning else { throw BlockingSocket.Failure(description: "nats-server exited at start on port \(port)") }
    }

    /// Stops the server (SIGKILL, as a crash) and starts it again on the same port.
    func restart() throws {
        stop()
        try start()
    }

    func stop() {
        guard let process else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        self.process = nil
    }
}
