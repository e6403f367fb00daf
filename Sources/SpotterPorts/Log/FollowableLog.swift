import SpotterCore

/// What a process of a cluster needs from the shared log besides `ChatStore` (cluster mode; the PostgreSQL
/// engine has it): every process writes its own commands' records and follows everyone's, in position order
/// (`LogSequencer`), and reads from here (`LogReader.recordsAfter`, as the durable consumers do) what the log stream
/// between processes did not bring.
public protocol FollowableLog: LogReader {
    /// Threads by number with their participants' names (a thread another process linked). Blocking.
    func threads(nos: [Int64]) throws -> (threads: [ThreadRow], names: [String: String])
    /// Some threads as the store holds them, read in one snapshot: their saved views, their records after the
    /// checkpoint's position (to apply on top) and their people's names. What a
    /// process reads to set those threads right after an append the store refused (a seq another process took
    /// first) instead of rebuilding everything. Blocking.
    func reloadThreads(nos: [Int64]) throws -> ReloadedThreads
}

/// Takes the lock of the cluster's timers (session reminders, expiry, completion): one process at a time fires
/// them, and another takes over when it dies. Blocking: never on the loop.
public protocol TimerLease: AnyObject, Sendable {
    /// Whether this process holds the lease now (taking it if it is free). A lost connection gives it up.
    func hold() -> Bool
    /// Gives the lease up (at shutdown).
    func release()
}

/// Threads read again from the store (`FollowableLog.reloadThreads`).
public struct ReloadedThreads: Sendable {
    public let threads: [ThreadRow]
    public let names: [String: String]
    /// The threads' records after the checkpoint's position, in log order.
    public let tail: [ChatRecord]

    public init(threads: [ThreadRow], names: [String: String], tail: [ChatRecord]) {
        self.threads = threads
        self.names = names
        self.tail = tail
    }
}
