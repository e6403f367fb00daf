/// The ordering core of a process that follows the log (cluster mode, `Sources/SpotterPostgres/CLUSTER.md`):
/// records reach it from several writers — this process's own commits and the others' publications — in any
/// order, late, or twice, and it hands them on in position order, each exactly once. Pure: no clock of its own,
/// no I/O; the shell says what time it is and reads the store when asked.
///
/// It relies on positions being dense (every position from 1 up is a record: the PostgreSQL engine gives them out
/// as the last one + 1 under one lock, and a batch that rolls back gives its positions back). So the next record to
/// hand on is always `applied + 1`, and anything above it waits. A gap that does not close within the caller's
/// patience (a publication lost, a writer that died between its commit and its publication) is the caller's to
/// fill from the store: `gap` says which positions to read, and what is read goes through `receive` like the rest.
/// A gap at the very end (the newest records lost, nothing later arrived yet) shows no sign here: the shell also
/// reads the store after `applied` now and then, and after every reconnect of its broker.
public struct LogSequencer: Sendable {
    /// The highest position handed on: everything up to it has been, in order.
    public private(set) var applied: Int64
    /// Records above the next one expected, by position.
    private var waiting: [Int64: ChatRecord] = [:]
    /// Since when (the caller's clock, ms) the next record has been missing while later ones wait.
    private var missingSince: UInt64?

    /// Following from `position` (the last one a start loaded).
    public init(after position: Int64) {
        applied = position
    }

    /// How many records wait for an earlier one.
    public var waitingCount: Int { waiting.count }

    /// Takes records in (any order, repeats allowed) and returns those that can go on now, in position order.
    /// Records at or below `applied` were handed on already and are dropped.
    public mutating func receive(_ records: [ChatRecord], now: UInt64) -> [ChatRecord] {
        for record in records where record.pos > applied {
            waiting[record.pos] = record
        }
        var ready: [ChatRecord] = []
        while let next = waiting.removeValue(forKey: applied + 1) {
            ready.append(next)
            applied = next.pos
        }
        if waiting.isEmpty {
            missingSince = nil
        } else if !ready.isEmpty || missingSince == nil {
            missingSince = now  // a new gap (or the old one moved): its patience starts now
        }
        return ready
    }

    /// The positions to read from the store when the next record has been missing for `patience` ms while later
    /// ones wait: `(after, through)` — read the records with `after < pos <= through` and `receive` them.
    public func gap(now: UInt64, patience: UInt64) -> (after: Int64, through: Int64)? {
        guard let since = missingSince, now &- since >= patience, let lowest = waiting.keys.min() else { return nil }
        return (applied, lowest - 1)
    }
}
