import SpotterProtocol

/// The commit pipeline: gathers the records decided during one loop iteration, hands them to the log as one
/// append (one transaction, one group commit), and completes each submission in order once the log says they
/// are durable, with their positions filled in. It bounds what is in flight (past `maxInFlight` records the
/// shell refuses new writes) and stops accepting while the shell recovers from a failed append. It knows
/// nothing of chat: records in, positions out.
///
/// Single-threaded: the shell calls it, and delivers the log's completions to it, on its loop (the simulator on
/// its one thread).
public final class CommitPipeline {
    /// Appends records to the log and calls back once with their positions (or the error), in submission order.
    public typealias Append = ([ChatRecord], @escaping (Result<[Int64], any Error>) -> Void) -> Void
    /// Appends records and calls back once with them as stored: positions filled in, and a thread message's seq
    /// as the log gave it (a log that numbers messages itself, `SeqGivingLog`; the seq decided was a guess).
    public typealias StoredAppend = ([ChatRecord], @escaping (Result<[ChatRecord], any Error>) -> Void) -> Void

    /// What the shell hears besides each submission's completion.
    public struct Hooks {
        /// A batch is durable, before any of its submissions completes (a crash test's `commit` fail point).
        public var durable: () -> Void = {}
        /// Every submission of a durable batch completed: its records, in position order.
        public var completed: ([ChatRecord]) -> Void = { _ in }
        /// A batch failed (its submissions were told `unavailable` first): what failed, and why.
        public var failed: ([ChatRecord], any Error) -> Void = { _, _ in }
        /// While the shell recovers, the last record in flight came back (after `completed` or `failed`): the
        /// rebuild may start now. Without it a recovery whose last completion was a success (a batch submitted
        /// after a resume, committed behind a stale one that failed) waited for a failure that never came, and
        /// the process refused every write and followed nothing until restarted.
        public var quiet: () -> Void = {}

        public init() {}
    }

    private struct Submission {
        var records: [ChatRecord]
        var done: (Result<[ChatRecord], APIError>) -> Void
    }

    private let append: StoredAppend
    private let hooks: Hooks
    public let maxInFlight: Int
    /// Submissions gathered since the last flush.
    private var gathered: [Submission] = []
    /// Records handed to the log and not yet come back (and those gathered).
    public private(set) var inFlight = 0
    /// The newest position whose commit completed here.
    public private(set) var committedThrough: Int64
    /// Set while the shell recovers after a failed append: new writes are refused.
    public var recovering = false

    public convenience init(maxInFlight: Int, committedThrough: Int64 = 0, hooks: Hooks = Hooks(), append: @escaping Append) {
        self.init(maxInFlight: maxInFlight, committedThrough: committedThrough, hooks: hooks, storing: { records, done in
            append(records) { result in
                done(result.map { positions in
                    var stored = records
                    for index in stored.indices where index < positions.count { stored[index].pos = positions[index] }
                    return stored
                })
            }
        })
    }

    /// A pipeline over a log that answers with the records as stored (`StoredAppend`).
    public static func storing(maxInFlight: Int, committedThrough: Int64 = 0, hooks: Hooks = Hooks(),
                               _ append: @escaping StoredAppend) -> CommitPipeline {
        CommitPipeline(maxInFlight: maxInFlight, committedThrough: committedThrough, hooks: hooks, storing: append)
    }

    private init(maxInFlight: Int, committedThrough: Int64, hooks: Hooks, storing append: @escaping StoredAppend) {
        self.maxInFlight = maxInFlight
        self.committedThrough = committedThrough
        self.hooks = hooks
        self.append = append
    }

    /// Why a new write is refused right now, if it is: the state is being rebuilt after a failed append
    /// (`unavailable`: nothing can be made durable yet), or too many records wait for the log (`rate_limited`).
    public var refusal: APIError? {
        if recovering { return APIError(.unavailable, retryAfterSeconds: 1) }
        if inFlight >= maxInFlight { return APIError(.rateLimited, retryAfterSeconds: 1) }
        return nil
    }

    public var isOverloaded: Bool { refusal != nil }

    /// Queues `records` (possibly none: then `done` only waits for every submission before it) for the next
    /// flush; `done` is called once they are durable, with their positions, or with `unavailable`.
    public func submit(_ records: [ChatRecord], done: @escaping (Result<[ChatRecord], APIError>) -> Void) {
        gathered.append(Submission(records: records, done: done))
        inFlight += records.count
    }

    /// Hands everything gathered to the log as one append (the shell calls it once per loop iteration, and
    /// before anything that reads the log must see what was decided).
    public func flush() {
        guard !gathered.isEmpty else { return }
        let batch = gathered
        gathered = []
        let records = batch.flatMap(\.records)
        append(records) { [self] result in complete(batch, records, result) }
    }

    private func complete(_ batch: [Submission], _ records: [ChatRecord], _ result: Result<[ChatRecord], any Error>) {
        inFlight -= records.count
        switch result {
        case .success(let stored):
            hooks.durable()
            var offset = 0
            for submission in batch {
                let count = submission.records.count
                submission.done(.success(Array(stored[offset..<offset + count])))
                offset += count
            }
            if let newest = stored.last?.pos { committedThrough = max(committedThrough, newest) }
            hooks.completed(stored)
        case .failure(let error):
            // Nothing of the batch is durable (or its outcome is unknown: a connection lost during COMMIT); the
            // client retries with the same ids, which the recovered state answers if the records did land.
            let refusal = APIError(.unavailable, retryAfterSeconds: 1)
            for submission in batch { submission.done(.failure(refusal)) }
            hooks.failed(records, error)
        }
        if recovering, inFlight == 0 { hooks.quiet() }
    }

    /// A recovery rebuilt the state from a load that includes everything up to `position`.
    public func caughtUp(to position: Int64) { committedThrough = max(committedThrough, position) }
}
