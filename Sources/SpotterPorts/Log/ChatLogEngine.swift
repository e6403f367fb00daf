import SpotterCore

/// The store port for chat: what the messaging shell needs from wherever the log lives. `ChatLog` is the
/// SQLite engine (a single server's); `PostgresChatLog` (SpotterPostgres) is the cluster's; `MemoryChatLog` keeps
/// everything in memory (tests, tools). All three pass one conformance suite (`ChatLogConformanceTests`).
///
/// Guarantees every engine gives:
/// - `append` completes after the records are durable (as durable as the engine is), with positions that
///   increase in call order and are never reused;
/// - `message`, `recentSends` and `sendsSince` see every append called before them (they are ordered with appends);
/// - `checkpoint(first:last:)` saves views; `load` returns every thread with the views last saved and every
///   record after the position the last complete checkpoint noted in its first part;
/// - `records` returns a thread set's records after a position in log order; `history` a thread's messages
///   newest first;
/// - after a failed append every later one fails with `ChatLogError.halted` until `resume()`.
public protocol ChatLogEngine: AnyObject, Sendable {
    func append(_ records: [ChatRecord], completion: @escaping @Sendable (Result<[Int64], any Error>) -> Void)
    func resume()
    /// `through`: the newest position the snapshots may claim (a process of a cluster has applied every record up
    /// to what it followed, and perhaps not another process's records above it); nil, everything committed.
    func checkpoint(_ snapshots: [ThreadSnapshot], first: Bool, last: Bool, through: Int64?,
                    completion: @escaping @Sendable (Result<Int64, any Error>) -> Void)
    func message(threadNo: Int64, seq: Int64, completion: @escaping @Sendable (Result<ChatRecord?, any Error>) -> Void)
    func recentSends(threadNo: Int64, limit: Int, completion: @escaping @Sendable (Result<[SentKey], any Error>) -> Void)
    func sendsSince(threadNos: [Int64], side: Side, since: Int64, completion: @escaping @Sendable (Result<Int, any Error>) -> Void)
    func load() throws -> LoadedChat
    func records(threadNos: [Int64], after pos: Int64, limit: Int) throws -> [ChatRecord]
    func history(threadNo: Int64, beforeSeq: Int64?, limit: Int) throws -> [ChatRecord]
    func meals(threadNos: [Int64], before: Int64?, limit: Int) throws -> [ChatRecord]
    /// The coach's activity feed: records of the threads that are a client's activity (`LogSQL.isClientActivity`)
    /// with pos < `before` (nil: from the newest), newest first, at most `limit`.
    func activity(threadNos: [Int64], before: Int64?, limit: Int) throws -> [ChatRecord]
}

extension ChatLogEngine {
    /// A checkpoint of a process that alone writes to the log: it has applied everything committed.
    public func checkpoint(_ snapshots: [ThreadSnapshot], first: Bool, last: Bool,
                           completion: @escaping @Sendable (Result<Int64, any Error>) -> Void) {
        checkpoint(snapshots, first: first, last: last, through: nil, completion: completion)
    }
}

public enum ChatLogError: Error, Equatable, CustomStringConvertible {
    /// An earlier append failed; nothing more is appended until the owner has reloaded its state (`resume()`).
    case halted

    public var description: String { "the log is halted after a failed append" }
}
