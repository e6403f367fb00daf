/// One video session as the server keeps it. Times are Unix seconds (UTC); `start`/`durationMinutes` are the
/// slot the session has now (a reschedule request keeps them until accepted).
public struct Session: Equatable, Sendable {
    public var id: String
    public var threadID: String
    public var coachID: String
    public var clientID: String
    public var start: Int64
    public var durationMinutes: Int
    public var purpose: String
    public var meetURL: String
    public var status: SessionStatus
    /// Who made the proposal now pending (the invite, the request, the alternative, the reschedule request).
    public var proposedBy: SessionActor?
    /// The other time on the table: a client's alternative, or a reschedule request's new start.
    public var proposedStart: Int64?
    /// `needs_resolution`: the session this one overlaps, and the status it was headed for.
    public var conflictWith: String?
    public var held: SessionStatus?
    /// A reschedule asked of this session to free its slot for `resolving` (conflict resolution 2).
    public var resolving: String?
    public var cancelReason: String?
    public var coachJoined: Bool = false
    public var reminded: Bool = false
    /// Changes so far (1 when created): a client can order two events about one session.
    public var version: Int = 1
    /// The coach set its time (or proposed one) outside their own availability (`FreeSlots.allows`).
    public var outsideAvailability: Bool = false

    public init(id: String, threadID: String, coachID: String, clientID: String, start: Int64, durationMinutes: Int,
                purpose: String, meetURL: String, status: SessionStatus, proposedBy: SessionActor? = nil,
                proposedStart: Int64? = nil, conflictWith: String? = nil, held: SessionStatus? = nil,
                resolving: String? = nil, cancelReason: String? = nil, coachJoined: Bool = false, reminded: Bool = false,
                version: Int = 1) {
        self.id = id
        self.threadID = threadID
        self.coachID = coachID
        self.clientID = clientID
        self.start = start
        self.durationMinutes = durationMinutes
        self.purpose = purpose
        self.meetURL = meetURL
        self.status = status
        self.proposedBy = proposedBy
        self.proposedStart = proposedStart
        self.conflictWith = conflictWith
        self.held = held
        self.resolving = resolving
        self.cancelReason = cancelReason
        self.coachJoined = coachJoined
        self.reminded = reminded
        self.version = version
    }

    public var end: Int64 { end(startingAt: start) }

    /// Where the session would end if it started at `start`.
    /// Saturating: the times a command brings are bounded where they enter (`WireRange`) and stored ones are
    /// clamped on load (`Session(view:)`), so this never nears Int64's edge; were one to slip through, the
    /// session ends at the edge of time instead of trapping the server.
    func end(startingAt start: Int64) -> Int64 {
        let (length, tooLong) = Int64(clamping: durationMinutes).multipliedReportingOverflow(by: 60)
        let (end, overflow) = start.addingReportingOverflow(length)
        return tooLong || overflow ? (start < 0 ? start : Int64.max) : end
    }

    public func actor(_ userID: String) -> SessionActor? {
        userID == coachID ? .coach : userID == clientID ? .client : nil
    }

    func overlaps(start otherStart: Int64, end otherEnd: Int64) -> Bool {
        start < otherEnd && otherStart < end
    }
}

/// Why a session command was refused. Nothing changed.
public enum SessionError: Error, Equatable, Sendable {
    case notFound
    /// The user is neither the session's coach nor its client.
    case notParticipant
    case refused(SessionRefusal)
    /// A start at or before now.
    case startInPast
    /// Not 15–60 minutes in 5-minute steps.
    case invalidDuration
    /// More than `SessionRules.maxPurposeCharacters`, or empty.
    case invalidPurpose
    /// A new time is needed (propose, reschedule, ask_reschedule) and none was given.
    case missingStart
    /// Joining outside the window (from `joinEarlySeconds` before the start until the end).
    case outsideJoinWindow
    /// The new slot overlaps this session of one of the participants.
    case conflict(Session)
    /// The coach and client already have `Config.maxOpenPerPair` sessions that are not final.
    case tooManyOpen
}

public enum SessionRules {
    public static let durations = stride(from: 15, through: 60, by: 5)
    public static let maxPurposeCharacters = 200
    /// The `cancel_reason` of a session the server cancelled because its coaching link ended.
    public static let linkEndedReason = "link_ended"
}

/// What the book tells the shell besides changed sessions.
public enum SessionNotice: Equatable, Sendable {
    /// The coach joined: the client's Join button lights up on every device.
    case coachJoined(sessionID: String)
    /// The session starts within `reminderSeconds`.
    case startingSoon(sessionID: String)
}

extension Session {
    func with(status: SessionStatus, held: SessionStatus?) -> Session {
        var copy = self
        copy.status = status
        copy.held = held
        if status != .needsResolution { copy.conflictWith = nil }
        if status != .rescheduleRequested { copy.resolving = nil }
        if ![.rescheduleRequested, .alternativeProposed, .invited, .requested, .needsResolution].contains(status) {
            copy.proposedStart = nil
            copy.proposedBy = nil
        }
        return copy
    }
}
