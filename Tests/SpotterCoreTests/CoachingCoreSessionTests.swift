import Foundation
import Testing
@testable import SpotterCore
import SpotterProtocol

/// The core's session decisions through the harness: creates, answers, the per-account limits, the tier's
/// calls, the timers, ended links, and which session a reply names.
@Suite("CoachingCore: video sessions")
struct CoachingCoreSessionTests {
    typealias H = CoreHarness
    /// Sunday 2027-01-17 08:00 UTC.
    static let at = H.start + 2 * H.day

    static func id(_ committed: CoreHarness.Committed) throws -> String {
        try decode(SessionView.self, committed.reply).id
    }

    static func status(_ committed: CoreHarness.Committed) throws -> String {
        try decode(SessionView.self, committed.reply).status
    }

    @Test func aCoachInvitesAndTheClientAccepts() throws {
        let h = CoreHarness()
        let invite = try h.commit(.invite(at: Self.at, minutes: 30))
        let record = try #require(invite.records.first)
        #expect(invite.records.count == 1)
        // The thread's next message, made by the coach (who has read it), about session id-1.
        let body = try #require(record.content.session)
        #expect(body.isSystemMessage && body.byParticipant && record.side == .coach)
        #expect(record.threadNo == 1 && record.seq == 1 && body.sessionID == "id-1" && record.sessionChange == "created")
        let session = try decode(SessionView.self, invite.reply)
        #expect(session.id == "id-1" && session.threadId == "t1" && session.coachId == "k" && session.clientId == "a")
        #expect(session.status == "invited" && session.proposedBy == "coach" && session.start == Self.at)
        #expect(session.durationMinutes == 30 && session.purpose == "Form check" && session.meetUrl == "https://meet.jit.si/room-1")
        #expect(record.session == session)
        #expect(invite.applied.loggedTypes == ["k:session", "a:session"])
        try #require(invite.applied.logged.count == 2)
        #expect(try decode(SessionEvent.self, invite.applied.logged[1].payload).unread == 1)
        #expect(h.core.sessions["id-1"]?.status == .invited)

        let accepted = try h.commit(.act("a", .accept, "id-1"))
        #expect(accepted.records.map(\.sessionChange) == ["accept"])
        try #require(accepted.records.count == 1)
        #expect(accepted.records[0].side == .client && accepted.records[0].seq == 2)
        #expect(try Self.status(accepted) == "scheduled")
        #expect(h.core.sessions["id-1"]?.status == .scheduled)
        #expect(h.thread("t1").lastSeq == 2)
    }

    @Test func onlyTheCoachInvitesAndOnlyTheClientRequests() throws {
        let h = CoreHarness()
        #expect(h.refusal(.invite("a", at: Self.at)) == APIError(.forbidden, field: "type"))
        #expect(h.refusal(.request("k", at: Self.at)) == APIError(.forbidden, field: "type"))
        #expect(h.refusal(.invite("x", at: Self.at)) == APIError(.forbidden, field: "thread_id"))
        #expect(h.refusal(.invite("k0", thread: "t3", at: Self.at)) == APIError(.threadInactive, field: "thread_id"))
        #expect(h.refusal(.createSession(userID: "k", invite: true, threadID: nil, start: Self.at, minutes: 15, purpose: "x"))
            == APIError(.missingField, field: "thread_id"))
        #expect(h.refusal(.createSession(userID: "k", invite: true, threadID: "t1", start: nil, minutes: 15, purpose: "x"))
            == APIError(.missingField, field: "start"))
        #expect(h.refusal(.createSession(userID: "k", invite: true, threadID: "t1", start: Self.at, minutes: nil, purpose: "x"))
            == APIError(.missingField, field: "duration_minutes"))
        #expect(h.refusal(.invite(at: h.now - 60)) == APIError(.startInPast, field: "start"))
        #expect(h.refusal(.invite(at: Self.at, minutes: 17)) == APIError(.invalidDuration, field: "duration_minutes"))
        #expect(h.refusal(.invite(at: Self.at, purpose: "")) == APIError(.invalidPurpose, field: "purpose"))
        #expect(h.log.records.isEmpty && h.core.sessions.sessions.isEmpty)

        let request = try h.commit(.request(at: Self.at))
        let session = try decode(SessionView.self, request.reply)
        #expect(session.status == "requested" && session.proposedBy == "client" && session.clientId == "a")
        #expect(request.records.map(\.side) == [.client])
    }

    @Test func answersMoveTheSessionOneRecordEach() throws {
        let h = CoreHarness()
        let invited = try Self.id(h.commit(.invite(at: Self.at)))
        // The client proposes another time; the coach turns it down (the invite stands); the client declines.
        let proposed = try h.commit(.act("a", .propose, invited, start: Self.at + H.hour))
        let alternative = try decode(SessionView.self, proposed.reply)
        #expect(alternative.status == "alternative_proposed" && alternative.proposedStart == Self.at + H.hour)
        #expect(alternative.start == Self.at && proposed.records.map(\.sessionChange) == ["propose"])
        #expect(try Self.status(h.commit(.act("k", .decline, invited))) == "invited")
        #expect(try Self.status(h.commit(.act("a", .decline, invited))) == "declined")
        #expect(h.refusal(.act("a", .accept, invited)) == APIError(.sessionActionNotAllowed, field: "action"))

        // A request the coach accepts, then a reschedule the client asks and the coach accepts.
        let requested = try Self.id(h.commit(.request(at: Self.at + 3 * H.hour)))
        #expect(try Self.status(h.commit(.act("k", .accept, requested))) == "scheduled")
        let asked = try decode(SessionView.self, h.commit(.act("a", .reschedule, requested, start: Self.at + 5 * H.hour)).reply)
        #expect(asked.status == "reschedule_requested" && asked.proposedStart == Self.at + 5 * H.hour && asked.start == Self.at + 3 * H.hour)
        let moved = try decode(SessionView.self, h.commit(.act("k", .accept, requested)).reply)
        #expect(moved.status == "scheduled" && moved.start == Self.at + 5 * H.hour && moved.proposedStart == nil)
        #expect(h.core.sessions[requested]?.start == Self.at + 5 * H.hour)

        // Not theirs, not an action a person takes, or not named.
        #expect(h.refusal(.act("b", .cancel, requested)) == APIError(.sessionNotFound, field: "session_id"))
        #expect(h.refusal(.act("a", .confirm, requested)) == APIError(.badRequest, field: "action"))
        #expect(h.refusal(.actOnSession(userID: "a", sessionID: requested, action: "dance", start: nil, reason: nil))
            == APIError(.badRequest, field: "action"))
        #expect(h.refusal(.actOnSession(userID: "a", sessionID: nil, action: "cancel", start: nil, reason: nil))
            == APIError(.missingField, field: "session_id"))
        #expect(h.refusal(.actOnSession(userID: "a", sessionID: requested, action: nil, start: nil, reason: nil))
            == APIError(.missingField, field: "action"))
        // Every change was one message of the thread, in seq order.
        #expect(h.log.records.map(\.seq) == Array(1...8))
        #expect(h.log.records.allSatisfy { $0.kind == .session })
    }

    @Test func createsAndActsAreLimitedPerAccountAndMinute() throws {
        var features = CoreFeatures()
        features.sessionCreatesPerMinute = 2
        features.sessionActsPerMinute = 3
        let h = CoreHarness(features: features)
        try h.commit(.invite(at: Self.at))
        try h.commit(.invite(at: Self.at + H.hour))
        h.now += 10
        #expect(h.refusal(.invite(at: Self.at + 2 * H.hour)) == APIError(.rateLimited, field: "type", retryAfterSeconds: 50))
        // Another account has its own minute.
        try h.commit(.request("b", thread: "t2", at: Self.at + 3 * H.hour))
        h.now += 50
        try h.commit(.invite(at: Self.at + 2 * H.hour))
        // Acts count every attempt, refused ones too.
        for _ in 1...3 {
            #expect(h.refusal(.act("a", .accept, "nope")) == APIError(.sessionNotFound, field: "session_id"))
        }
        #expect(h.refusal(.act("a", .accept, "id-1"))?.code == .rateLimited)
        #expect(h.core.sessions["id-1"]?.status == .invited)
        try h.commit(.act("b", .cancel, "id-3"))
        h.now += 60
        #expect(try Self.status(h.commit(.act("a", .accept, "id-1"))) == "scheduled")
    }

    @Test func theClientsTierLimitsCallLengthAndCallsPerMonth() throws {
        var features = CoreFeatures()
        features.tiers = true
        let h = CoreHarness(features: features)
        let tooLong = APIError(.invalidDuration, field: "duration_minutes", detail: .callLength(tier: "freemium"))
        #expect(h.refusal(.request(at: Self.at, minutes: 30)) == tooLong)
        #expect(h.refusal(.invite(at: Self.at, minutes: 20)) == tooLong)
        // The Freemium month's one call.
        let first = try Self.id(h.commit(.request(at: Self.at)))
        let confirmed = try h.commit(.act("k", .accept, first))
        #expect(confirmed.commit.quotaChanged == ["a"])
        let callQuota = APIError(.quotaExceeded, field: "start", detail: .callQuota(tier: "freemium"))
        #expect(h.refusal(.request(at: Self.at + 3 * H.hour)) == callQuota)
        // An invite is not a call yet; accepting it would be.
        let invited = try Self.id(h.commit(.invite(at: Self.at + 3 * H.hour)))
        #expect(h.refusal(.act("a", .accept, invited)) == callQuota)
        // A call next month counts in its own month.
        let february = Self.at + 20 * H.day
        let later = try Self.id(h.commit(.request(at: february)))
        #expect(try Self.status(h.commit(.act("k", .accept, later))) == "scheduled")
        // A cancelled call is given back.
        try h.commit(.act("a", .cancel, first))
        #expect(try Self.status(h.commit(.act("a", .accept, invited))) == "scheduled")
        // The quota's calls come from the book (the view reads the message count first).
        if case .read(let read) = h.core.quotaView("a", h.context) { h.core.learn(read, h.log.answer(read), h.context) }
        guard case .ready(let view?) = h.core.quotaView("a", h.context) else {
            Issue.record("no quota view")
            return
        }
        #expect(view.calls == QuotaAllowance(used: 1, limit: 1, left: 0, band: "red"))
        // Premium: 25 minutes, two calls.
        #expect(try Self.status(h.commit(.request("b", thread: "t2", at: Self.at, minutes: 25))) == "requested")
    }

    @Test func theTimersExpireRemindCompleteAndMiss() throws {
        var features = CoreFeatures()
        features.ratings = true
        let h = CoreHarness(features: features)
        let unanswered = try Self.id(h.commit(.invite(at: Self.at)))
        let held = try Self.id(h.commit(.invite(at: Self.at + 2 * H.hour)))
        try h.commit(.act("a", .accept, held))
        let missed = try Self.id(h.commit(.invite(at: Self.at + 4 * H.hour)))
        try h.commit(.act("a", .accept, missed))

        let idle = try h.commit(.tick)
        #expect(idle.records.isEmpty && !idle.commit.byTimers && idle.commit.reply == .none)

        // Unanswered by its start: expired, by the server.
        h.now = Self.at
        let expiry = try h.commit(.tick)
        #expect(expiry.records.compactMap(\.sessionID) == [unanswered] && expiry.commit.byTimers)
        try #require(expiry.records.count == 1)
        #expect(expiry.records[0].session?.status == "expired" && expiry.records[0].content.session?.byParticipant == false)
        #expect(expiry.applied.loggedTypes == ["k:session", "a:session"])
        #expect(h.core.sessions[unanswered]?.status == .expired)

        // Ten minutes before: the reminder, once.
        h.now = Self.at + 2 * H.hour - 600
        let reminder = try h.commit(.tick)
        #expect(reminder.records.compactMap(\.sessionID) == [held] && reminder.records[0].sessionChange == "starting_soon")
        try #require(reminder.records.count == 1)
        #expect(reminder.records[0].session?.reminded == true)
        #expect(try h.commit(.tick).records.isEmpty)

        // The coach joins; half an hour after its end the session completes and asks for a rating.
        h.now = Self.at + 2 * H.hour
        let joined = try h.commit(.act("k", .join, held))
        #expect(joined.records.map(\.sessionChange) == ["coach_joined"])
        #expect(try Self.status(joined) == "in_progress")
        h.now = Self.at + 2 * H.hour + 15 * 60 + 1800 - 1
        #expect(try h.commit(.tick).records.isEmpty)
        h.now += 1
        let completion = try h.commit(.tick)
        #expect(completion.records.map(\.kind) == [.session, .ratingPrompt])
        try #require(completion.records.count == 2)
        #expect(completion.records[0].session?.status == "completed")
        #expect(completion.records[1].content == .ratingPrompt(.afterSession(sessionID: held)))
        #expect(completion.applied.loggedTypes == ["k:session", "a:session", "a:rating_prompt"])

        // Reminded, never joined: missed at its end.
        h.now = Self.at + 4 * H.hour - 600
        #expect(try h.commit(.tick).records.compactMap(\.sessionChange) == ["starting_soon"])
        h.now = Self.at + 4 * H.hour + 15 * 60
        let miss = try h.commit(.tick)
        #expect(miss.records.compactMap(\.sessionID) == [missed] && miss.records[0].session?.status == "missed")
        #expect(miss.records.count == 1)  // no rating for a missed call
    }

    @Test func aCompletedSessionAsksTheClientForARating() throws {
        var features = CoreFeatures()
        features.ratings = true
        let h = CoreHarness(features: features)
        let session = try Self.id(h.commit(.invite(at: Self.at)))
        try h.commit(.act("a", .accept, session))
        h.now = Self.at
        try h.commit(.act("k", .join, session))
        h.now += 600
        let done = try h.commit(.act("k", .complete, session))
        #expect(done.records.map(\.kind) == [.session, .ratingPrompt])
        try #require(done.records.count == 2)
        #expect(done.records[1].content == .ratingPrompt(.afterSession(sessionID: session)) && done.records[1].side == .client)
        let event = try decode(RatingPromptEvent.self, try #require(done.applied.logged.last).payload)
        #expect(event == RatingPromptEvent(threadId: "t1", coachId: "k", reason: "session", messagesSent: nil, sessionId: session))
        // The reply is the session, not the prompt.
        #expect(try Self.status(done) == "completed")

        // Without --ratings, no prompt.
        let plain = CoreHarness()
        let other = try Self.id(plain.commit(.invite(at: Self.at)))
        try plain.commit(.act("a", .accept, other))
        plain.now = Self.at
        try plain.commit(.act("k", .join, other))
        #expect(try plain.commit(.act("k", .complete, other)).records.map(\.kind) == [.session])
    }

    @Test func anEndedLinkCancelsItsOpenSessions() throws {
        let h = CoreHarness()
        let invited = try Self.id(h.commit(.invite(at: Self.at)))
        let scheduled = try Self.id(h.commit(.invite(at: Self.at + 2 * H.hour)))
        try h.commit(.act("a", .accept, scheduled))
        let declined = try Self.id(h.commit(.invite(at: Self.at + 4 * H.hour)))
        try h.commit(.act("a", .decline, declined))
        let others = try Self.id(h.commit(.invite(thread: "t2", at: Self.at + 6 * H.hour)))

        // The accounts' transaction ended the link (its record is followed), then the shell asks the core.
        let link = h.follow([ChatRecord(threadNo: 1, side: .client, seq: h.thread("t1").lastSeq, at: h.now, .link(LinkChangeRecord(active: false)))])
        #expect(link.endedLinks == [1] && !h.thread("t1").active)
        #expect(link.loggedTypes == ["k:thread", "a:thread"])
        let ended = try h.commit(.linkEnded(threadNo: 1))
        #expect(ended.records.compactMap(\.sessionID) == [invited, scheduled])  // by start; the declined one is final
        for record in ended.records {
            #expect(record.session?.status == "cancelled" && record.session?.cancelReason == "link_ended")
            #expect(record.content.session?.byParticipant == false && record.sessionChange == "cancel")
        }
        #expect(ended.commit.reply == .none)
        #expect(h.core.sessions[others]?.status == .invited)
        // Nothing of the ended link moves any more.
        #expect(h.refusal(.act("k", .cancel, invited)) == APIError(.threadInactive, field: "session_id"))
        #expect(h.refusal(.act("a", .accept, declined)) == APIError(.threadInactive, field: "session_id"))
        #expect(try h.commit(.linkEnded(threadNo: 1)).records.isEmpty)
        #expect(try h.commit(.linkEnded(threadNo: 99)).records.isEmpty)
    }

    @Test func theFirstTickCancelsSessionsOfALinkThatEndedUnseen() throws {
        let h = CoreHarness()
        let session = try Self.id(h.commit(.invite(at: Self.at)))
        // The link ended, and the process stopped before it cancelled the link's sessions.
        h.follow([ChatRecord(threadNo: 1, side: .client, seq: h.thread("t1").lastSeq, at: h.now, .link(LinkChangeRecord(active: false)))])
        let swept = try h.commit(.tick)
        #expect(swept.records.compactMap(\.sessionID) == [session])
        #expect(swept.records.first?.session?.cancelReason == "link_ended")
        #expect(try h.commit(.tick).records.isEmpty)
    }

    /// One answer can change another client's session too (the coach asked Amal to move so Badr's invite fits):
    /// each participant hears of their own, and the reply is the session the command named.
    @Test func anAnswerRepliesWithTheSessionItNamedNeverAnotherClients() throws {
        let h = CoreHarness()
        let amal = try Self.id(h.commit(.invite(at: Self.at, minutes: 30)))
        try h.commit(.act("a", .accept, amal))
        let badrInvite = try h.commit(.invite(thread: "t2", at: Self.at + 15 * 60, minutes: 30))
        let badr = try Self.id(badrInvite)
        #expect(try Self.status(badrInvite) == "needs_resolution")

        let asked = try h.commit(.act("k", .askReschedule, badr, start: Self.at + 3 * H.hour))
        #expect(asked.records.compactMap(\.sessionID) == [amal, badr])
        #expect(try Self.id(asked) == badr)

        let moved = try h.commit(.act("a", .accept, amal))
        #expect(moved.records.compactMap(\.sessionID) == [amal, badr])
        #expect(moved.records.map(\.threadNo) == [1, 2])
        #expect(moved.records.map(\.sessionChange) == ["accept", "updated"])
        let reply = try decode(SessionView.self, moved.reply)
        #expect(reply.id == amal && reply.clientId == "a" && reply.status == "scheduled" && reply.start == Self.at + 3 * H.hour)
        #expect(!moved.reply.contains(badr))
        // Badr's session reaches Badr and the coach, not Amal.
        #expect(moved.applied.loggedTypes == ["k:session", "a:session", "k:session", "b:session"])
        #expect(h.core.sessions[badr]?.status == .invited)
    }

    /// Amal asked to move for Badr's invite (`ask_reschedule`), set up in a fresh core.
    func amalAskedToMoveForBadr() throws -> (h: CoreHarness, amal: String, badr: String) {
        let h = CoreHarness()
        let amal = try Self.id(h.commit(.invite(at: Self.at, minutes: 30)))
        try h.commit(.act("a", .accept, amal))
        let badr = try Self.id(h.commit(.invite(thread: "t2", at: Self.at + 15 * 60, minutes: 30)))
        try h.commit(.act("k", .askReschedule, badr, start: Self.at + 3 * H.hour))
        #expect(h.core.sessions[amal]?.status == .rescheduleRequested && h.core.sessions[amal]?.resolving == badr)
        return (h, amal, badr)
    }

    /// The session a command names is the reply even when it is not the last one the answer changed.
    @Test func keepingTheExistingSessionRepliesWithTheOneKeptOut() throws {
        let (h, amal, badr) = try amalAskedToMoveForBadr()
        let kept = try h.commit(.act("k", .keepExisting, badr))
        // Badr's is cancelled, then Amal's request to move is withdrawn.
        #expect(kept.records.compactMap(\.sessionID) == [badr, amal])
        let reply = try decode(SessionView.self, kept.reply)
        #expect(reply.id == badr && reply.status == "cancelled" && reply.cancelReason == "kept_existing")
        #expect(h.core.sessions[amal]?.status == .scheduled && h.core.sessions[amal]?.start == Self.at)
    }

    /// A client's answer that frees a slot for another client's session never replies with that session.
    @Test func aClientsCancelRepliesWithTheirOwnSessionNotTheOneItFreed() throws {
        let (h, amal, badr) = try amalAskedToMoveForBadr()
        let cancelled = try h.commit(.act("a", .cancel, amal))
        #expect(cancelled.records.compactMap(\.sessionID) == [amal, badr])
        let reply = try decode(SessionView.self, cancelled.reply)
        #expect(reply.id == amal && reply.clientId == "a" && reply.status == "cancelled")
        #expect(!cancelled.reply.contains(badr))
        #expect(h.core.sessions[badr]?.status == .invited)
        #expect(cancelled.applied.loggedTypes == ["k:session", "a:session", "k:session", "b:session"])
    }
}
