import FoundationEssentials
import SpotterProtocol

/// What the core knows of a person: read by the shell from its accounts and passed in with each step.
public struct Person: Sendable, Equatable {
    public var role: String
    /// The stored tier name (clients); nil reads as Freemium.
    public var tier: String?
    public var language: Language
    /// An IANA zone name ("UTC" if unknown).
    public var timeZone: String

    public init(role: String, tier: String? = nil, language: Language = .english, timeZone: String = "UTC") {
        self.role = role
        self.tier = tier
        self.language = language
        self.timeZone = timeZone
    }
}

/// The features in force (`spotter serve` options), passed in with each step: the core reads no configuration.
public struct CoreFeatures: Sendable {
    /// `--tiers`: clients' messages and calls are metered.
    public var tiers = false
    /// `--ratings`: every 10th message of a client, and every completed session, asks for a rating.
    public var ratings = false
    /// Where a session's room is (the room's random name is appended).
    public var meetBaseURL = "https://meet.jit.si/"
    /// Per account and minute: `session.invite` and `session.request` together, and `session.act`.
    public var sessionCreatesPerMinute = 30
    public var sessionActsPerMinute = 120
    /// The session book's timing (join early, reminders, auto-completion).
    public var sessions = SessionBook.Config()
    /// `--edit-window`: how long after a send its sender may edit it (seconds).
    public var editWindowSeconds: Int64 = 86_400

    public init() {}
}

/// Everything a step of the core may depend on besides its own state: the time, who people are, the features,
/// and where new ids come from. The shell builds one per step from its clock, its accounts and its options; a
/// test or the simulator builds its own.
public struct CoreContext {
    /// Seconds since 1970 (the shell's clock).
    public var now: Int64
    /// The loop's monotonic milliseconds (idle idempotency windows are dropped by it).
    public var nowMilliseconds: UInt64
    public var features: CoreFeatures
    /// A person by user id (nil: unknown, treated as no one the features meter).
    public var people: (String) -> Person?
    /// A coach's availability by coach id, as the shell read it for this command (nil: none saved, or not read:
    /// nothing is refused or flagged for it).
    public var availability: (String) -> CoachAvailability? = { _ in nil }
    /// A new unique id (sessions, coaching items).
    public var newID: () -> String
    /// A new unguessable room name for a session's video link.
    public var newRoom: () -> String

    public init(now: Int64, nowMilliseconds: UInt64 = 0, features: CoreFeatures = CoreFeatures(),
                people: @escaping (String) -> Person? = { _ in nil },
                newID: @escaping () -> String = { SecureRandom.uuid() },
                newRoom: @escaping () -> String = { "spotter-" + Digest.hex(SecureRandom.bytes(16)) }) {
        self.now = now
        self.nowMilliseconds = nowMilliseconds
        self.features = features
        self.people = people
        self.newID = newID
        self.newRoom = newRoom
    }

    /// The language and time zone a user's system messages are worded in (English and UTC if unknown).
    public func wording(for userID: String) -> (Language, TimeZone) {
        let person = people(userID)
        return (person?.language ?? .english, TimeZoneRules.zone(person?.timeZone ?? "UTC"))
    }

    /// The zone of a user's days (UTC if unknown).
    public func zone(of userID: String) -> TimeZone { TimeZoneRules.zone(people(userID)?.timeZone ?? "UTC") }
}

/// A command the core decides: one per kind of change a person (or the server's timers) can make.
public enum CoreCommand {
    case send(SendRequest)
    /// `message.delivered` / `thread.read` (one of the two seqs).
    case receipt(userID: String, threadID: String, delivered: Int64?, read: Int64?)
    /// `session.invite` (a coach) or `session.request` (a client).
    case createSession(userID: String, invite: Bool, threadID: String?, start: Int64?, minutes: Int?, purpose: String?)
    case actOnSession(userID: String, sessionID: String?, action: String?, start: Int64?, reason: String?)
    /// The session timers: what is due now (expiry, reminders, missed sessions, completion).
    case tick
    /// A coaching link ended: its open sessions are cancelled.
    case linkEnded(threadNo: Int64)
    /// An admin set a client's tier (`PUT /v1/admin/users/{id}/tier`): logged on the client's current thread.
    case tierSet(clientID: String, tier: String)
    /// A change of the coaching record.
    case record(userID: String, RecordChange)
    /// `message.edit` / `message.delete`, or an admin's deletion.
    case changeMessage(MessageChangeRequest)
    /// A user's account was erased (`DELETE /v1/me`, an admin's): their words leave the log.
    case eraseUser(userID: String)
    /// The accounts committed a change every process must follow (sessions revoked, a profile changed): one
    /// `account` record on no thread.
    case accountChanged(AccountChangeRecord)
}

/// `message.edit` or `message.delete` after its fields were validated.
public struct MessageChangeRequest: Sendable {
    public var actorID: String
    public var threadID: String
    public var seq: Int64
    /// An edit's new text (checked by `MessageRules.text`); nil: a delete.
    public var text: String?
    /// An admin's moderation: a delete by someone who is not a participant.
    public var byAdmin: Bool
    /// The message, once read (`CoreRead.original`).
    public var target: SendRequest.Lookup = .notRead

    public init(actorID: String, threadID: String, seq: Int64, text: String?, byAdmin: Bool = false) {
        self.actorID = actorID
        self.threadID = threadID
        self.seq = seq
        self.text = text
        self.byAdmin = byAdmin
    }
}

/// The coaching record's changes.
public enum RecordChange {
    case createChallenge(ChallengeCreateCommand)
    case checkTask(ChallengeCheckCommand)
    /// `images`: which of the photos are images uploaded to the thread (read by the shell first).
    case submitCheckIn(CheckInSubmitCommand, images: Set<String>)
    case comment(CheckInCommentCommand)
    case addMeasurement(MeasurementAddCommand)
    case setGoal(GoalSetCommand)
    case joinChallenge(ChallengeJoinCommand)
    case leaveChallenge(ChallengeLeaveCommand)
    case submitDailyCheckIn(DailyCheckInSubmitCommand)
}

/// `message.send` after its fields were validated.
public struct SendRequest: Sendable {
    public var sender: String
    public var threadID: String
    public var clientMessageID: String
    public var kind: MessageKind
    public var body: String
    /// `body` is an `AttachedText` (a text with attachments).
    public var withAttachments = false
    /// Whether a key found in the idempotency window means "perhaps a retry" (false once the original was read
    /// and found to be another key with the same hash).
    public var checkDuplicates = true
    /// The message a retry candidate named, once read (`CoreRead.original`).
    public var original: Lookup = .notRead

    public enum Lookup: Sendable, Equatable {
        case notRead
        case read(ChatRecord?)
    }

    public init(sender: String, threadID: String, clientMessageID: String, kind: MessageKind, body: String,
                withAttachments: Bool = false) {
        self.sender = sender
        self.threadID = threadID
        self.clientMessageID = clientMessageID
        self.kind = kind
        self.body = body
        self.withAttachments = withAttachments
    }
}

/// What the core decided.
public enum CoreDecision {
    /// Refused: nothing changed.
    case refuse(APIError)
    /// Something must be read from the log first; the shell reads it, hands it to `learn`, and asks again.
    case read(CoreRead)
    /// Records to append (possibly none: the reply then only waits for every append before it), and the reply
    /// once they are durable.
    case commit(CoreCommit)
}

public struct CoreCommit {
    public var records: [ChatRecord]
    public var reply: CoreReply
    /// Clients whose quota changes (`--tiers`): their sockets hear of it after the commit.
    public var quotaChanged: [String] = []
    /// The session timers made these records (a crash test's fail point).
    public var byTimers = false

    public init(records: [ChatRecord], reply: CoreReply, quotaChanged: [String] = [], byTimers: Bool = false) {
        self.records = records
        self.reply = reply
        self.quotaChanged = quotaChanged
        self.byTimers = byTimers
    }
}

public enum CoreReply: Equatable {
    /// No one waits for a reply (the timers).
    case none
    /// This JSON.
    case json(String)
    /// The committed message (the first record) as JSON: it carries the position the log gave it.
    case committedMessage
}

/// A read the core needs before it can decide.
public enum CoreRead: Hashable, Sendable {
    /// A client's messages: this month's (since `since`, for `--tiers`) and ever (`--ratings`), over `threadNos`.
    /// `generation`: the client's count generation when it was asked for (`learn` drops a result of an older one).
    case counts(userID: String, threadNos: [Int64], since: Int64?, ever: Bool, generation: Int)
    /// A thread's recent sends (its idempotency window), newest `limit`.
    case window(threadID: String, threadNo: Int64, limit: Int)
    /// The message a retry candidate may repeat.
    case original(threadNo: Int64, seq: Int64)
}

public enum CoreReadResult {
    case counts(usedSince: Int?, ever: Int?)
    case window([(side: Side, clientMessageID: String, seq: Int64)])
    case original(ChatRecord?)
}

/// Where a record to apply was committed.
public enum Origin: Sendable {
    /// By this process: the core decided it, and its state moved when it did.
    case here
    /// By another process (cluster mode), or read back from the log.
    case elsewhere
}

/// A logged event for one user at its record's position: the event's JSON object (without its cursor) as
/// UTF-8 bytes, made once by the core and framed once for every socket of the user (`EventFrame`), so nothing
/// between the core and the sockets makes a `String` of it.
public struct LoggedEvent {
    public let userID: String
    public let cursor: Int64
    /// The JSON object `{…}`, UTF-8.
    public let json: [UInt8]

    public init(userID: String, cursor: Int64, json: [UInt8]) {
        self.userID = userID
        self.cursor = cursor
        self.json = json
    }

    public init(userID: String, cursor: Int64, payload: String) {
        self.init(userID: userID, cursor: cursor, json: Array(payload.utf8))
    }

    /// The JSON as text (another process's broker, `resume`'s replay, tests).
    public var payload: String { String(decoding: json, as: UTF8.self) }
}

/// What applying committed records makes.
public struct Applied {
    /// Logged events, per user, each at its record's position (replayed by `resume`).
    public var logged: [LoggedEvent] = []
    /// Events not logged (the live quota, a coach's refreshed client card).
    public var ephemeral: [(userID: String, frame: String)] = []
    /// The first committed message's JSON (a send's reply: written once for the reply and both events).
    public var messageJSON: String?
    /// Threads whose link ended with these records.
    public var endedLinks: [Int64] = []

    public init() {}
}
