import Foundation
import SpotterProtocol

/// How much of a message a push shows (`--push-preview`): the lock screen is not private.
public enum PushPreview: String, Sendable, CaseIterable {
    /// "New message from Sara" and the message's first 100 characters.
    case full
    /// "New message from Sara" (the default).
    case sender
    /// "New message": no name, no text; a session change says only "Session update".
    case none
}

/// A thread as a push needs it.
public struct PushThread: Sendable, Equatable {
    public var id: String
    public var coachID: String
    public var clientID: String

    public init(id: String, coachID: String, clientID: String) {
        self.id = id
        self.coachID = coachID
        self.clientID = clientID
    }

    func userID(_ side: Side) -> String { side == .coach ? coachID : clientID }
}

/// A participant as a push needs them, read when the record is handled (not when it was committed).
public struct PushPerson: Sendable, Equatable {
    public var id: String
    public var name: String?
    public var language: Language
    public var timeZone: TimeZone
    /// Holds a socket that is not in the background (`app_state`): hears everything there, gets no push.
    public var awake: Bool
    /// Their total unread messages now: the app icon's badge.
    public var unread: Int
    public var preferences: NotificationPreferences

    public init(id: String, name: String?, language: Language, timeZone: TimeZone, awake: Bool, unread: Int,
                preferences: NotificationPreferences) {
        self.id = id
        self.name = name
        self.language = language
        self.timeZone = timeZone
        self.awake = awake
        self.unread = unread
        self.preferences = preferences
    }
}

/// One push to one person (all their devices), decided from one log record.
public struct PlannedPush: Sendable, Equatable {
    public enum Kind: String, Sendable {
        case message, session, reminder
        /// Silent: the badge only (a read on another device).
        case badge
    }

    public var userID: String
    /// The record's position: with the device, the push's id.
    public var pos: Int64
    public var kind: Kind
    public var title: String
    public var body: String
    /// Quiet hours: shown without sound or banner.
    public var quiet: Bool
    public var threadID: String
    public var badge: Int
    public var data: [String: String]
    public var expiresAt: Int64
    public var urgent: Bool
    /// Messages: the sender's name as the coalesced line shows it (nil with previews off), and the receiver's
    /// language, so the line can be worded again when more messages pile up.
    public var sender: String?
    public var language: Language
}

/// Decides the pushes a committed log record makes: to whom, in what words, how loud. Pure: the people's state
/// (awake, unread, preferences) and the time are given.
///
/// | record | pushed to | kind |
/// |---|---|---|
/// | message (text, meal card, attachment, system) | the other participant | message |
/// | session created (invite, request), accepted, declined, alternative proposed, reschedule requested or answered, cancelled | the other side of who did it (both when the server did) | session |
/// | session `needs_resolution` | the coach | session |
/// | `starting_soon` | both | reminder |
/// | `coach_joined` | the client | reminder |
/// | link started or ended (a coach change decided) | both | session |
/// | read receipt that moved the read position | the reader (silent, the badge) | badge |
///
/// Nobody is pushed who is awake (a socket in the foreground), except the silent badge update, which goes to the
/// reader's other devices whatever their state. Preferences are `NotificationPolicy`'s.
public struct PushPlanner: Sendable {
    public var preview: PushPreview
    /// How long a push is worth delivering, in seconds (messages and session changes; a reminder lasts until the
    /// session ends, a badge update an hour).
    public var lifetime: Int64 = 86_400

    public init(preview: PushPreview) {
        self.preview = preview
    }

    public func plan(_ record: ChatRecord, thread: PushThread, people: [String: PushPerson], now: Int64) -> [PlannedPush] {
        switch record.content {
        case .message(let message):
            // Deleted before this consumer came to it: nothing of it is pushed.
            guard !message.isDeleted else { return [] }
            return planMessage(record, message, thread: thread, people: people, now: now)
        case .session:
            guard let body = SessionRecordBody(record) else { return [] }
            return planSession(record, body, thread: thread, people: people, now: now)
        case .link(let link):
            return [(thread.coachID, thread.clientID), (thread.clientID, thread.coachID)].compactMap { userID, otherID in
                guard let person = people[userID], !person.awake else { return nil }
                let words = PushWords(person.language)
                let name = people[otherID]?.name ?? words.someone
                let title = preview == .none ? words.coachingUpdate
                    : link.active ? words.linkStarted(with: name, youAreCoach: userID == thread.coachID) : words.linkEnded(with: name)
                return push(record, to: person, .session, title: title, body: "", thread: thread, data: ["link": link.active ? "started" : "ended"], now: now)
            }
        case .receipt(let receipt):
            guard receipt.readMoved, let reader = people[thread.userID(record.side)] else { return [] }
            return [PlannedPush(userID: reader.id, pos: record.pos, kind: .badge, title: "", body: "", quiet: true, threadID: thread.id,
                                badge: reader.unread, data: ["thread_id": thread.id, "kind": "badge"], expiresAt: now + 3600,
                                urgent: false, sender: nil, language: reader.language)]
        case .ratingPrompt, .tier, .coaching, .change, .erasure, .account, .unknown:
            return []  // a delete takes its thread's waiting pushes back in its own transaction (`MessageForgetting`)
        }
    }

    private func planMessage(_ record: ChatRecord, _ message: MessageRecord, thread: PushThread, people: [String: PushPerson],
                             now: Int64) -> [PlannedPush] {
        let senderID = thread.userID(record.side)
        guard let receiver = people[thread.userID(record.side.other)], !receiver.awake else { return [] }
        let words = PushWords(receiver.language)
        let sender = preview == .none ? nil : (people[senderID]?.name ?? words.someone)
        let text = preview == .full
            ? String(ChatState.preview(kind: message.kind, body: message.body, attached: message.hasAttachments).prefix(100)) : ""
        guard var made = push(record, to: receiver, .message, title: words.newMessages(1, from: sender), body: text, thread: thread,
                              data: ["seq": String(record.seq)], now: now) else { return [] }
        made.sender = sender
        return [made]
    }

    private func planSession(_ record: ChatRecord, _ body: SessionRecordBody, thread: PushThread, people: [String: PushPerson],
                             now: Int64) -> [PlannedPush] {
        guard let after = Session(view: body.session) else { return [] }
        let actor = body.actor.flatMap(SessionActor.init(rawValue:))
        // A client's answer can change another client's session (a conflict settled: Amal moving frees Badr's
        // slot). The core logs that one as "updated" with the answering client as actor, who is no participant
        // here: both participants hear of it.
        let actedHere = !(actor == .client && body.change == "updated")
        let before = body.before
        let kind: PlannedPush.Kind
        let sides: [Side]
        switch body.change {
        case "starting_soon":
            (kind, sides) = (.reminder, [.coach, .client])
        case "coach_joined":
            (kind, sides) = (.reminder, [.client])
        default:
            guard record.content.session?.isSystemMessage == true else { return [] }
            switch after.status {
            case .needsResolution:
                (kind, sides) = (.session, [.coach])
            case .invited, .requested, .alternativeProposed, .rescheduleRequested, .declined, .cancelled:
                guard before?.status != after.status || before?.start != after.start else { return [] }
                (kind, sides) = (.session, Self.others(of: actedHere ? actor : nil))
            case .scheduled:
                guard let before, before.status != .scheduled || before.start != after.start else { return [] }
                (kind, sides) = (.session, Self.others(of: actedHere ? actor : nil))
            case .inProgress, .completed, .expired, .missed:
                return []
            }
        }
        let expires = kind == .reminder ? max(now, after.start + Int64(after.durationMinutes) * 60) : now + lifetime
        return sides.compactMap { side in
            guard let person = people[thread.userID(side)], !person.awake else { return nil }
            let recipient: SessionActor = side == .coach ? .coach : .client
            let text = SessionText.render(before: before, after: after, actor: actor, recipient: recipient, language: person.language,
                                          timeZone: person.timeZone, action: body.action.flatMap(SessionAction.init(rawValue:)))
            var lines = text.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
            let title = preview == .none ? PushWords(person.language).sessionUpdate : (lines.isEmpty ? "" : lines.removeFirst())
            var made = push(record, to: person, kind, title: title, body: preview == .none ? "" : lines.joined(separator: "\n"),
                            thread: thread, data: ["session_id": after.id, "change": body.change], now: now)
            made?.expiresAt = expires
            return made
        }
    }

    /// The other side of who acted; both when the server did.
    private static func others(of actor: SessionActor?) -> [Side] {
        switch actor {
        case .coach: [.client]
        case .client: [.coach]
        case .system, nil: [.coach, .client]
        }
    }

    /// A push of `kind` to `person`, or nil when their preferences skip it.
    private func push(_ record: ChatRecord, to person: PushPerson, _ kind: PlannedPush.Kind, title: String, body: String,
                      thread: PushThread, data: [String: String], now: Int64) -> PlannedPush? {
        let policyKind: NotificationPolicy.Kind = switch kind {
        case .message: .message
        case .session, .badge: .session
        case .reminder: .reminder
        }
        let delivery = NotificationPolicy.delivery(policyKind, threadID: thread.id, person.preferences, now: now, zone: person.timeZone)
        guard delivery != .skip else { return nil }
        var all = data
        all["thread_id"] = thread.id
        all["kind"] = kind.rawValue
        return PlannedPush(userID: person.id, pos: record.pos, kind: kind, title: title, body: body, quiet: delivery == .quiet,
                           threadID: thread.id, badge: person.unread, data: all, expiresAt: now + lifetime,
                           urgent: delivery == .alert, sender: nil, language: person.language)
    }
}
