import SeededRandom
import Testing
@testable import SpotterCore

/// The session timers' due-time queue (`SessionDueQueue`) against the straightforward scan of every open session
/// it replaced: under random commands, ticks, rebuilds and learned sessions, a tick takes exactly what the scan
/// finds due, in the same order.
@Suite("SessionBook: the timers' queue finds what a scan of every session finds")
struct SessionBookDueTests {
    static let now: Int64 = 1_800_000_000

    @Test("random commands and ticks: takeDue(now:) equals dueByScan(now:) at every tick", arguments: 0..<60)
    func queueMatchesScan(seed: UInt64) {
        var random = SeededGenerator(seed: seed &+ 7_000)
        var config = SessionBook.Config()
        config.maxOpenPerPair = 50
        var book = SessionBook(config: config)
        var now = Self.now
        let clients = (1...6).map { "c\($0)" }
        var created = 0, ticks = 0, dueSeen = 0
        for step in 0..<400 {
            let roll = Int.random(in: 0..<100, using: &random)
            if roll < 30 || book.sessions.isEmpty {
                let client = clients.randomElement(using: &random)!
                created += 1
                // Starts from a minute to a few hours ahead, on a 5-minute grid: reminders, expiries and misses
                // fall due at many different ticks, several at once.
                let start = now + Int64(Int.random(in: 1...48, using: &random)) * 300
                _ = book.create(id: "s\(created)", threadID: "t-\(client)", coachID: "K", clientID: client,
                                by: roll % 2 == 0 ? .coach : .client, start: start,
                                durationMinutes: [15, 30, 60].randomElement(using: &random)!, purpose: "p", meetURL: "u", now: now)
            } else if roll < 75 {
                let session = book.sessions[book.sessions.keys.sorted().randomElement(using: &random)!]!
                let user = [session.coachID, session.clientID].randomElement(using: &random)!
                let action = SessionAction.allCases.randomElement(using: &random)!
                _ = book.act(action, sessionID: session.id, userID: user, start: now + Int64(Int.random(in: 1...48, using: &random)) * 300,
                             reason: nil, now: now)
            } else if roll < 80 {
                // A session as another process's record left it (cluster mode), possibly moved or final.
                var session = book.sessions[book.sessions.keys.sorted().randomElement(using: &random)!]!
                session.start += Int64(Int.random(in: -2...2, using: &random)) * 600
                session.version += 1
                if Int.random(in: 0..<4, using: &random) == 0 { session.status = .cancelled }
                book.learn(session)
            } else if roll < 82 {
                // A restart: the book rebuilt from its sessions queues them all again.
                book = SessionBook(config: config, sessions: Array(book.sessions.values))
            } else {
                // Time moves on by up to an hour, now and then by much more (a server that was down).
                now += Int.random(in: 0..<10, using: &random) == 0 ? Int64(Int.random(in: 1...20, using: &random)) * 3600
                    : Int64(Int.random(in: 0...12, using: &random)) * 300
                let expected = book.dueByScan(now: now)
                var probe = book
                let taken = probe.takeDue(now: now)
                #expect(taken == expected, "seed \(seed) step \(step) at \(now): queue \(taken), scan \(expected)")
                if taken != expected { return }
                ticks += 1
                dueSeen += expected.count
                _ = book.tick(now: now)
                // After a tick nothing is left due that the scan would find (each due session moved on, or
                // stays due only if its step could not be taken: then the queue must still know it).
                let left = book.dueByScan(now: now)
                var again = book
                #expect(again.takeDue(now: now) == left, "seed \(seed) step \(step): after the tick")
            }
        }
        #expect(ticks > 20 && dueSeen > 0, "seed \(seed): the run explored little (\(ticks) ticks, \(dueSeen) due)")
    }

    @Test("the queue's heap pops every entry at or before now, and only those")
    func heapOrder() {
        var random = SeededGenerator(seed: 42)
        var queue = SessionDueQueue()
        var all: [(Int64, Int)] = []
        for position in 0..<2_000 {
            let at = Int64(Int.random(in: -5...1_000, using: &random))
            queue.push(at: at, position: position)
            all.append((at, position))
        }
        var remaining = all
        for now in stride(from: Int64(-10), through: 1_010, by: 37) {
            let popped = queue.popDue(upTo: now).map { $0.position }.sorted()
            let expected = remaining.filter { $0.0 <= now }.map(\.1).sorted()
            #expect(popped == expected, "at \(now)")
            remaining.removeAll { $0.0 <= now }
            #expect(queue.count == remaining.count)
        }
        #expect(queue.popDue(upTo: .max).count == remaining.count)
        #expect(queue.count == 0 && queue.popDue(upTo: .max).isEmpty)
        queue.rebuild(all.map { SessionDueQueue.Entry(at: $0.0, position: $0.1) })
        #expect(queue.popDue(upTo: .min).isEmpty)
        #expect(queue.popDue(upTo: .max).count == all.count)
    }
}
