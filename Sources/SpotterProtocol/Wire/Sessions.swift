#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A video session as both participants see it (Protocol/README "Video sessions"). Times are Unix seconds, UTC.
public struct SessionView: Codable, Sendable, Equatable {
    public var id: String
    public var threadId: String
    public var coachId: String
    public var clientId: String
    public var start: Int64
    public var durationMinutes: Int
    public var purpose: String
    public var meetUrl: String
    public var status: String
    /// The side whose proposal is pending (`coach`/`client`), if any.
    public var proposedBy: String?
    /// The other time on the table: a client's alternative, or a reschedule request's new start.
    public var proposedStart: Int64?
    /// `needs_resolution`: the session this one overlaps, and the status it was headed for.
    public var conflictWith: String?
    public var heldStatus: String?
    /// A reschedule asked of this session to free its slot for that session (a conflict resolution).
    public var resolvingFor: String?
    public var cancelReason: String?
    public var coachJoined: Bool
    public var reminded: Bool
    /// Changes so far: a higher version is newer.
    public var version: Int
    /// True when the coach set (or proposed) the session's time outside their own availability; absent otherwise.
    public var outsideAvailability: Bool?

    public init(id: String, threadId: String, coachId: String, clientId: String, start: Int64, durationMinutes: Int,
                purpose: String, meetUrl: String, status: String, proposedBy: String?, proposedStart: Int64?,
                conflictWith: String?, heldStatus: String?, resolvingFor: String?, cancelReason: String?,
                coachJoined: Bool, reminded: Bool, version: Int, outsideAvailability: Bool? = nil) {
        self.outsideAvailability = outsideAvailability
        self.id = id
        self.threadId = threadId
        self.coachId = coachId
        self.clientId = clientId
        self.start = start
        self.durationMinutes = durationMinutes
        self.purpose = purpose
        self.meetUrl = meetUrl
        self.status = status
        self.proposedBy = proposedBy
        self.proposedStart = proposedStart
        self.conflictWith = conflictWith
        self.heldStatus = heldStatus
        self.resolvingFor = resolvingFor
        self.cancelReason = cancelReason
        self.coachJoined = coachJoined
        self.reminded = reminded
        self.version = version
    }

    enum CodingKeys: String, CodingKey {
        case id, start, purpose, status, version, reminded
        case threadId = "thread_id"
        case coachId = "coach_id"
        case clientId = "client_id"
        case durationMinutes = "duration_minutes"
        case meetUrl = "meet_url"
        case proposedBy = "proposed_by"
        case proposedStart = "proposed_start"
        case conflictWith = "conflict_with"
        case heldStatus = "held_status"
        case resolvingFor = "resolving_for"
        case cancelReason = "cancel_reason"
        case coachJoined = "coach_joined"
        case outsideAvailability = "outside_availability"
    }
}

/// `session`: a session changed. Logged (it has a cursor and is replayed by `resume`). `change` says what
/// happened (`created`, an action such as `accept`, or `starting_soon`); `message` is the system message the
/// change posted, in the reader's language and time zone.
public struct SessionEvent: Codable, Sendable, Equatable {
    public var type = "session"
    public var change: String
    public var session: SessionView
    /// The change as the thread's system message, worded for the reader.
    public var message: MessageView
    /// The reader's unread count in the thread and over all threads, the system message included.
    public var unread: Int64
    public var totalUnread: Int64
    public init(change: String, session: SessionView, message: MessageView, unread: Int64, totalUnread: Int64) {
        self.change = change
        self.session = session
        self.message = message
        self.unread = unread
        self.totalUnread = totalUnread
    }

    enum CodingKeys: String, CodingKey {
        case type, change, session, message, unread
        case totalUnread = "total_unread"
    }
}

/// `session.invite` (coach) and `session.request` (client): a new session on the sender's thread.
public struct SessionCreateCommand<Mark: SessionCreateMark>: Codable, Sendable, Equatable {
    public var threadId: String?
    public var start: Int64?
    public var durationMinutes: Int?
    public var purpose: String?
    enum CodingKeys: String, CodingKey, CaseIterable {
        case start, purpose
        case threadId = "thread_id"
        case durationMinutes = "duration_minutes"
    }
}

/// Which of the two create commands: its `type`.
public protocol SessionCreateMark: Sendable {
    static var type: String { get }
}

public enum Invite: SessionCreateMark {
    public static let type = "session.invite"
}

public enum CallRequest: SessionCreateMark {
    public static let type = "session.request"
}

/// `session.act`: an action on a session (`accept`, `decline`, `propose`, `reschedule`, `cancel`, `join`,
/// `leave`, `complete`, `keep_existing`, `ask_reschedule`, `replace_existing`). `start` is the new time where
/// one is needed; `reason` goes with `cancel` and `replace_existing`.
public struct SessionActCommand: Codable, Sendable, Equatable {
    public var sessionId: String?
    public var action: String?
    public var start: Int64?
    public var reason: String?
    enum CodingKeys: String, CodingKey, CaseIterable {
        case action, start, reason
        case sessionId = "session_id"
    }
}

/// `sessions`: your sessions whose time meets [from, to) (default: the next 30 days), by start; for a coach,
/// every client's. Also the coach's pending conflict resolutions. A page at a time: at most `limit` sessions
/// (1–200, default 100), after `cursor` (the previous page's `next_cursor`; send the same `from` and `to`).
public struct SessionsCommand: Codable, Sendable, Equatable {
    public var from: Int64?
    public var to: Int64?
    public var limit: Int?
    public var cursor: String?
    public init(from: Int64? = nil, to: Int64? = nil, limit: Int? = nil, cursor: String? = nil) {
        self.from = from
        self.to = to
        self.limit = limit
        self.cursor = cursor
    }
    enum CodingKeys: String, CodingKey, CaseIterable { case from, to, limit, cursor }

    public static let defaultLimit = 100
    public static let limits = 1...200
}

/// The reply to `sessions`: one page.
public struct SessionsResult: Codable, Sendable, Equatable {
    public var sessions: [SessionView]
    /// Sessions waiting for the coach's conflict decision (the dashboard badge); empty for a client.
    public var pendingResolutions: Int
    /// Where the next page starts (send it as `cursor`); null on the last page.
    public var nextCursor: String?
    public init(sessions: [SessionView], pendingResolutions: Int, nextCursor: String? = nil) {
        self.sessions = sessions
        self.pendingResolutions = pendingResolutions
        self.nextCursor = nextCursor
    }
    enum CodingKeys: String, CodingKey {
        case sessions
        case pendingResolutions = "pending_resolutions"
        case nextCursor = "next_cursor"
    }

    /// `next_cursor` is written as null on the last page, never left out.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(sessions, forKey: .sessions)
        try container.encode(pendingResolutions, forKey: .pendingResolutions)
        try container.encode(nextCursor, forKey: .nextCursor)
    }
}
