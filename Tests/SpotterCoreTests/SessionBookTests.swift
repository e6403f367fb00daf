import SeededRandom
import Testing
@testable import SpotterCore

/// The session book: the seed's conflict resolutions, the timers, and the no-overlap invariant under random
/// interleavings of every command from many coaches and clients.
@Suite("SessionBook: conflicts, timers and the no-overlap invariant")
struct SessionBookTests {
    static let hour: Int64 = 3600
    static let now: Int64 = 1_800_000_000
    static let monday3pm = now + 48 * hour

    /// Coach K with clients A (Sarah) and B (Mike), as in seed 002 §6.
    func book() -> SessionBook { SessionBook() }

    @discardableResult
    func invite(_ book: inout SessionBook, _ id: String, client: String, at start: Int64, minutes: Int = 60,
                coach: String = "K") throws -> Session {
        guard case .success(let outcome) = book.create(
            id: id, threadID: "t-\(client)", coachID: coach, clientID: client, by: .coach, start: start,
            durationMinutes: minutes, purpose: "Strength review", meetURL: "https://meet.example/\(id)", now: Self.now)
        else { throw Failure("invite \(id) refused") }
        return try #require(outcome.changed.last)
    }

    func act(_ book: inout SessionBook, _ action: SessionAction, _ id: String, by user: String, start: Int64? = nil,
             reason: String? = nil, now: Int64 = now) throws -> SessionBook.Outcome {
        switch book.act(action, sessionID: id, userID: user, start: start, reason: reason, now: now) {
        case .success(let outcome): return outcome
        case .failure(let error): throw Failure("\(action) on \(id) by \(user): \(error)")
        }
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    /// Sarah's session scheduled Monday 3 PM; Mike's invite for the same hour is held for the coach.
    func conflict() throws -> SessionBook {
        var book = book()
        try invite(&book, "sarah", client: "A", at: Self.monday3pm)
        _ = try act(&book, .accept, "sarah", by: "A")
        let mike = try invite(&book, "mike", client: "B", at: Self.monday3pm + 1800)  // any overlap, not only the same start
        #expect(mike.status == .needsResolution)
        #expect(mike.conflictWith == "sarah")
        #expect(book.pendingResolutions(ofCoach: "K").map(\.id) == ["mike"])
        return book
    }

    @Test("resolution 1: keep the existing session; the proposed one is not created")
    func keepExisting() throws {
        var book = try conflict()
        let outcome = try act(&book, .keepExisting, "mike", by: "K")
        #expect(outcome.changed.map(\.id) == ["mike"])
        #expect(book.sessions["mike"]?.status == .cancelled)
        #expect(book.sessions["sarah"]?.status == .scheduled)
        #expect(book.pendingResolutions(ofCoach: "K").isEmpty)
    }

    @Test("resolution 2: the existing client is asked to move; accepting moves her and lets the proposed go on")
    func askRescheduleAccepted() throws {
        var book = try conflict()
        let tuesday2pm = Self.monday3pm + 23 * Self.hour
        let asked = try act(&book, .askReschedule, "mike", by: "K", start: tuesday2pm)
        #expect(asked.changed.map(\.id) == ["sarah", "mike"])
        #expect(book.sessions["sarah"]?.status == .rescheduleRequested)
        #expect(book.sessions["sarah"]?.start == Self.monday3pm)  // the old slot until she accepts
        #expect(book.sessions["mike"]?.status == .needsResolution)
        // Her new slot may not be the one she is freeing.
        var other = try conflict()
        guard case .failure(.conflict) = other.act(.askReschedule, sessionID: "mike", userID: "K", start: Self.monday3pm + 3600, now: Self.now) else {
            Issue.record("moved into the slot being freed")
            return
        }
        let accepted = try act(&book, .accept, "sarah", by: "A")
        #expect(accepted.changed.map(\.id) == ["sarah", "mike"])
        #expect(book.sessions["sarah"]?.status == .scheduled && book.sessions["sarah"]?.start == tuesday2pm)
        // Mike's was a fresh invite: it goes on as an invite, which Mike still accepts.
        #expect(book.sessions["mike"]?.status == .invited)
        _ = try act(&book, .accept, "mike", by: "B")
        #expect(book.sessions["mike"]?.status == .scheduled)
    }

    @Test("resolution 2 needs the existing session as agreed: one already asked to move is refused, nothing changes")
    func askRescheduleOfASessionAlreadyAskedToMove() throws {
        var book = try conflict()
        _ = try act(&book, .reschedule, "sarah", by: "A", start: Self.monday3pm + 2 * 24 * Self.hour)
        let before = book.sessions
        let refused = book.act(.askReschedule, sessionID: "mike", userID: "K", start: Self.monday3pm + 23 * Self.hour, now: Self.now)
        guard case .failure(.refused(let refusal)) = refused else {
            Issue.record("expected a refusal, got \(refused)")
            return
        }
        #expect(refusal.status == .rescheduleRequested && refusal.action == .askReschedule)
        #expect(Set(refusal.allowed) == [.cancel, .keepExisting, .replaceExisting])
        #expect(book.sessions == before)
    }

    @Test("resolution 2, declined: the existing session stays and the proposed one is rejected")
    func askRescheduleDeclined() throws {
        var book = try conflict()
        _ = try act(&book, .askReschedule, "mike", by: "K", start: Self.monday3pm + 23 * Self.hour)
        let declined = try act(&book, .decline, "sarah", by: "A")
        #expect(declined.changed.map(\.id) == ["sarah", "mike"])
        #expect(book.sessions["sarah"]?.status == .scheduled && book.sessions["sarah"]?.start == Self.monday3pm)
        #expect(book.sessions["mike"]?.status == .declined)
        #expect(book.pendingResolutions(ofCoach: "K").isEmpty)
    }

    @Test("resolution 3: cancel the existing session (with the reason) and confirm the proposed one")
    func replaceExisting() throws {
        var book = try conflict()
        let outcome = try act(&book, .replaceExisting, "mike", by: "K", reason: "Coach unavailable")
        #expect(outcome.changed.map(\.id) == ["sarah", "mike"])
        #expect(book.sessions["sarah"]?.status == .cancelled)
        #expect(book.sessions["sarah"]?.cancelReason == "Coach unavailable")
        #expect(book.sessions["mike"]?.status == .invited)
    }

    @Test("a client's accept into an occupied slot is held for the coach, then confirmed when it is freed")
    func acceptIntoAConflict() throws {
        var book = book()
        try invite(&book, "a", client: "A", at: Self.monday3pm)
        try invite(&book, "b", client: "B", at: Self.monday3pm)
        _ = try act(&book, .accept, "a", by: "A")
        _ = try act(&book, .accept, "b", by: "B")
        #expect(book.sessions["b"]?.status == .needsResolution && book.sessions["b"]?.held == .scheduled)
        _ = try act(&book, .replaceExisting, "b", by: "K")
        #expect(book.sessions["b"]?.status == .scheduled)  // both had agreed: confirmed at once
    }

    @Test("the coach joins first: the client is waiting_for_coach until then, and gets coach_joined")
    func coachJoined() throws {
        var book = book()
        try invite(&book, "s", client: "A", at: Self.monday3pm, minutes: 30)
        _ = try act(&book, .accept, "s", by: "A")
        let early = Self.monday3pm - 601
        guard case .failure(.outsideJoinWindow) = book.act(.join, sessionID: "s", userID: "K", now: early) else {
            Issue.record("joined before the window")
            return
        }
        guard case .failure(.refused(let refusal)) = book.act(.join, sessionID: "s", userID: "A", now: Self.monday3pm) else {
            Issue.record("the client joined first")
            return
        }
        #expect(refusal.reason == .waitingForCoach)
        let joined = try act(&book, .join, "s", by: "K", now: Self.monday3pm - 600)
        #expect(joined.notices == [.coachJoined(sessionID: "s")])
        #expect(book.sessions["s"]?.status == .inProgress)
        #expect(try act(&book, .join, "s", by: "A", now: Self.monday3pm).notices.isEmpty)
    }

    @Test("timers: reminder once, expiry, missed, completion")
    func timers() throws {
        var book = book()
        try invite(&book, "open", client: "A", at: Self.monday3pm)
        try invite(&book, "held", client: "B", at: Self.monday3pm + 4 * Self.hour, minutes: 30)
        _ = try act(&book, .accept, "held", by: "B")
        #expect(book.tick(now: Self.monday3pm - 1).changed.isEmpty)
        let atStart = book.tick(now: Self.monday3pm)
        #expect(atStart.changed.map(\.status) == [.expired])  // the invite nobody answered
        let soon = Self.monday3pm + 4 * Self.hour - 600
        #expect(book.tick(now: soon).notices == [.startingSoon(sessionID: "held")])
        #expect(book.tick(now: soon + 1).notices.isEmpty)  // once
        #expect(book.nextDue(book.sessions["held"]!) == Self.monday3pm + 4 * Self.hour + 1800)
        let afterEnd = book.tick(now: Self.monday3pm + 4 * Self.hour + 1800)
        #expect(afterEnd.changed.map(\.status) == [.missed])  // the coach never joined
    }

    @Test("a server down through a whole session: the session is missed, with no late reminder")
    func downThroughTheSession() throws {
        var book = book()
        try invite(&book, "s", client: "A", at: Self.monday3pm, minutes: 30)
        _ = try act(&book, .accept, "s", by: "A")
        let outcome = book.tick(now: Self.monday3pm + 3600)
        #expect(outcome.notices.isEmpty)
        #expect(outcome.changed.map(\.status) == [.missed])
    }

    @Test("bad input is refused and changes nothing")
    func badInput() {
        var book = book()
        func refused(_ start: Int64, _ minutes: Int, _ purpose: String = "x") -> SessionError? {
            if case .failure(let error) = book.create(id: "x", threadID: "t", coachID: "K", clientID: "A", by: .coach,
                                                       start: start, durationMinutes: minutes, purpose: purpose,
                                                       meetURL: "u", now: Self.now) { return error }
            return nil
        }
        #expect(refused(Self.now, 30) == .startInPast)
        #expect(refused(Self.now + 60, 10) == .invalidDuration)
        #expect(refused(Self.now + 60, 65) == .invalidDuration)
        #expect(refused(Self.now + 60, 32) == .invalidDuration)
        #expect(refused(Self.now + 60, 30, String(repeating: "é", count: 201)) == .invalidPurpose)
        #expect(refused(Self.now + 60, 30, "") == .invalidPurpose)
        #expect(book.sessions.isEmpty)
        #expect(refused(Self.now + 60, 15, String(repeating: "é", count: 200)) == nil)
        let before = book.sessions
        #expect(book.act(.accept, sessionID: "x", userID: "stranger", now: Self.now) == .failure(.notParticipant))
        #expect(book.act(.accept, sessionID: "nope", userID: "A", now: Self.now) == .failure(.notFound))
        guard case .failure(.refused) = book.act(.complete, sessionID: "x", userID: "K", now: Self.now) else {
            Issue.record("completed an invite")
            return
        }
        #expect(book.sessions == before)
    }

    // MARK: - The invariant under random interleavings

    /// The simple model: every pair of sessions that hold time and share a user, compared directly.
    static func overlaps(_ sessions: [String: Session]) -> [(String, String)] {
        let holding = sessions.values.filter(\.status.holdsTime).sorted { $0.id < $1.id }
        var found: [(String, String)] = []
        for (i, a) in holding.enumerated() {
            for b in holding[(i + 1)...] {
                let shared = !Set([a.coachID, a.clientID]).isDisjoint(with: [b.coachID, b.clientID])
                if shared && a.start < b.end && b.start < a.end { found.append((a.id, b.id)) }
            }
        }
        return found
    }

    /// Every status one step can lead to from `status`: the table's targets, `held` as invited or scheduled,
    /// and `needs_resolution` wherever the table says `scheduled` for an agreement (the book's diversion when the
    /// slot is taken).
    static func successors(_ status: SessionStatus) -> Set<SessionStatus> {
        var next: Set<SessionStatus> = [status]
        for action in SessionAction.allCases {
            for actor in SessionActor.allCases {
                for proposer in [SessionActor?.none, .coach, .client] {
                    switch SessionMachine.next(status, action, by: actor, proposedBy: proposer) {
                    case .success(.status(let to)):
                        next.insert(to)
                        if to == .scheduled && action == .accept && status != .rescheduleRequested { next.insert(.needsResolution) }
                    case .success(.held): next.formUnion([.invited, .scheduled])
                    case .failure: break
                    }
                }
            }
        }
        return next
    }

    @Test("random commands from 3 coaches and 9 clients never put a user in two overlapping sessions",
          arguments: 0..<40)
    func neverOverlaps(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        var book = SessionBook()
        var now = Self.now
        let coaches = ["K1", "K2", "K3"]
        let clients = coaches.flatMap { coach in (1...3).map { "\(coach)-c\($0)" } }
        var created = 0
        for step in 0..<300 {
            let before = book.sessions
            let roll = Int.random(in: 0..<100, using: &random)
            // Starts on a 15-minute grid over a few hours: overlaps are common.
            let start = now + Int64(Int.random(in: 1...24, using: &random)) * 900
            var result: Result<SessionBook.Outcome, SessionError>
            if roll < 25 || book.sessions.isEmpty {
                let client = clients.randomElement(using: &random)!
                let coach = String(client.prefix(2))
                created += 1
                result = book.create(id: "s\(created)", threadID: "t-\(client)", coachID: coach, clientID: client,
                                     by: roll % 2 == 0 ? .coach : .client, start: start,
                                     durationMinutes: [15, 30, 45, 60].randomElement(using: &random)!,
                                     purpose: "p", meetURL: "u", now: now)
            } else if roll < 92 {
                let session = book.sessions[book.sessions.keys.sorted().randomElement(using: &random)!]!
                let user = [session.coachID, session.clientID, clients.randomElement(using: &random)!].randomElement(using: &random)!
                let action = SessionAction.allCases.randomElement(using: &random)!
                result = book.act(action, sessionID: session.id, userID: user, start: start, reason: nil,
                                  now: now + Int64(Int.random(in: 0...1, using: &random)) * 600)
            } else {
                now += Int64(Int.random(in: 1...6, using: &random)) * 300
                result = .success(book.tick(now: now))
            }
            let overlapping = Self.overlaps(book.sessions)
            #expect(overlapping.isEmpty, "seed \(seed) step \(step): \(overlapping)")
            switch result {
            case .failure:
                #expect(book.sessions == before, "seed \(seed) step \(step): a refused command changed something")
            case .success(let outcome):
                for changed in outcome.changed {
                    #expect(book.sessions[changed.id] != nil)
                    if let old = before[changed.id] {
                        #expect(Self.successors(old.status).contains(changed.status),
                                "seed \(seed) step \(step): \(old.status) → \(changed.status)")
                        #expect(changed.version > old.version)
                    }
                }
                // Nothing changes that the outcome does not name (but reminders, which are notices).
                for (id, session) in book.sessions where before[id].map({ $0.status != session.status || $0.start != session.start }) ?? true {
                    #expect(outcome.changed.contains { $0.id == id }, "seed \(seed) step \(step): \(id) changed silently")
                }
            }
            if overlapping.isEmpty == false { return }
        }
        #expect(Set(book.sessions.values.map(\.status)).count > 3, "seed \(seed): the run explored little")
        // A book rebuilt from its sessions (a restart) answers the same: calendars, pending resolutions, timers.
        var rebuilt = SessionBook(sessions: Array(book.sessions.values))
        for user in coaches + clients {
            #expect(rebuilt.calendar(of: user, from: 0, to: .max) == book.calendar(of: user, from: 0, to: .max))
            #expect(rebuilt.pendingResolutions(ofCoach: user) == book.pendingResolutions(ofCoach: user))
        }
        let later = now + 48 * Self.hour
        #expect(rebuilt.tick(now: later) == book.tick(now: later), "seed \(seed)")
        #expect(rebuilt.sessions == book.sessions)
    }
}
