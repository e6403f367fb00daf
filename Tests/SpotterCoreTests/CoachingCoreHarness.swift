import Foundation
import Testing
@testable import SpotterCore
import SpotterProtocol

/// The log in memory: records in append order, positions 1, 2, 3… Several cores may share one (a cluster's
/// processes over one store).
final class FakeLog {
    private(set) var records: [ChatRecord] = []

    /// Appends `records` as one batch and returns them with their positions.
    func append(_ batch: [ChatRecord]) -> [ChatRecord] {
        batch.map { record in
            var record = record
            record.pos = Int64(records.count + 1)
            records.append(record)
            // As the engines do in the append's transaction (`MessageForgetting`): the message as it now stands.
            if let change = record.content.change,
               let index = records.firstIndex(where: { $0.threadNo == record.threadNo && $0.seq == change.target && $0.kind == .message }),
               let message = records[index].content.message {
                records[index].content = .message(message.applying(change.change, at: record.at))
            }
            return record
        }
    }

    /// A client's messages at or after `since` in these threads, system messages aside (`sendsSince`).
    func clientSends(threadNos: [Int64], since: Int64) -> Int {
        records.filter {
            threadNos.contains($0.threadNo) && $0.side == .client
                && $0.content.message.map { $0.kind != .system } == true && $0.at >= since
        }.count
    }

    /// What the core asked to read, answered from the records (as `CoreRunner.perform` asks the store).
    func answer(_ read: CoreRead) -> CoreReadResult {
        switch read {
        case .counts(_, let nos, let since, let ever, _):
            return .counts(usedSince: since.map { clientSends(threadNos: nos, since: $0) },
                           ever: ever ? clientSends(threadNos: nos, since: 0) : nil)
        case .window(_, let no, let limit):
            return .window(records.filter { $0.threadNo == no && $0.kind == .message }.suffix(limit)
                .map { (side: $0.side, clientMessageID: $0.content.message?.clientMessageID ?? "", seq: $0.seq) })
        case .original(let no, let seq):
            return .original(records.first { $0.threadNo == no && $0.kind == .message && $0.seq == seq })
        }
    }
}

/// One process: a core, and the shell around it run the way `CoreRunner` runs it — a read the core asks for is
/// answered from the log, handed to `learn`, and the command decided again; a commit is appended (positions
/// given) and applied `.here`; the reply is what the runner would send. The clock is `now`, moved by hand; new
/// ids count up (`id-1`, `id-2`…), rooms too (`room-1`…).
///
/// The cast: coach `k` with clients `a` (thread `t1`, no 1; Freemium, UTC, English) and `b` (`t2`, no 2;
/// Premium, Asia/Riyadh, Arabic); coach `k0` whose link with client `c` ended (`t3`, no 3); coach `x`, who
/// takes part in no thread; client `s` (Smart Premium, no thread).
final class CoreHarness {
    /// 2027-01-15 08:00:00 UTC, a Friday in the middle of a month.
    static let start: Int64 = 1_800_000_000
    static let hour: Int64 = 3600
    static let day: Int64 = 86_400

    var core: CoachingCore
    let log: FakeLog
    var now: Int64 = CoreHarness.start
    var nowMilliseconds: UInt64 = 1
    var features: CoreFeatures
    var people: [String: Person] = [
        "k": Person(role: "coach"),
        "k0": Person(role: "coach"),
        "x": Person(role: "coach"),
        "a": Person(role: "client", tier: "freemium"),
        "b": Person(role: "client", tier: "premium", language: .arabic, timeZone: "Asia/Riyadh"),
        "c": Person(role: "client"),
        "s": Person(role: "client", tier: "smart_premium"),
    ]
    private(set) var ids = 0
    private(set) var rooms = 0
    /// Every read the core asked for, in order.
    private(set) var reads: [CoreRead] = []

    /// `features` are fixed at the core's making where the core keeps them (the session limits and timing).
    init(features: CoreFeatures = CoreFeatures(), log: FakeLog = FakeLog()) {
        self.features = features
        self.log = log
        let chat = ChatState()
        for thread in Self.threads() { chat.add(thread) }
        chat.setName("Coach K", for: "k")
        chat.setName("Amal", for: "a")
        chat.setName("Badr", for: "b")
        core = CoachingCore(chat: chat, features: features)
    }

    static func threads() -> [ChatThread] {
        [ChatThread(ThreadRow(id: "t1", no: 1, coachID: "k", clientID: "a", createdAt: start - day, active: true)),
         ChatThread(ThreadRow(id: "t2", no: 2, coachID: "k", clientID: "b", createdAt: start - day, active: true)),
         ChatThread(ThreadRow(id: "t3", no: 3, coachID: "k0", clientID: "c", createdAt: start - 30 * day, active: false))]
    }

    /// Coaches' availability as the shell would have read it (none by default).
    var availability: [String: CoachAvailability] = [:]

    var context: CoreContext {
        let people = people, availability = availability
        var context = CoreContext(now: now, nowMilliseconds: nowMilliseconds, features: features, people: { people[$0] },
                                  newID: { [unowned self] in ids += 1; return "id-\(ids)" },
                                  newRoom: { [unowned self] in rooms += 1; return "room-\(rooms)" })
        context.availability = { availability[$0] }
        return context
    }

    func thread(_ id: String) -> ChatThread { core.chat.thread(id: id)! }

    // MARK: Running commands

    struct Committed {
        /// What the core decided to commit.
        var commit: CoreCommit
        /// Its records as appended (with positions).
        var records: [ChatRecord]
        /// The reply the runner sends.
        var reply: String
        /// What applying them made.
        var applied: Applied
    }

    enum Outcome {
        case refused(APIError)
        case committed(Committed)
    }

    struct Unexpected: Error, CustomStringConvertible {
        var description: String
    }

    /// Runs a command to its end: reads, decisions, the commit and its apply.
    @discardableResult
    func run(_ command: CoreCommand) -> Outcome {
        var command = command
        for _ in 0..<8 {
            switch core.decide(command, context) {
            case .refuse(let error):
                return .refused(error)
            case .read(let read):
                reads.append(read)
                let result = log.answer(read)
                core.learn(read, result, context)
                if case .original(let record) = result, case .send(var request) = command {
                    request.original = .read(record)
                    command = .send(request)
                }
                if case .original(let record) = result, case .changeMessage(var request) = command {
                    request.target = .read(record)
                    command = .changeMessage(request)
                }
            case .commit(let commit):
                let records = log.append(commit.records)
                let applied = core.apply(records, origin: .here, context)
                let reply = switch commit.reply {
                case .json(let json): json
                case .committedMessage: applied.messageJSON ?? "{}"
                case .none: "{}"
                }
                return .committed(Committed(commit: commit, records: records, reply: reply, applied: applied))
            }
        }
        Issue.record("the core kept asking for reads")
        return .refused(APIError(.internalError))
    }

    /// Runs a command that must commit.
    @discardableResult
    func commit(_ command: CoreCommand) throws -> Committed {
        switch run(command) {
        case .committed(let committed): return committed
        case .refused(let error): throw Unexpected(description: "refused: \(error.code.rawValue) \(error.field ?? "")")
        }
    }

    /// Runs a command that must be refused; nil (and nothing to compare) if it committed.
    func refusal(_ command: CoreCommand) -> APIError? {
        guard case .refused(let error) = run(command) else { return nil }
        return error
    }

    /// The reads asked for since the last call.
    func takeReads() -> [CoreRead] {
        defer { reads = [] }
        return reads
    }

    // MARK: Other processes' records

    /// Records another process committed, appended to the log and applied here as followed.
    @discardableResult
    func follow(_ records: [ChatRecord]) -> Applied {
        core.apply(log.append(records), origin: .elsewhere, context)
    }

    /// A message another process accepted in thread `no` (the next seq of this process's view of it).
    func foreignMessage(_ no: Int64, side: Side, ref: String, kind: MessageKind = .text, at: Int64? = nil) -> ChatRecord {
        ChatRecord(threadNo: no, side: side, seq: core.chat.thread(no: no)!.lastSeq + 1, at: at ?? now,
                   .message(MessageRecord(kind: kind, clientMessageID: ref, body: "from elsewhere")))
    }
}

// MARK: - Commands and replies

extension CoreCommand {
    static func text(_ sender: String, _ cmid: String, _ body: String = "hi", thread: String = "t1",
                     kind: MessageKind = .text) -> CoreCommand {
        .send(SendRequest(sender: sender, threadID: thread, clientMessageID: cmid, kind: kind, body: body))
    }

    static func edit(_ user: String, _ seq: Int64, _ text: String, thread: String = "t1") -> CoreCommand {
        .changeMessage(MessageChangeRequest(actorID: user, threadID: thread, seq: seq, text: text))
    }

    static func delete(_ user: String, _ seq: Int64, thread: String = "t1", admin: Bool = false) -> CoreCommand {
        .changeMessage(MessageChangeRequest(actorID: user, threadID: thread, seq: seq, text: nil, byAdmin: admin))
    }

    static func invite(_ coach: String = "k", thread: String = "t1", at start: Int64, minutes: Int = 15,
                       purpose: String = "Form check") -> CoreCommand {
        .createSession(userID: coach, invite: true, threadID: thread, start: start, minutes: minutes, purpose: purpose)
    }

    static func request(_ client: String = "a", thread: String = "t1", at start: Int64, minutes: Int = 15,
                        purpose: String = "Knee pain") -> CoreCommand {
        .createSession(userID: client, invite: false, threadID: thread, start: start, minutes: minutes, purpose: purpose)
    }

    static func act(_ user: String, _ action: SessionAction, _ session: String, start: Int64? = nil,
                    reason: String? = nil) -> CoreCommand {
        .actOnSession(userID: user, sessionID: session, action: action.rawValue, start: start, reason: reason)
    }
}

func decode<T: Decodable>(_ type: T.Type, _ json: String) throws -> T {
    try JSONDecoder().decode(type, from: Data(json.utf8))
}

/// The `type` of an event's payload.
func eventType(_ payload: String) -> String? {
    struct Typed: Decodable { var type: String }
    return try? decode(Typed.self, payload).type
}

extension Applied {
    /// The logged events as (user, type), in order.
    var loggedTypes: [String] { logged.map { "\($0.userID):\(eventType($0.payload) ?? "?")" } }
    var ephemeralTypes: [String] { ephemeral.map { "\($0.userID):\(eventType($0.frame) ?? "?")" } }
}

extension ChatRecord {
    /// The session a `session` record carries.
    var session: SessionView? { SessionRecordBody(self)?.session }
    var sessionChange: String? { SessionRecordBody(self)?.change }
    var sessionID: String? { content.session?.sessionID }
}
