import Synchronization
import SpotterCore
import SpotterPorts

/// The log in memory: the same contract as the SQLite engine (`ChatLogEngine`), nothing durable. For tests
/// of the messaging rules around a store, and as the reference the conformance suite holds SQLite to.
public final class MemoryChatLog: ChatLogEngine {
    fileprivate struct State {
        var records: [ChatRecord] = []
        var threads: [Int64: ThreadRow] = [:]
        var names: [String: String] = [:]
        var mark: Int64 = 0
        var pendingMark: Int64 = 0
        var halted = false
        /// The next append fails (for tests of the halt).
        var failNext = false
        /// Durable consumers' saved positions, by name.
        var consumers: [String: Int64] = [:]
    }
    private let state = Mutex(State())

    /// `threads`: the threads the log knows (their views as a start would find them).
    public init(threads: [ThreadRow], names: [String: String] = [:]) {
        state.withLock { state in
            for thread in threads { state.threads[thread.no] = thread }
            state.names = names
        }
    }

    /// Makes the next append fail, as a full disk would.
    public func failNextAppend() {
        state.withLock { $0.failNext = true }
    }

    public func append(_ records: [ChatRecord], completion: @escaping @Sendable (Result<[Int64], any Error>) -> Void) {
        let result = state.withLock { state -> Result<[Int64], any Error> in
            guard !state.halted else { return .failure(ChatLogError.halted) }
            if state.failNext {
                state.failNext = false
                state.halted = true
                return .failure(MemoryChatLogError.injected)
            }
            var positions: [Int64] = []
            for var record in records {
                record.pos = Int64(state.records.count) + 1
                positions.append(record.pos)
                state.records.append(record)
                if let change = record.content.change { state.rewrite(record, change) }
                if let erasure = record.content.erasure { state.erase(erasure, at: record.at) }
            }
            return .success(positions)
        }
        completion(result)
    }

    public func resume() {
        state.withLock { $0.halted = false }
    }

    public func checkpoint(_ snapshots: [ThreadSnapshot], first: Bool, last: Bool, through: Int64?,
                           completion: @escaping @Sendable (Result<Int64, any Error>) -> Void) {
        let mark = state.withLock { state -> Int64 in
            if first { state.pendingMark = min(Int64(state.records.count), through ?? .max) }
            for snapshot in snapshots {
                guard var row = state.threads[snapshot.no] else { continue }
                row.lastSeq = snapshot.lastSeq
                row.lastMessageAt = snapshot.lastMessageAt
                row.lastPreview = snapshot.lastPreview
                row.lastSide = snapshot.lastSide
                row.coach = .init(delivered: snapshot.coachDelivered, read: snapshot.coachRead)
                row.client = .init(delivered: snapshot.clientDelivered, read: snapshot.clientRead)
                state.threads[snapshot.no] = row
            }
            if last { state.mark = max(state.mark, state.pendingMark) }
            return state.pendingMark
        }
        completion(.success(mark))
    }

    public func message(threadNo: Int64, seq: Int64, completion: @escaping @Sendable (Result<ChatRecord?, any Error>) -> Void) {
        let found = state.withLock { state in
            state.records.first { $0.threadNo == threadNo && $0.seq == seq && $0.content.message != nil }
        }
        completion(.success(found))
    }

    public func recentSends(threadNo: Int64, limit: Int, completion: @escaping @Sendable (Result<[SentKey], any Error>) -> Void) {
        let keys = state.withLock { state in
            state.records.reversed().filter { $0.threadNo == threadNo && $0.content.message != nil }.prefix(limit).map {
                SentKey(side: $0.side, clientMessageID: $0.content.message?.clientMessageID ?? "", seq: $0.seq)
            }
        }
        completion(.success(Array(keys)))
    }

    public func sendsSince(threadNos: [Int64], side: Side, since: Int64,
                           completion: @escaping @Sendable (Result<Int, any Error>) -> Void) {
        let wanted = Set(threadNos)
        let count = state.withLock { state in
            state.records.filter {
                wanted.contains($0.threadNo) && $0.content.message.map { $0.kind != .system } == true && $0.side == side && $0.at >= since
            }.count
        }
        completion(.success(count))
    }

    public func load() throws -> LoadedChat {
        state.withLock { state in
            let threads = state.threads.values.sorted { ($0.createdAt, $0.no) < ($1.createdAt, $1.no) }.map { row in
                var row = row
                row.lastPos = state.records.last { $0.threadNo == row.no }?.pos ?? 0
                return row
            }
            return LoadedChat(threads: threads, names: state.names, tail: Array(state.records.dropFirst(Int(state.mark))),
                              resumeFloor: 0, sessions: LoadedChat.sessions(from: state.records),
                              coaching: LoadedChat.coaching(from: state.records),
                              mealTimes: LoadedChat.mealTimes(from: state.records.filter { $0.content.message?.kind == .mealLog }
                                .map { ($0.threadNo, $0.at) }))
        }
    }

    public func records(threadNos: [Int64], after pos: Int64, limit: Int) throws -> [ChatRecord] {
        let wanted = Set(threadNos)
        return state.withLock { state in
            Array(state.records.dropFirst(Int(max(pos, 0))).filter { wanted.contains($0.threadNo) }.prefix(max(limit, 0)))
        }
    }

    public func meals(threadNos: [Int64], before: Int64?, limit: Int) throws -> [ChatRecord] {
        let wanted = Set(threadNos)
        return state.withLock { state in
            Array(state.records.reversed().filter {
                wanted.contains($0.threadNo) && $0.content.message?.kind == .mealLog && $0.pos < (before ?? Int64.max)
            }.prefix(max(limit, 0)))
        }
    }

    public func activity(threadNos: [Int64], before: Int64?, limit: Int) throws -> [ChatRecord] {
        let wanted = Set(threadNos)
        return state.withLock { state in
            Array(state.records.reversed().filter {
                wanted.contains($0.threadNo) && $0.isClientActivity && $0.pos < (before ?? Int64.max)
            }.prefix(max(limit, 0)))
        }
    }

    public func history(threadNo: Int64, beforeSeq: Int64?, limit: Int) throws -> [ChatRecord] {
        state.withLock { state in
            Array(state.records.reversed().filter {
                $0.threadNo == threadNo && $0.isThreadMessage && $0.seq < (beforeSeq ?? Int64.max)
            }.prefix(max(limit, 0)))
        }
    }
}

extension MemoryChatLog: ConsumableLog {
    public func newestPosition() throws -> Int64 {
        state.withLock { Int64($0.records.count) }
    }

    public func recordsAfter(_ pos: Int64, through: Int64?, limit: Int) throws -> [ChatRecord] {
        state.withLock { state in
            Array(state.records.dropFirst(Int(max(pos, 0))).prefix { $0.pos <= (through ?? .max) }.prefix(max(limit, 0)))
        }
    }

    public func recordsAfter(_ pos: Int64, through: Int64?, limit: Int, kinds: Set<ChatRecord.Kind>) throws -> [ChatRecord] {
        state.withLock { state in
            Array(state.records.dropFirst(Int(max(pos, 0))).prefix { $0.pos <= (through ?? .max) }
                .filter { $0.kind.map(kinds.contains) ?? false }.prefix(max(limit, 0)))
        }
    }

    public func consumerPosition(_ name: String) throws -> Int64? {
        state.withLock { $0.consumers[name] }
    }

    public func saveConsumerPosition(_ name: String, _ position: Int64) throws {
        state.withLock { $0.consumers[name] = max($0.consumers[name] ?? position, position) }
    }
}

public enum MemoryChatLogError: Error {
    /// A failure asked for with `failNextAppend()`.
    case injected
}

fileprivate extension MemoryChatLog.State {
    /// What `MessageForgetting` does in SQL: the message as the change leaves it, and older changes of it forgotten.
    mutating func rewrite(_ record: ChatRecord, _ change: MessageChangeRecord) {
        if !change.isDelete, records.contains(where: {
            $0.threadNo == record.threadNo && $0.seq == change.target && $0.content.message?.isDeleted == true
        }) {
            records[records.count - 1].content = .change(MessageChangeRecord(target: change.target, change: change.change.forgotten,
                                                                             wasLast: change.wasLast))
            return
        }
        for index in records.indices where records[index].threadNo == record.threadNo && records[index].pos < record.pos {
            switch records[index].content {
            case .message(let message) where records[index].seq == change.target:
                records[index].content = .message(message.applying(change.change, at: record.at))
            case .change(var older) where older.target == change.target:
                older.change = older.change.forgotten
                records[index].content = .change(older)
            default:
                break
            }
        }
    }

    /// What `MessageForgetting.erase` does in SQL.
    mutating func erase(_ erasure: ErasureRecord, at: Int64) {
        for index in records.indices {
            if case .account(var change) = records[index].content, change.userID == erasure.userID, change.profile != nil {
                change.change = .profile(AccountProfile())  // its body NULL, as in SQL
                records[index].content = .account(change)
                continue
            }
            guard let thread = threads[records[index].threadNo],
                  let side: Side = thread.coachID == erasure.userID ? .coach : thread.clientID == erasure.userID ? .client : nil
            else { continue }
            switch records[index].content {
            case .message(let message) where records[index].side == side && message.kind != .system && !message.isDeleted:
                records[index].content = .message(message.applying(.delete(by: .erasure), at: at))
            case .change(var change) where records[index].side == side:
                change.change = change.change.forgotten
                records[index].content = .change(change)
            case .coaching(var coaching) where side == .client:
                coaching.json = "{}"
                records[index].content = .coaching(coaching)
            default:
                break
            }
        }
    }
}
