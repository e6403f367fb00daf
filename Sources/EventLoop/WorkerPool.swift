import Dispatch

/// A few threads of its own for CPU-heavy jobs (password hashing), apart
/// from libuv's pool where the database reads run: a burst of slow jobs
/// then delays only its own kind. The queue is bounded; `submit` says no
/// when it is full, so the caller can answer "busy" at once instead of
/// letting a backlog grow.
///
/// Loop thread only (submit and completions); jobs run on the pool's threads.
public final class WorkerPool {
    private let loop: Loop
    private let lanes: [DispatchQueue]
    /// Jobs submitted to each lane and not completed (loop thread only).
    private var inLane: [Int]
    /// Jobs that may wait behind the running ones, summed over lanes.
    public let queueLimit: Int

    public init(loop: Loop, threads: Int, queueLimit: Int, label: String) {
        precondition(threads >= 1 && queueLimit >= 0)
        self.loop = loop
        self.queueLimit = queueLimit
        lanes = (0..<threads).map { DispatchQueue(label: "\(label).\($0)") }
        inLane = Array(repeating: 0, count: threads)
    }

    /// Jobs running or waiting.
    public var pending: Int { inLane.reduce(0, +) }

    /// Runs `work` on a pool thread, then `completion` with its result on the
    /// loop. False, and nothing runs, when every thread is busy and
    /// `queueLimit` jobs already wait.
    @discardableResult
    public func submit<Result: Sendable>(
        _ work: @escaping @Sendable () -> Result, then completion: @escaping (Result) -> Void
    ) -> Bool {
        loop.assertOnLoop()
        guard pending < lanes.count + queueLimit else { return false }
        // The lane with the fewest jobs: equal work per job keeps them balanced.
        let lane = inLane.indices.min { inLane[$0] < inLane[$1] }!
        inLane[lane] += 1
        let done = loop.completion { [self] (result: Result) in
            inLane[lane] -= 1
            completion(result)
        }
        lanes[lane].async { done(work()) }
        return true
    }
}
