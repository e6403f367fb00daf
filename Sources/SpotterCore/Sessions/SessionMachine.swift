/// A video session's life, as one pure table: status × action × actor → the next status, or a typed refusal
/// that names the current status and what this actor may do instead. Times (the join window, expiry, past
/// starts) and overlaps are checked elsewhere (`SessionBook`); this table only says who may do what, when.
///
/// Decisions the seeds leave open, made here (Protocol/ documents them with the commands):
/// - Either side may start: the coach invites (`invited`), or the client asks for a call at a time
///   (`requested`), which the coach accepts, answers with another time (an invite), or declines.
/// - The coach rejecting a client's alternative time leaves the original invite standing (`invited`), so the
///   client can still accept it, propose again or decline.
/// - A reschedule request keeps the old slot until the other side accepts; declining keeps it too; it lapses
///   (back to `scheduled`) when the old start arrives unanswered.
/// - A session that would overlap another waits in `needs_resolution` for the coach (a coach's invite into a
///   taken slot, or an `accept` whose target here is `scheduled` when the slot is taken; `SessionBook` diverts): keeping the existing one
///   cancels it; replacing the existing one, or the existing client accepting to move, lets it go on to the
///   status it was headed for (`held`: `invited` for a fresh invite, `scheduled` when both had agreed).
/// - Only the coach's join starts a session (`in_progress`); a client's join before that is refused with
///   `waiting_for_coach`. A session whose end passes without the coach joining is `missed`.
public enum SessionStatus: String, Sendable, CaseIterable, Codable {
    case requested
    case invited
    case alternativeProposed = "alternative_proposed"
    case scheduled
    case rescheduleRequested = "reschedule_requested"
    case needsResolution = "needs_resolution"
    case inProgress = "in_progress"
    case completed
    case cancelled
    case declined
    case expired
    case missed

    /// Whether the session occupies its slot in the participants' calendars (the no-overlap invariant).
    public var holdsTime: Bool { self == .scheduled || self == .rescheduleRequested || self == .inProgress }

    /// Nothing happens to a session after these.
    public var isFinal: Bool { SessionMachine.table[self]?.isEmpty ?? true }
}

public enum SessionAction: String, Sendable, CaseIterable, Codable {
    case accept, decline, propose, reschedule, cancel
    case join, leave, complete
    /// The coach's three ways out of a conflict (seed 002 §6).
    case keepExisting = "keep_existing", askReschedule = "ask_reschedule", replaceExisting = "replace_existing"
    /// The server's own: a conflict settled by the other client's answer, and the timers.
    case confirm, reject, expire, miss
}

public enum SessionActor: String, Sendable, CaseIterable, Codable {
    case coach, client, system
}

public enum SessionMachine {
    /// Who may take an action.
    enum Who: Equatable {
        case coach, client, either, system
        /// The side that did not make the pending proposal (a reschedule request's other side).
        case responder
    }

    /// Where an action leads.
    public enum Target: Equatable, Sendable {
        case status(SessionStatus)
        /// The status the session was headed for before a conflict held it (`SessionState.held`).
        case held
    }

    struct Rule {
        let who: Who
        let to: Target
    }

    /// The whole machine. A status with no rules is final.
    static let table: [SessionStatus: [SessionAction: Rule]] = [
        .requested: [
            .accept: Rule(who: .coach, to: .status(.scheduled)),
            .propose: Rule(who: .coach, to: .status(.invited)),
            .decline: Rule(who: .coach, to: .status(.declined)),
            .cancel: Rule(who: .client, to: .status(.cancelled)),
            .expire: Rule(who: .system, to: .status(.expired)),
        ],
        .invited: [
            .accept: Rule(who: .client, to: .status(.scheduled)),
            .propose: Rule(who: .client, to: .status(.alternativeProposed)),
            .decline: Rule(who: .client, to: .status(.declined)),
            .cancel: Rule(who: .coach, to: .status(.cancelled)),
            .expire: Rule(who: .system, to: .status(.expired)),
        ],
        .alternativeProposed: [
            .accept: Rule(who: .coach, to: .status(.scheduled)),
            .decline: Rule(who: .coach, to: .status(.invited)),
            .propose: Rule(who: .coach, to: .status(.invited)),
            .cancel: Rule(who: .either, to: .status(.cancelled)),
            .expire: Rule(who: .system, to: .status(.expired)),
        ],
        .scheduled: [
            .reschedule: Rule(who: .either, to: .status(.rescheduleRequested)),
            .cancel: Rule(who: .either, to: .status(.cancelled)),
            .join: Rule(who: .coach, to: .status(.inProgress)),
            .miss: Rule(who: .system, to: .status(.missed)),
        ],
        .rescheduleRequested: [
            .accept: Rule(who: .responder, to: .status(.scheduled)),
            .decline: Rule(who: .responder, to: .status(.scheduled)),
            .cancel: Rule(who: .either, to: .status(.cancelled)),
            .expire: Rule(who: .system, to: .status(.scheduled)),
        ],
        .needsResolution: [
            .keepExisting: Rule(who: .coach, to: .status(.cancelled)),
            .askReschedule: Rule(who: .coach, to: .status(.needsResolution)),
            .replaceExisting: Rule(who: .coach, to: .held),
            .confirm: Rule(who: .system, to: .held),
            .reject: Rule(who: .system, to: .status(.declined)),
            .cancel: Rule(who: .either, to: .status(.cancelled)),
            .expire: Rule(who: .system, to: .status(.expired)),
        ],
        .inProgress: [
            .join: Rule(who: .either, to: .status(.inProgress)),
            .leave: Rule(who: .either, to: .status(.inProgress)),
            .complete: Rule(who: .coach, to: .status(.completed)),
            .expire: Rule(who: .system, to: .status(.completed)),
        ],
        .completed: [:], .cancelled: [:], .declined: [:], .expired: [:], .missed: [:],
    ]

    /// Where `action` by `actor` leads from `status`. `proposedBy` is the side whose proposal is pending (the
    /// requester of a reschedule); it decides who the responder is.
    public static func next(_ status: SessionStatus, _ action: SessionAction, by actor: SessionActor,
                            proposedBy: SessionActor? = nil) -> Result<Target, SessionRefusal> {
        guard let rule = table[status]?[action], allows(rule.who, actor, proposedBy: proposedBy) else {
            let reason: SessionRefusal.Reason =
                action == .join && actor == .client && (status == .scheduled || status == .rescheduleRequested)
                ? .waitingForCoach : .notAllowed
            return .failure(SessionRefusal(reason: reason, status: status, action: action, actor: actor,
                                           allowed: allowed(status, by: actor, proposedBy: proposedBy)))
        }
        return .success(rule.to)
    }

    /// What `actor` may do in `status`, in the order of `SessionAction.allCases`.
    public static func allowed(_ status: SessionStatus, by actor: SessionActor, proposedBy: SessionActor? = nil) -> [SessionAction] {
        let rules = table[status] ?? [:]
        return SessionAction.allCases.filter { action in
            rules[action].map { allows($0.who, actor, proposedBy: proposedBy) } ?? false
        }
    }

    private static func allows(_ who: Who, _ actor: SessionActor, proposedBy: SessionActor?) -> Bool {
        switch who {
        case .coach: return actor == .coach
        case .client: return actor == .client
        case .either: return actor == .coach || actor == .client
        case .system: return actor == .system
        case .responder: return actor != .system && proposedBy != nil && actor != proposedBy
        }
    }
}

/// A refused session action: what was tried, in which status, and what this actor may do there instead.
public struct SessionRefusal: Error, Equatable, Sendable {
    public enum Reason: String, Sendable {
        /// The action is not one this actor may take in this status.
        case notAllowed = "session_action_not_allowed"
        /// A client's join before the coach has joined.
        case waitingForCoach = "waiting_for_coach"
    }

    public var reason: Reason
    public var status: SessionStatus
    public var action: SessionAction
    public var actor: SessionActor
    public var allowed: [SessionAction]
}
