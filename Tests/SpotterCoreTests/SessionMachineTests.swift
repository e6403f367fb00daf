import Testing
@testable import SpotterCore

/// The session state table, walked exhaustively against the rules as the issue and seed 002 §4–7 state them.
@Suite("SessionMachine: every (status, action, actor)")
struct SessionMachineTests {
    /// The rules, written out independently of the table: `status action actor [by proposer] -> target`.
    /// Anything not listed must be refused.
    static let spec = """
        requested accept coach -> scheduled
        requested propose coach -> invited
        requested decline coach -> declined
        requested cancel client -> cancelled
        requested expire system -> expired
        invited accept client -> scheduled
        invited propose client -> alternative_proposed
        invited decline client -> declined
        invited cancel coach -> cancelled
        invited expire system -> expired
        alternative_proposed accept coach -> scheduled
        alternative_proposed decline coach -> invited
        alternative_proposed propose coach -> invited
        alternative_proposed cancel coach -> cancelled
        alternative_proposed cancel client -> cancelled
        alternative_proposed expire system -> expired
        scheduled reschedule coach -> reschedule_requested
        scheduled reschedule client -> reschedule_requested
        scheduled cancel coach -> cancelled
        scheduled cancel client -> cancelled
        scheduled join coach -> in_progress
        scheduled miss system -> missed
        reschedule_requested accept client by coach -> scheduled
        reschedule_requested decline client by coach -> scheduled
        reschedule_requested accept coach by client -> scheduled
        reschedule_requested decline coach by client -> scheduled
        reschedule_requested cancel coach -> cancelled
        reschedule_requested cancel client -> cancelled
        reschedule_requested expire system -> scheduled
        needs_resolution keep_existing coach -> cancelled
        needs_resolution ask_reschedule coach -> needs_resolution
        needs_resolution replace_existing coach -> held
        needs_resolution confirm system -> held
        needs_resolution reject system -> declined
        needs_resolution cancel coach -> cancelled
        needs_resolution cancel client -> cancelled
        needs_resolution expire system -> expired
        in_progress join coach -> in_progress
        in_progress join client -> in_progress
        in_progress leave coach -> in_progress
        in_progress leave client -> in_progress
        in_progress complete coach -> completed
        in_progress expire system -> completed
        """

    struct Key: Hashable {
        var status: SessionStatus
        var action: SessionAction
        var actor: SessionActor
        var proposedBy: SessionActor?
    }

    /// The spec as (key → target), each line expanded over the proposers it holds for.
    static func expected() throws -> [Key: SessionMachine.Target] {
        var result: [Key: SessionMachine.Target] = [:]
        for line in spec.split(separator: "\n") {
            let words = line.split(separator: " ").map(String.init)
            let status = try #require(SessionStatus(rawValue: words[0]), "\(line)")
            let action = try #require(SessionAction(rawValue: words[1]), "\(line)")
            let actor = try #require(SessionActor(rawValue: words[2]), "\(line)")
            let target: SessionMachine.Target = words.last == "held"
                ? .held : .status(try #require(SessionStatus(rawValue: words.last!), "\(line)"))
            let proposers: [SessionActor?] = words[3] == "by"
                ? [try #require(SessionActor(rawValue: words[4]))] : [nil, .coach, .client]
            for proposer in proposers {
                result[Key(status: status, action: action, actor: actor, proposedBy: proposer)] = target
            }
        }
        return result
    }

    @Test("the table matches the rules for every status × action × actor × pending proposer")
    func everyTriple() throws {
        let expected = try Self.expected()
        var walked = 0, allowed = 0
        for status in SessionStatus.allCases {
            for action in SessionAction.allCases {
                for actor in SessionActor.allCases {
                    for proposer in [SessionActor?.none, .coach, .client] {
                        walked += 1
                        let key = Key(status: status, action: action, actor: actor, proposedBy: proposer)
                        switch SessionMachine.next(status, action, by: actor, proposedBy: proposer) {
                        case .success(let target):
                            allowed += 1
                            #expect(expected[key] == target, "\(key) was allowed")
                        case .failure(let refusal):
                            #expect(expected[key] == nil, "\(key) was refused: \(refusal)")
                            #expect(refusal.status == status && refusal.action == action && refusal.actor == actor)
                        }
                    }
                }
            }
        }
        #expect(walked == 12 * 15 * 3 * 3)
        #expect(allowed == expected.count)
    }

    @Test("a refusal lists exactly the actions that actor may take there")
    func refusalsNameTheAllowedActions() {
        for status in SessionStatus.allCases {
            for actor in SessionActor.allCases {
                for proposer in [SessionActor?.none, .coach, .client] {
                    let possible = SessionAction.allCases.filter {
                        if case .success = SessionMachine.next(status, $0, by: actor, proposedBy: proposer) { return true }
                        return false
                    }
                    #expect(SessionMachine.allowed(status, by: actor, proposedBy: proposer) == possible)
                    for action in SessionAction.allCases where !possible.contains(action) {
                        guard case .failure(let refusal) = SessionMachine.next(status, action, by: actor, proposedBy: proposer) else { continue }
                        #expect(refusal.allowed == possible)
                    }
                }
            }
        }
    }

    @Test("a client's join before the coach's is waiting_for_coach; after it, the client joins")
    func coachJoinsFirst() {
        for status in [SessionStatus.scheduled, .rescheduleRequested] {
            guard case .failure(let refusal) = SessionMachine.next(status, .join, by: .client, proposedBy: .coach) else {
                Issue.record("a client joined a \(status) session")
                continue
            }
            #expect(refusal.reason == .waitingForCoach)
        }
        guard case .failure(let other) = SessionMachine.next(.invited, .join, by: .client) else { return }
        #expect(other.reason == .notAllowed)
        #expect(SessionMachine.next(.scheduled, .join, by: .coach) == .success(.status(.inProgress)))
        #expect(SessionMachine.next(.inProgress, .join, by: .client) == .success(.status(.inProgress)))
    }

    @Test("a reschedule request is answered by the other side only, never by its requester")
    func onlyTheOtherSideAnswers() {
        for requester in [SessionActor.coach, .client] {
            let other: SessionActor = requester == .coach ? .client : .coach
            #expect(SessionMachine.next(.rescheduleRequested, .accept, by: other, proposedBy: requester) == .success(.status(.scheduled)))
            guard case .failure = SessionMachine.next(.rescheduleRequested, .accept, by: requester, proposedBy: requester) else {
                Issue.record("\(requester) accepted their own reschedule request")
                continue
            }
        }
        // Without a known requester nobody can answer.
        guard case .failure = SessionMachine.next(.rescheduleRequested, .accept, by: .client, proposedBy: nil) else {
            Issue.record("answered a request with no requester")
            return
        }
    }

    @Test("final statuses allow nothing; every other status is reachable and can end")
    func shape() {
        let finals = SessionStatus.allCases.filter(\.isFinal)
        #expect(Set(finals) == [.completed, .cancelled, .declined, .expired, .missed])
        // Reachability over the table, from the two ways a session starts (and `held` standing for both).
        func successors(_ status: SessionStatus) -> Set<SessionStatus> {
            var next: Set<SessionStatus> = []
            for action in SessionAction.allCases {
                for actor in SessionActor.allCases {
                    for proposer in [SessionActor?.none, .coach, .client] {
                        switch SessionMachine.next(status, action, by: actor, proposedBy: proposer) {
                        case .success(.status(let to)): next.insert(to)
                        case .success(.held): next.formUnion([.invited, .scheduled])
                        case .failure: break
                        }
                    }
                }
            }
            return next
        }
        var seen: Set<SessionStatus> = [.requested, .invited, .needsResolution]
        var frontier = Array(seen)
        while let status = frontier.popLast() {
            for next in successors(status) where !seen.contains(next) {
                seen.insert(next)
                frontier.append(next)
            }
        }
        #expect(seen == Set(SessionStatus.allCases))
        for status in SessionStatus.allCases where !status.isFinal {
            #expect(!successors(status).isDisjoint(with: finals) || successors(status).contains(.scheduled), "\(status) cannot end")
        }
        // Only the server moves a session by time or by another session's answer.
        for action in [SessionAction.confirm, .reject, .expire, .miss] {
            for status in SessionStatus.allCases {
                for actor in [SessionActor.coach, .client] {
                    guard case .failure = SessionMachine.next(status, action, by: actor, proposedBy: .coach) else {
                        Issue.record("\(actor) may \(action) in \(status)")
                        continue
                    }
                }
            }
        }
        #expect(SessionStatus.allCases.filter(\.holdsTime) == [.scheduled, .rescheduleRequested, .inProgress])
    }
}
