import FoundationEssentials
import SpotterProtocol

extension Session {
    /// The session as the wire and the log carry it.
    public var view: SessionView {
        SessionView(id: id, threadId: threadID, coachId: coachID, clientId: clientID, start: start,
                    durationMinutes: durationMinutes, purpose: purpose, meetUrl: meetURL, status: status.rawValue,
                    proposedBy: proposedBy?.rawValue, proposedStart: proposedStart, conflictWith: conflictWith,
                    heldStatus: held?.rawValue, resolvingFor: resolving, cancelReason: cancelReason,
                    coachJoined: coachJoined, reminded: reminded, version: version,
                    outsideAvailability: outsideAvailability ? true : nil)
    }

    /// A session read back from the log; nil if a field is not one this server knows.
    ///
    /// Times are clamped into `WireRange.time` and the duration into `WireRange.minutes`: a database written
    /// before the wire bounded them may hold a start at Int64's edge (a request a client once sent with
    /// 2^63 − 1), and the timers and calendars add to it. Clamped, such a session ends at the last second of year
    /// 9999, where nothing is ever due.
    public init?(view: SessionView) {
        guard let status = SessionStatus(rawValue: view.status) else { return nil }
        let minutes = min(max(Int64(view.durationMinutes), WireRange.minutes.lowerBound), WireRange.minutes.upperBound)
        // The whole session within the range, so that a calendar read over the range's last day shows it.
        func clamped(_ time: Int64) -> Int64 { min(max(time, WireRange.time.lowerBound), WireRange.time.upperBound - minutes * 60) }
        self.init(id: view.id, threadID: view.threadId, coachID: view.coachId, clientID: view.clientId,
                  start: clamped(view.start), durationMinutes: Int(minutes), purpose: view.purpose, meetURL: view.meetUrl,
                  status: status, proposedBy: view.proposedBy.flatMap(SessionActor.init(rawValue:)),
                  proposedStart: view.proposedStart.map(clamped), conflictWith: view.conflictWith,
                  held: view.heldStatus.flatMap(SessionStatus.init(rawValue:)), resolving: view.resolvingFor,
                  cancelReason: view.cancelReason, coachJoined: view.coachJoined, reminded: view.reminded,
                  version: view.version)
        outsideAvailability = view.outsideAvailability ?? false
    }
}

extension APIError {
    /// A refused session command as the wire says it.
    public init(session error: SessionError) {
        switch error {
        case .notFound, .notParticipant: self.init(.sessionNotFound, field: "session_id")
        case .refused(let refusal):
            self.init(refusal.reason == .waitingForCoach ? .waitingForCoach : .sessionActionNotAllowed, field: "action")
        case .startInPast: self.init(.startInPast, field: "start")
        case .invalidDuration: self.init(.invalidDuration, field: "duration_minutes")
        case .invalidPurpose: self.init(.invalidPurpose, field: "purpose")
        case .missingStart: self.init(.missingField, field: "start")
        case .outsideJoinWindow: self.init(.outsideJoinWindow, field: "action")
        case .conflict: self.init(.sessionConflict, field: "start")
        case .tooManyOpen: self.init(.tooManySessions, field: "thread_id")
        }
    }
}

/// What a `session` log record holds: the session after the change, and enough of it before to word the
/// system message again on a replay (status, start, reminder), with the action and who took it.
public struct SessionRecordBody: Codable, Sendable, Equatable {
    /// `created`, an action (`accept`, `join`, …), or `starting_soon`, `coach_joined`.
    public var change: String
    public var actor: String?
    public var action: String?
    public var previousStatus: String?
    public var previousStart: Int64?
    public var previousReminded: Bool?
    public var session: SessionView

    public init(change: String, actor: SessionActor?, action: SessionAction?, before: Session?, after: Session) {
        self.change = change
        self.actor = actor?.rawValue
        self.action = action?.rawValue
        self.previousStatus = before?.status.rawValue
        self.previousStart = before?.start
        self.previousReminded = before?.reminded
        self.session = after.view
    }

    enum CodingKeys: String, CodingKey {
        case change, actor, action, session
        case previousStatus = "previous_status"
        case previousStart = "previous_start"
        case previousReminded = "previous_reminded"
    }

    /// The record's JSON, with the session's written already.
    public func jsonText(sessionJSON: String) -> String {
        var json = JSONText()
        json.field("action", action)
        json.field("actor", actor)
        json.field("change", change)
        json.field("previous_reminded", previousReminded)
        json.field("previous_start", previousStart)
        json.field("previous_status", previousStatus)
        json.field("session", json: sessionJSON)
        return json.finish()
    }

    /// The session before the change, as far as the record says (nil when it was created).
    public var before: Session? {
        guard let status = previousStatus.flatMap(SessionStatus.init(rawValue:)), var before = Session(view: session)
        else { return nil }
        before.status = status
        before.start = previousStart ?? before.start
        before.reminded = previousReminded ?? before.reminded
        return before
    }
}

extension SessionRecordBody {
    /// The body of a `session` record, or nil for a record of another kind or a body this server cannot read.
    /// `decoder`: one to reuse when decoding many (a start).
    public init?(_ record: ChatRecord, decoder: JSONDecoder = JSONDecoder()) {
        guard let session = record.content.session,
              let stored = try? decoder.decode(SessionRecordBody.self, from: Data(session.json.utf8)) else { return nil }
        self = stored
    }
}
