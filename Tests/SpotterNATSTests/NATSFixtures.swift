import EventLoop
import Foundation
import SpotterBroker
import Synchronization
@testable import SpotterNATS
import TestSupport

/// What a socket would have been sent.
final class Recorder: BrokerSubscriber, @unchecked Sendable {
    private let lock = NSLock()
    private var logged: [(Int64, String)] = []
    private var others: [String] = []

    func deliver(cursor: Int64, frame: EventFrame) { lock.withLock { logged.append((cursor, frame.json)) } }
    func deliverEphemeral(_ frame: EventFrame) { lock.withLock { others.append(frame.json) } }

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

    init(_ url: String, beat: UInt64 = NATSBrokerTests.beat, deadAfter: UInt64 = NATSBrokerTests.dead,
         subjects: NATSSubjects = .standard) throws {
        let id = NATSBroker.randomNodeID()
        nodeID = id
        let made = thread.value { loop in
            Result { try NATSBroker(loop: loop, url: url, nodeID: id, heartbeatMilliseconds: beat, deadAfterMilliseconds: deadAfter,
                                    subjects: subjects) }
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

    /// From now on, every presence change this process's broker reports, in order.
    func recordPresenceChanges() -> PresenceChanges {
        let changes = PresenceChanges()
        run { broker in broker.presenceChanged = { user, online in changes.add(user: user, online: online) } }
        return changes
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

/// Presence changes as a broker reported them, each as "user online" ("u true", "u false").
final class PresenceChanges: Sendable {
    private let changes = Mutex<[String]>([])
    func add(user: String, online: Bool) { changes.withLock { $0.append("\(user) \(online)") } }
    var all: [String] { changes.withLock { $0 } }
}
