import FoundationEssentials
import SpotterCore
import SpotterProtocol

/// What a start needs: every thread with its checkpointed views, participants' names, and the records
/// appended after the checkpoint, to replay.
public struct LoadedChat: Sendable {
    public let threads: [ThreadRow]
    public let names: [String: String]
    public let tail: [ChatRecord]
    /// Cursors below this cannot be resumed (see `LogSchema`).
    public let resumeFloor: Int64
    /// Every video session as its newest `session` record left it.
    public let sessions: [Session]
    /// Every client's coaching record as the `record` records left it.
    public let coaching: CoachingBook
    /// When each meal log was sent, by thread number, oldest first (the dashboard's meal-log consistency).
    public let mealTimes: [Int64: [Int64]]
    /// The newest position the load includes (every record up to it is in the views or the tail): where a process
    /// of a cluster starts following the log, and the furthest the first checkpoint after the start may mark.
    public var position: Int64 = 0

    public init(threads: [ThreadRow], names: [String: String], tail: [ChatRecord], resumeFloor: Int64,
                sessions: [Session] = [], coaching: CoachingBook = CoachingBook(), mealTimes: [Int64: [Int64]] = [:]) {
        self.threads = threads
        self.names = names
        self.tail = tail
        self.resumeFloor = resumeFloor
        self.sessions = sessions
        self.coaching = coaching
        self.mealTimes = mealTimes
    }

    /// The coaching record from `record` records, oldest first.
    public static func coaching(from records: [ChatRecord]) -> CoachingBook {
        var book = CoachingBook()
        let decoder = JSONDecoder()
        for record in records {
            if let stored = RecordBody(record, decoder: decoder) { book.apply(stored) }
        }
        return book
    }

    /// Meal-log send times by thread, from (thread number, time) pairs in log order.
    public static func mealTimes(from pairs: [(Int64, Int64)]) -> [Int64: [Int64]] {
        var times: [Int64: [Int64]] = [:]
        for (threadNo, at) in pairs { times[threadNo, default: []].append(at) }
        return times
    }

    /// The newest state of each session among `records` (session records, oldest first).
    public static func sessions(from records: [ChatRecord]) -> [Session] {
        var byID: [String: Session] = [:]
        var order: [String] = []
        let decoder = JSONDecoder()
        for record in records {
            guard let stored = SessionRecordBody(record, decoder: decoder), let session = Session(view: stored.session) else { continue }
            if byID[session.id] == nil { order.append(session.id) }
            byID[session.id] = session
        }
        return order.compactMap { byID[$0] }
    }

    /// A `ChatState` with every thread and the tail applied.
    public func makeState() -> ChatState {
        let state = ChatState()
        for row in threads { state.add(ChatThread(row)) }
        for (user, name) in names { state.setName(name, for: user) }
        _ = state.takeDirty()  // the saved views are on disk already
        // The tail's threads stay dirty: the first checkpoint saves their views before its mark passes these records
        // (else the next start would skip them and the thread would give a seq twice — the simulator's finding 1).
        for record in tail { state.apply(record) }
        return state
    }
}

/// A link change as committed: the `link` records appended (with their positions), and the threads they
/// touched as they stand now.
public struct LinkOutcome<Value: Sendable>: Sendable {
    public let value: Value
    public let records: [ChatRecord]
    public let threads: [ThreadRow]
    public let names: [String: String]

    public init(value: Value, records: [ChatRecord], threads: [ThreadRow], names: [String: String]) {
        self.value = value
        self.records = records
        self.threads = threads
        self.names = names
    }
}

/// One send in a thread's idempotency window.
public struct SentKey: Sendable, Equatable {
    public let side: Side
    public let clientMessageID: String
    public let seq: Int64

    public init(side: Side, clientMessageID: String, seq: Int64) {
        self.side = side
        self.clientMessageID = clientMessageID
        self.seq = seq
    }
}
