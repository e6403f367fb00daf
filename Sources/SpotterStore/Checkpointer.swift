import Foundation
import GRDB

/// Copies committed pages from the WAL into the database file on its own thread and connection, so the writer
/// does not do it inside a commit.
///
/// SQLite's automatic checkpoint runs in the COMMIT that crosses the threshold: the writer reads those frames
/// back, writes them into the database file and fsyncs it while every job of the batch waits. A PASSIVE
/// checkpoint from another connection does the same work without taking the write lock, so the writer keeps
/// committing. The writer keeps a high automatic threshold as a backstop: it lets the WAL restart from the
/// beginning once everything is copied, and bounds the WAL if this thread falls behind.
final class Checkpointer: @unchecked Sendable {
    private let condition = NSCondition()
    /// Ends the wait between passes early: signalled once, by `stop`.
    private let wake = DispatchSemaphore(value: 0)
    private var stopping = false
    private var stopped = false
    private var thread: Thread?
    private var passes = 0

    private let queue: DatabaseQueue
    private let interval: TimeInterval

    init(path: String, interval: TimeInterval = 0.1) throws {
        var configuration = Configuration()
        configuration.busyMode = .timeout(5)
        configuration.label = "spotter.checkpoint"
        queue = try DatabaseQueue(path: path, configuration: configuration)
        self.interval = interval
        let thread = Thread { [self] in self.run() }
        thread.name = "spotter.store.checkpoint"
        self.thread = thread
        thread.start()
    }

    /// Checkpoint passes run so far (for tests).
    var passCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return passes
    }

    /// Stops after the pass in progress. Idempotent.
    func stop() {
        condition.lock()
        defer { condition.unlock() }
        if !stopping {
            stopping = true
            wake.signal()
        }
        while !stopped { condition.wait() }
    }

    private func run() {
        while waitForNextPass() {
            // A failed pass (busy, I/O) is retried next time; the writer's backstop keeps the WAL bounded.
            _ = try? queue.writeWithoutTransaction { db in try db.checkpoint(.passive) }
            condition.lock()
            passes += 1
            condition.unlock()
        }
        condition.lock()
        stopped = true
        thread = nil  // the thread's closure holds the checkpointer: break the cycle as it ends
        condition.broadcast()
        condition.unlock()
    }

    /// Waits `interval` (or until `stop`), then says whether to run another pass. The wait is measured on the
    /// monotonic clock (`DispatchTime`), not the wall clock: it is a pause between passes, not a time of day, and a
    /// wall clock set back must not stall the checkpoints (`NSCondition.wait(until:)` takes a wall-clock `Date`).
    private func waitForNextPass() -> Bool {
        _ = wake.wait(timeout: .now() + interval)
        condition.lock()
        defer { condition.unlock() }
        return !stopping
    }
}
