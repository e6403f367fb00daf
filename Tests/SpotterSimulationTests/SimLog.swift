import FoundationEssentials
import SpotterCore
import SpotterPorts
import SpotterProtocol
import SpotterStore

/// The log engine under simulation: what the SQLite engine (`ChatLog`) keeps on disk, and the two queues between
/// it and the loop that a kill -9 empties.
///
/// - Durable: the records (position = index + 1), the threads with their checkpointed views, the links (which
///   client is with which coach), the checkpoint's mark. Nothing here is ever lost.
/// - The writer: jobs in the order they were handed over (appends, checkpoint parts, the reads that must see every
///   append before them, link changes), each run when the scheduler says, in order, one transaction each.
/// - The inbox: results the writer produced that the loop has not taken yet (a crash there loses the
///   acknowledgement, not the record).
/// - The reader pool: reads of what is durable (a start's load, a resume's pages), run in any order.
///
/// It mirrors `ChatLog` rule for rule where a start's outcome depends on it: the mark a checkpoint's first part
/// notes (`min(MAX(pos), through)`), the views its parts save, the halt after a failed append (with its epochs), a
/// link change's records (seq = the thread's newest in the log), and what `load()` reads — handed to the real
/// `LoadedChat` and `ThreadRow` of SpotterStore, so a start here runs the server's own `makeState()`.
final class SimLog {
    /// A row of `thread` with its checkpointed views and receipts (`ThreadRow` without the computed fields).
    struct StoredThread {
        let id: String
        let no: Int64
        let coachID: String
        let clientID: String
        let createdAt: Int64
        var lastSeq: Int64 = 0
        var lastMessageAt: Int64?
        var lastPreview: String?
        var lastSide: Side?
        var coach: (delivered: Int64, read: Int64) = (0, 0)
        var client: (delivered: Int64, read: Int64) = (0, 0)
    }

    /// A link change as committed (`LinkOutcome`): its records with positions and the threads as they stand.
    struct LinkChange {
        var records: [ChatRecord]
        var threads: [ThreadRow]
    }

    enum Failure: Error, Equatable {
        /// `ChatLogError.halted`.
        case halted
        /// The injected fault (a full disk).
        case injected
    }

    /// A job on the writer or the reader pool: runs against what is durable, returns what the loop then runs.
    struct Job {
        let label: String
        let isAppend: Bool
        let run: (_ failing: Bool) -> () -> Void
    }

    // MARK: Durable

    private(set) var records: [ChatRecord] = []
    private(set) var threads: [StoredThread] = []
    /// Each client's current coach (the links table).
    private(set) var coachOf: [String: String] = [:]
    private(set) var mark: Int64 = 0
    let names: [String: String]

    // MARK: The process's (lost in a crash)

    /// `ChatLog.checkpointMark`: set by a checkpoint's first part, saved by its last.
    private var pendingMark: Int64 = 0
    /// `AppendHalt`.
    private var halted = false
    private var epoch = 0
    private(set) var writer: [Job] = []
    private(set) var inbox: [(label: String, deliver: () -> Void)] = []
    private(set) var readers: [Job] = []

    init(names: [String: String]) { self.names = names }

    /// A thread and its link, made before the run (provisioning).
    func provision(coachID: String, clientID: String, at time: Int64) {
        let no = Int64(threads.count + 1)
        threads.append(StoredThread(id: "t\(no)", no: no, coachID: coachID, clientID: clientID, createdAt: time))
        coachOf[clientID] = coachID
    }

    func thread(no: Int64) -> StoredThread? { no >= 1 && no <= threads.count ? threads[Int(no - 1)] : nil }

    func isActive(_ thread: StoredThread) -> Bool { coachOf[thread.clientID] == thread.coachID }

    // MARK: The port (`ChatLogEngine`), as the shell calls it

    /// `written` runs when the batch is durable (before the loop hears of it).
    func append(_ batch: [ChatRecord], written: @escaping () -> Void = {}, done: @escaping (Result<[Int64], Failure>) -> Void) {
        let ticket = epoch
        writer.append(Job(label: "append " + Self.describe(batch), isAppend: true) { [self] failing in
            let result: Result<[Int64], Failure>
            if halted || ticket != epoch {
                result = .failure(.halted)
            } else if failing {
                result = .failure(.injected)
            } else {
                result = .success(batch.map { record in
                    var record = record
                    record.pos = Int64(records.count + 1)
                    records.append(record)
                    if let change = record.content.change { rewrite(record, change) }
                    return record.pos
                })
            }
            if case .failure = result { halted = true } else { written() }
            return { done(result) }
        })
    }

    /// What the engines do in the append's transaction (`MessageForgetting`): the message as the change leaves it,
    /// an older change's text forgotten, an edit of a deleted message keeping no text.
    private func rewrite(_ record: ChatRecord, _ change: MessageChangeRecord) {
        for index in records.indices.dropLast() where records[index].threadNo == record.threadNo {
            switch records[index].content {
            case .message(let message) where records[index].seq == change.target:
                if message.isDeleted, !change.isDelete {
                    records[records.count - 1].content = .change(MessageChangeRecord(
                        target: change.target, change: change.change.forgotten, wasLast: change.wasLast))
                }
                records[index].content = .message(message.applying(change.change, at: record.at))
            case .change(var older) where older.target == change.target:
                older.change = older.change.forgotten
                records[index].content = .change(older)
            default:
                break
            }
        }
    }

    func resume() {
        halted = false
        epoch += 1
    }

    func checkpoint(_ snapshots: [ThreadSnapshot], first: Bool, last: Bool, through: Int64?,
                    done: @escaping (Result<Int64, Failure>) -> Void) {
        let label = "checkpoint part [\(snapshots.map { "t\($0.no)@\($0.lastSeq)" }.joined(separator: " "))]"
            + (first ? " first" : "") + (last ? " last" : "") + " through \(through.map(String.init) ?? "head")"
        writer.append(Job(label: label, isAppend: false) { [self] _ in
            if first {
                let committed = Int64(records.count)
                pendingMark = min(committed, through ?? committed)
            }
            for snapshot in snapshots where thread(no: snapshot.no) != nil {
                let index = Int(snapshot.no - 1)
                threads[index].lastSeq = snapshot.lastSeq
                threads[index].lastMessageAt = snapshot.lastMessageAt
                threads[index].lastPreview = snapshot.lastPreview
                threads[index].lastSide = snapshot.lastSide
                // SQLite upserts a side's receipt only when it has one.
                if snapshot.coachDelivered > 0 || snapshot.coachRead > 0 {
                    threads[index].coach = (snapshot.coachDelivered, snapshot.coachRead)
                }
                if snapshot.clientDelivered > 0 || snapshot.clientRead > 0 {
                    threads[index].client = (snapshot.clientDelivered, snapshot.clientRead)
                }
            }
            let noted = pendingMark
            if last { mark = max(mark, noted) }
            return { done(.success(noted)) }
        })
    }

    /// A read ordered with the appends (`message`, `recentSends`, `sendsSince`): computed when the writer reaches it.
    func orderedRead<Value>(_ label: String, _ read: @escaping (SimLog) -> Value, done: @escaping (Value) -> Void) {
        writer.append(Job(label: "read " + label, isAppend: false) { [self] _ in
            let value = read(self)
            return { done(value) }
        })
    }

    /// A read on the reader pool (`load`, `records`): of what is durable when it runs.
    func poolRead<Value>(_ label: String, _ read: @escaping (SimLog) -> Value, done: @escaping (Value) -> Void) {
        readers.append(Job(label: "pool " + label, isAppend: false) { [self] _ in
            let value = read(self)
            return { done(value) }
        })
    }

    /// A coach change in one transaction (`ChatLog.linkChange`): the client's link moves to `coachID` (the pair's
    /// thread made if it has none) and each thread whose link changed gets a `link` record whose seq is the
    /// thread's newest in the log. Not subject to the halt (it is not an append of the pipeline's).
    func changeCoach(clientID: String, to coachID: String, now: Int64, done: @escaping (LinkChange) -> Void) {
        writer.append(Job(label: "link \(clientID)→\(coachID)", isAppend: false) { [self] _ in
            let old = coachOf[clientID]
            guard old != coachID else { return { done(LinkChange(records: [], threads: [])) } }
            if !threads.contains(where: { $0.clientID == clientID && $0.coachID == coachID }) {
                let no = Int64(threads.count + 1)
                threads.append(StoredThread(id: "t\(no)", no: no, coachID: coachID, clientID: clientID, createdAt: now))
            }
            coachOf[clientID] = coachID
            let changed = threads.filter { $0.clientID == clientID && ($0.coachID == coachID || $0.coachID == old) }
            var made: [ChatRecord] = []
            for stored in changed {
                let seq = records.filter { $0.threadNo == stored.no }.map(\.seq).max() ?? 0
                var record = CoachingCore.linkRecord(threadNo: stored.no, lastSeq: seq, active: isActive(stored), now: now)
                record.pos = Int64(records.count + 1)
                records.append(record)
                made.append(record)
            }
            let rows = changed.map(row)
            return { done(LinkChange(records: made, threads: rows)) }
        })
    }

    // MARK: Reads (what the engines compute)

    /// `ChatLog.load()`, into the real `LoadedChat` (whose `makeState()` a start runs): the threads with their
    /// checkpointed views, the records after the mark, the sessions and the coaching record from every record.
    func load() -> LoadedChat {
        let ordered = threads.sorted { ($0.createdAt, $0.no) < ($1.createdAt, $1.no) }
        var loaded = LoadedChat(
            threads: ordered.map(row), names: names, tail: Array(records.dropFirst(Int(mark))), resumeFloor: 0,
            sessions: LoadedChat.sessions(from: records.filter { $0.kind == .session }),
            coaching: LoadedChat.coaching(from: records.filter { $0.kind == .record }),
            mealTimes: LoadedChat.mealTimes(from: records.filter { $0.content.message?.kind == .mealLog }
                .map { ($0.threadNo, $0.at) }))
        loaded.position = max(mark, Int64(records.count))
        return loaded
    }

    /// The row `ChatLog.threads` reads: the views, the link, and the position of the thread's newest record (by
    /// seq, then position).
    func row(_ stored: StoredThread) -> ThreadRow {
        let newest = records.filter { $0.threadNo == stored.no }.max { ($0.seq, $0.pos) < ($1.seq, $1.pos) }
        return ThreadRow(id: stored.id, no: stored.no, coachID: stored.coachID, clientID: stored.clientID,
                         createdAt: stored.createdAt, active: isActive(stored), lastSeq: stored.lastSeq,
                         lastMessageAt: stored.lastMessageAt, lastPreview: stored.lastPreview, lastSide: stored.lastSide,
                         lastPos: newest?.pos ?? 0, coach: .init(delivered: stored.coach.delivered, read: stored.coach.read),
                         client: .init(delivered: stored.client.delivered, read: stored.client.read))
    }

    /// `records(threadNos:after:limit:)`: in log order.
    func records(threadNos: [Int64], after pos: Int64, limit: Int) -> [ChatRecord] {
        let wanted = Set(threadNos)
        return Array(records.dropFirst(Int(max(pos, 0))).filter { wanted.contains($0.threadNo) }.prefix(limit))
    }

    // MARK: Running (the scheduler)

    /// The writer runs its oldest job (`failing`: an append among them fails, as on a full disk); its result
    /// waits in the inbox for the loop.
    func runWriter(failing: Bool = false) -> String? {
        guard !writer.isEmpty else { return nil }
        let job = writer.removeFirst()
        inbox.append((job.label, job.run(failing && job.isAppend)))
        return job.label + (failing && job.isAppend ? " FAILS" : "")
    }

    /// The loop takes the oldest result from its inbox and runs what waited for it.
    func deliver() -> String? {
        guard !inbox.isEmpty else { return nil }
        let (label, body) = inbox.removeFirst()
        body()
        return label
    }

    /// The reader pool runs one of its reads (`index` among those waiting); the loop takes its result at once.
    func runReader(_ index: Int) -> String? {
        guard readers.indices.contains(index) else { return nil }
        let job = readers.remove(at: index)
        job.run(false)()
        return job.label
    }

    var head: Job? { writer.first }

    /// kill -9: everything but the disk is gone.
    func crash() {
        writer = []
        inbox = []
        readers = []
        pendingMark = 0
        halted = false
        epoch = 0
    }

    /// A graceful stop after the loop stopped: the writer finishes its queue (results go nowhere), the reads are
    /// dropped.
    func drainForStop() -> [String] {
        inbox = []
        readers = []
        var ran: [String] = []
        while !writer.isEmpty {
            let job = writer.removeFirst()
            _ = job.run(false)
            ran.append(job.label)
        }
        crash()
        return ran
    }

    static func describe(_ batch: [ChatRecord]) -> String {
        "[" + batch.map(describe).joined(separator: " ") + "]"
    }

    /// A record in a line: kind, thread, seq (and its position once durable).
    static func describe(_ record: ChatRecord) -> String {
        let kind: String = switch record.kind {
        case .message: "msg"
        case .receipt: "rcpt"
        case .link: "link"
        case .session: record.isThreadMessage ? "sess" : "sess0"
        case .ratingPrompt: "rate"
        case .tier: "tier"
        case .record: "rec"
        case .change: "chg"
        case .erasure: "erase"
        case .account: "acct"
        case nil: "unknown"
        }
        return "\(kind):t\(record.threadNo)#\(record.seq)" + (record.pos > 0 ? "@\(record.pos)" : "")
    }
}
