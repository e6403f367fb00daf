import SpotterCore

/// The log as its durable consumers read it: everything that leaves the process without a socket (push
/// notifications, webhooks, reminders by email or SMS, the purge, the tap file) reads the log from a position of
/// its own, saved in the store beside the log, so it resumes where it left off after a restart or a kill -9.
///
/// Engines: `ChatLog` (SQLite), `PostgresChatLog`, `MemoryChatLog`; `ChatLogConformanceTests` holds each to this
/// contract. Every method blocks: call them from a consumer's own thread, never from the loop.
///
/// Guarantees every engine gives:
/// - `recordsAfter` returns committed records only, in log order; once `newestPosition()` has returned `n`, every
///   record at or below `n` is committed and readable (positions are given in commit order), so a reader that
///   reads `recordsAfter(p, through: n)` and has handled all of them may move to `n` without missing any;
/// - `saveConsumerPosition` is durable when it returns, and a saved position only moves forward (a smaller one
///   than the saved one changes nothing); it goes through the log's one writer, sharing its group commit, so a
///   consumer never holds appends back by more than one row in a batch.
public protocol ConsumableLog: LogReader {
    /// The position consumer `name` saved last, nil if it never saved one.
    func consumerPosition(_ name: String) throws -> Int64?
    /// Saves `position` as consumer `name`'s (if it is past the saved one); returns once it is durable.
    func saveConsumerPosition(_ name: String, _ position: Int64) throws
    /// As `recordsAfter(_:through:limit:)`, of these kinds only (`limit` counts those): the engine passes over the
    /// others without decoding them.
    func recordsAfter(_ pos: Int64, through: Int64?, limit: Int, kinds: Set<ChatRecord.Kind>) throws -> [ChatRecord]
}

extension LogSQL {
    /// `kind IN (…)` of these kinds, as literals (`kind IN (NULL)` — no row — for none).
    public static func kindIn(_ kinds: Set<ChatRecord.Kind>) -> String {
        let numbers = kinds.map(\.rawValue).sorted().map(String.init)
        return "kind IN (\(numbers.isEmpty ? "NULL" : numbers.joined(separator: ", ")))"
    }
}

/// The log read in position order from a position: what every reader of the log after the fact shares — the
/// durable consumers (from a saved position) and a cluster's follower (`FollowableLog`, from the position its
/// state has applied, which a restart rebuilds from the checkpoint rather than reading it back).
public protocol LogReader: AnyObject, Sendable {
    /// The newest committed position (0 for an empty log).
    func newestPosition() throws -> Int64
    /// Every thread's records with `after < pos <= through` (nil: no upper bound), in log order, at most `limit`.
    func recordsAfter(_ pos: Int64, through: Int64?, limit: Int) throws -> [ChatRecord]
}

/// Where a consumer that has no saved position yet starts.
public enum LogConsumerStart: Sendable, Equatable {
    /// At the log's first record: it sees the whole history.
    case oldest
    /// After the newest record when it first runs (saved at once): it sees what is appended from then on.
    case newest
}

/// A durable consumer of the log: it gets every record in log order, at least once, across restarts and
/// crashes. Records handed over and not yet marked handled (its saved position) come again after a crash, with
/// the same delivery ids; a receiver that must act once deduplicates by them.
///
/// `deliver` runs on the consumer's own thread (never the loop's); it may block while it hands the records on
/// (a file, an HTTP call), which delays only this consumer. It returns once the records are handled (written,
/// accepted by the receiver); then the runner saves the position past them. Throwing leaves the position where
/// it is: the same records come again after a back-off.
public protocol LogConsumer: AnyObject, Sendable {
    /// The name its position is saved under: stable across restarts, unique among the consumers of one log.
    var name: String { get }
    /// Where it starts the first time it runs (no saved position).
    var start: LogConsumerStart { get }
    /// Hands these records on, oldest first (never empty).
    func deliver(_ deliveries: [LogDelivery]) throws
    /// The kinds of record it reads; nil (the default): every record. A consumer that acts on a few kinds only
    /// (the purge) is handed those, and its position still moves past the rest.
    var kinds: Set<ChatRecord.Kind>? { get }
}

extension LogConsumer {
    public var kinds: Set<ChatRecord.Kind>? { nil }
}

/// One record handed to a consumer, with the id a receiver deduplicates by: the same record has the same id every
/// time it is delivered, by any process of a cluster, and no other record of the log has it.
public struct LogDelivery: Sendable, Equatable {
    public let record: ChatRecord

    public init(record: ChatRecord) {
        self.record = record
    }

    /// `pos:<position>`: positions are never reused.
    public var id: String { "pos:\(record.pos)" }
}
