import Synchronization
import SpotterPorts

/// The cluster's timer lease on PostgreSQL: a session-level advisory lock held by one connection of its own.
/// PostgreSQL frees it when that connection ends, so a process that dies (kill -9, a lost machine) gives it up
/// as soon as the server notices the connection is gone, and another process's next `hold()` takes it.
public final class PostgresTimerLease: TimerLease {
    /// Not the writer's batch lock (`PostgresWriter.appendLock`): this one is held for as long as a process lives.
    static let key: Int64 = 0x5370_6f74_7469_6d72  // "Spottimr"

    private let url: String
    /// The connection holding the lock (nil: not held). Used from one blocking caller at a time.
    private let state = Mutex<PGConnection?>(nil)

    public init(url: String) {
        self.url = url
    }

    public func hold() -> Bool {
        state.withLock { held in
            if let connection = held {
                // Still ours while the connection lives; a broken one has lost it (the server freed it).
                if !connection.isBroken, (try? connection.exec("SELECT 1")) != nil { return true }
                held = nil
            }
            guard let connection = try? PGConnection(url: url),
                  let answer = try? connection.exec("SELECT pg_try_advisory_lock($1)", [String(PostgresTimerLease.key)]),
                  answer.scalar == "t" else { return false }
            held = connection
            return true
        }
    }

    public func release() {
        state.withLock { held in
            if let connection = held { _ = try? connection.exec("SELECT pg_advisory_unlock($1)", [String(PostgresTimerLease.key)]) }
            held = nil
        }
    }
}
