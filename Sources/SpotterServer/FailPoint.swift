import Glibc

/// Named moments at which a crash test can make the server die as a `kill -9` would, to check that nothing
/// acknowledged is lost and every thread's seqs stay unique and gapless through a crash at that exact moment
/// (not only wherever a signal from outside happens to land). Off unless `SPOTTER_FAIL_POINT=name:n` is set:
/// the n-th time the named moment is reached, the process sends itself SIGKILL. For tests only.
public enum FailPoint: String, CaseIterable, Sendable {
    /// An append is durable and its completion is back on the loop: nothing of it applied, no one answered.
    case commit
    /// After a batch's replies were handed to their sockets and its events published.
    case applied
    /// A checkpoint's last part is written.
    case checkpoint
    /// A checkpoint's last part is written, one whose snapshots were taken while records were in flight (the
    /// moment that once let a restart give a seq twice). Counted only for such checkpoints.
    case checkpointInFlight = "checkpoint.in-flight"
    /// A timer's records (an expiry, a reminder, an automatic completion) are durable and their events published.
    case timer
    /// A durable consumer of the log (`LogConsumer`) handled a batch and its position past it is not saved yet:
    /// after the restart the batch is handed over again. Counted per consumer, on its own thread;
    /// `consumer.delivered@<name>:n` counts that consumer's alone (several run side by side).
    case consumerDelivered = "consumer.delivered"
    /// An account change (a revocation, a profile) is committed in the accounts and its `account` record not yet
    /// logged: the other processes of a cluster must learn it otherwise (`API.pollRevocations`).
    case accountCommitted = "account.committed"
}

/// The armed fail point, if any. A value each holder counts on its own thread: the core's runner on the loop,
/// each log consumer on its own.
public struct FailPoints: Sendable {
    let armed: FailPoint?
    let at: Int
    /// `name@scope`: whose moments count (a consumer's name); nil: anyone's.
    let scope: String?
    private var hits = 0

    /// `name:n` or `name@scope:n` (n ≥ 1; without `:n`, 1); nil for anything else, so a typo arms nothing.
    public init?(_ text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count) else { return nil }
        let named = parts[0].split(separator: "@", omittingEmptySubsequences: false)
        guard (1...2).contains(named.count), let point = FailPoint(rawValue: String(named[0])) else { return nil }
        let count = parts.count == 2 ? Int(parts[1]) : 1
        guard let count, count >= 1, named.count == 1 || !named[1].isEmpty else { return nil }
        armed = point
        at = count
        scope = named.count == 2 ? String(named[1]) : nil
    }

    public init() {
        armed = nil
        at = 0
        scope = nil
    }

    /// Whether moments of `name` count (no scope, or this one).
    func counts(_ name: String) -> Bool { scope == nil || scope == name }

    /// Counts `point`; dies at the armed count.
    mutating func reached(_ point: FailPoint) {
        guard point == armed else { return }
        hits += 1
        if hits == at { kill(getpid(), SIGKILL) }
    }
}
