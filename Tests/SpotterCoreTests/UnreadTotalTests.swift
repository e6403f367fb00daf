import SeededRandom
import Testing
@testable import SpotterCore

/// `ChatState.totalUnread` is a running total the threads keep as their counts move; the walk over a user's
/// threads it replaced is the reference. Random sequences of everything that moves a count (sends, commits, read
/// receipts, a follower's records, session messages, changes, erasures, links, a refresh from the store, new
/// threads and threads learnt again): after every step both answers agree for every user, by id and through
/// the thread (what the send's events use).
@Suite("Unread totals: the running total equals the walk")
struct UnreadTotalTests {
    static let coaches = ["k1", "k2", "k3", "both"]
    static let clients = ["c1", "c2", "c3", "c4", "c5", "both"]
    static var users: [String] { coaches + clients.filter { !coaches.contains($0) } + ["nobody"] }

    /// What `totalUnread` answered before it kept a total: the sum over the user's threads, as listed.
    static func walked(_ state: ChatState, _ userID: String) -> Int64 {
        state.threads(of: userID).reduce(Int64(0)) { total, thread in
            total &+ (thread.side(of: userID).map { thread.unread($0) } ?? 0)
        }
    }

    static func check(_ state: ChatState, step: Int, _ what: String) -> Bool {
        for user in users where state.totalUnread(user) != walked(state, user) {
            Issue.record("step \(step) (\(what)): \(user) total \(state.totalUnread(user)), walked \(walked(state, user))")
            return false
        }
        for no in 1...Int64(max(1, state.threadCount)) {
            guard let thread = state.thread(no: no) else { continue }
            for side in [Side.coach, .client] where state.totalUnread(thread, side) != walked(state, thread.userID(side)) {
                Issue.record("step \(step) (\(what)): thread \(no) \(side) total \(state.totalUnread(thread, side))")
                return false
            }
        }
        return true
    }

    static func seqNear(_ thread: ChatThread, _ generator: inout SeededGenerator) -> Int64 {
        switch Int.random(in: 0..<8, using: &generator) {
        case 0: 0
        case 1: -1
        case 2: .max
        case 3: .min
        default: Int64.random(in: 0...(thread.lastSeq + 2), using: &generator)
        }
    }

    static func row(no: Int64, _ generator: inout SeededGenerator) -> ThreadRow {
        let coach = coaches.randomElement(using: &generator)!
        let client = Int.random(in: 0..<12, using: &generator) == 0 ? coach : clients.randomElement(using: &generator)!
        let last = Int64.random(in: 0...30, using: &generator)
        let read = { (g: inout SeededGenerator) in ThreadRow.Positions(delivered: last, read: Int64.random(in: 0...last, using: &g)) }
        return ThreadRow(id: "t\(no)", no: no, coachID: coach, clientID: client, createdAt: 0,
                         active: Bool.random(using: &generator), lastSeq: last, coach: read(&generator), client: read(&generator))
    }

    @Test(arguments: [UInt64(0x07A1), 0x5EED, 0xBADC0DE, 0x33])
    func randomOperationsKeepTheTotal(seed: UInt64) {
        var generator = SeededGenerator(seed: seed)
        let state = ChatState()
        var pending: [ChatRecord] = []
        var pos: Int64 = 0
        var names = 0
        for no in Int64(1)...3 { state.add(ChatThread(Self.row(no: no, &generator))) }
        for step in 0..<1_500 {
            let no = Int64.random(in: 1...Int64(state.threadCount), using: &generator)
            let thread = state.thread(no: no)!
            let side: Side = Bool.random(using: &generator) ? .coach : .client
            let now = Int64(step)
            var what = ""
            switch Int.random(in: 0..<14, using: &generator) {
            case 0:
                what = "new thread"
                state.add(ChatThread(Self.row(no: Int64(state.threadCount) + 1, &generator)))
            case 1, 2, 3:
                what = "send"
                if thread.recent == nil { state.installWindow(threadID: thread.id, []) }
                names += 1
                if case .append(let record)? = try? state.send(sender: thread.userID(side), threadID: thread.id,
                                                                clientMessageID: "m\(names)", kind: .text, body: "hi", now: now) {
                    pending.append(record)
                }
            case 4, 5, 6:
                what = "commit"
                guard !pending.isEmpty else { continue }
                var record = pending.remove(at: Int.random(in: 0..<pending.count, using: &generator))
                pos += 1
                record.pos = pos
                state.committed(record)
            case 7:
                what = "receipt"
                _ = try? state.receipt(userID: thread.userID(side), threadID: thread.id, delivered: Self.seqNear(thread, &generator),
                                       read: Bool.random(using: &generator) ? Self.seqNear(thread, &generator) : nil, now: now)
            case 8:
                what = "follower's message"
                pos += 1
                state.apply(ChatRecord(pos: pos, threadNo: no, side: side, seq: thread.lastSeq + 1, at: now,
                                       .message(MessageRecord(clientMessageID: "f\(step)", body: "x"))))
            case 9:
                what = "session message"
                let record = state.sessionMessage(thread: thread, actor: Bool.random(using: &generator) ? side : nil,
                                                  sessionID: "s", body: "{}", now: now)
                pending.append(record)
            case 10:
                what = "change"
                let target = Int64.random(in: 0...max(0, thread.lastSeq), using: &generator)
                let change: MessageChangeRecord.Change = Bool.random(using: &generator) ? .delete(by: .sender) : .edit(body: "e", attached: false)
                pos += 1
                state.apply(ChatRecord(pos: pos, threadNo: no, side: side, seq: thread.lastSeq, at: now,
                                       .change(MessageChangeRecord(target: target, change: change, wasLast: Bool.random(using: &generator)))))
            case 11:
                what = "erase"
                state.erase(userID: thread.userID(side))
            case 12:
                what = "link"
                pos += 1
                state.apply(CoachingCore.linkRecord(threadNo: no, lastSeq: thread.lastSeq, active: Bool.random(using: &generator), now: now))
                state.add(ChatThread(ThreadRow(id: thread.id, no: no, coachID: thread.coachID, clientID: thread.clientID,
                                               createdAt: 0, active: Bool.random(using: &generator), lastSeq: 99)))
            default:
                what = "refresh from the store"
                var stored = Self.row(no: no, &generator)
                stored = ThreadRow(id: thread.id, no: no, coachID: thread.coachID, clientID: thread.clientID, createdAt: 0,
                                   active: stored.active, lastSeq: stored.lastSeq, lastPos: pos, coach: stored.coach, client: stored.client)
                var tail: [ChatRecord] = []
                for seq in stride(from: stored.lastSeq + 1, through: stored.lastSeq + Int64.random(in: 0...3, using: &generator), by: 1) {
                    pos += 1
                    tail.append(ChatRecord(pos: pos, threadNo: no, side: side, seq: seq, at: now,
                                           .message(MessageRecord(clientMessageID: "r\(seq)", body: "y"))))
                }
                pending.removeAll { $0.threadNo == no }
                state.reset(to: ChatThread(stored), tail: tail)
            }
            if !Self.check(state, step: step, what) { return }
        }
    }

    /// The same id on both sides of a thread counts the thread twice (the walk lists it twice, as the coach).
    @Test func aUserOnBothSidesCountsTwice() {
        let state = ChatState()
        state.add(ChatThread(ThreadRow(id: "t1", no: 1, coachID: "u", clientID: "u", createdAt: 0, active: true, lastSeq: 5,
                                       coach: .init(delivered: 2, read: 2), client: .init(delivered: 0, read: 0))))
        #expect(state.totalUnread("u") == 6 && Self.walked(state, "u") == 6)
    }

    /// Counts at the edges of Int64 do not trap: restored positions far apart, then moved back.
    @Test func extremeCountsDoNotTrap() {
        let state = ChatState()
        state.add(ChatThread(ThreadRow(id: "t1", no: 1, coachID: "k", clientID: "c", createdAt: 0, active: true, lastSeq: .max)))
        state.add(ChatThread(ThreadRow(id: "t2", no: 2, coachID: "k", clientID: "d", createdAt: 0, active: true, lastSeq: .max)))
        #expect(state.totalUnread("c") == .max && state.totalUnread("k") == Self.walked(state, "k"))
        _ = try? state.receipt(userID: "k", threadID: "t1", delivered: nil, read: .max, now: 0)
        #expect(state.totalUnread("k") == .max && Self.walked(state, "k") == .max)
        #expect(state.totalUnread("nobody") == 0)
    }
}
