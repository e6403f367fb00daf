import Foundation
import Testing
import SpotterProtocol
@testable import SpotterCore

/// The push planner (issue 28): every row of its table, who is spared (awake, muted, categories off), how loud
/// (quiet hours), what the lock screen shows in each preview mode and language, and edge values in the records.
@Suite("Push planner: who is pushed about a committed record, in what words, how loud")
struct PushPlannerTests {
    static let thread = PushThread(id: "T-1", coachID: "K", clientID: "C")
    static let riyadh = TimeZone(identifier: "Asia/Riyadh")!
    static let utc = TimeZone(identifier: "UTC")!
    /// Monday 2025-01-20 15:00 in Riyadh (12:00 UTC); "now" is the day before at the same time.
    static let monday3pm: Int64 = 1_737_374_400
    static let tuesday2pm: Int64 = 1_737_457_200
    static let now: Int64 = monday3pm - 86_400

    static func person(_ id: String, _ name: String?, _ language: Language = .english, zone: TimeZone = utc,
                       awake: Bool = false, unread: Int = 3, prefs preferences: NotificationPreferences = .init()) -> PushPerson {
        PushPerson(id: id, name: name, language: language, timeZone: zone, awake: awake, unread: unread, preferences: preferences)
    }

    static func people(coach: PushPerson = person("K", "Carter"), client: PushPerson = person("C", "Sara")) -> [String: PushPerson] {
        [coach.id: coach, client.id: client]
    }

    static func message(_ body: String, from side: Side = .coach, kind: MessageKind = .text, attached: Bool = false,
                        pos: Int64 = 10) -> ChatRecord {
        ChatRecord(pos: pos, threadNo: 1, side: side, seq: 7, at: now,
                   .message(MessageRecord(kind: kind, clientMessageID: "m\(pos)", body: body, hasAttachments: attached)))
    }

    static func session(_ status: SessionStatus, start: Int64 = monday3pm, minutes: Int = 60, proposed: Int64? = nil,
                        reminded: Bool = false, reason: String? = nil) -> Session {
        Session(id: "S", threadID: thread.id, coachID: "K", clientID: "C", start: start, durationMinutes: minutes,
                purpose: "Strength training review", meetURL: "https://meet.example/x", status: status,
                proposedStart: proposed, cancelReason: reason, reminded: reminded)
    }

    /// A session record as the core writes it: the change, who made it, the session before and after.
    static func change(_ change: String, by actor: SessionActor?, _ action: SessionAction? = nil, from before: Session?,
                       to after: Session, systemMessage: Bool = true, pos: Int64 = 20) throws -> ChatRecord {
        let body = SessionRecordBody(change: change, actor: actor, action: action, before: before, after: after)
        let json = String(decoding: try JSONEncoder().encode(body), as: UTF8.self)
        return ChatRecord(pos: pos, threadNo: 1, side: actor == .client ? .client : .coach, seq: 9, at: now,
                          .session(SessionRecord(sessionID: after.id, isSystemMessage: systemMessage,
                                                 byParticipant: actor == .coach || actor == .client, json: json)))
    }

    func plan(_ record: ChatRecord, _ people: [String: PushPerson] = people(), preview: PushPreview = .sender,
              now: Int64 = now) -> [PlannedPush] {
        PushPlanner(preview: preview).plan(record, thread: Self.thread, people: people, now: now)
    }

    // MARK: The table

    @Test func aMessageGoesToTheOtherParticipantOnly() {
        let toClient = plan(Self.message("Drink water", from: .coach))
        #expect(toClient == [PlannedPush(
            userID: "C", pos: 10, kind: .message, title: "New message from Carter", body: "", quiet: false, threadID: "T-1",
            badge: 3, data: ["seq": "7", "thread_id": "T-1", "kind": "message"], expiresAt: Self.now + 86_400, urgent: true,
            sender: "Carter", language: .english)])
        let toCoach = plan(Self.message("Thanks", from: .client))
        #expect(toCoach.map(\.userID) == ["K"] && toCoach.first?.title == "New message from Sara")
        // The sender being away too changes nothing; the receiver awake gets nothing.
        #expect(plan(Self.message("Hi"), Self.people(client: Self.person("C", "Sara", awake: true))).isEmpty)
    }

    struct Row {
        var label: String
        var record: ChatRecord
        var to: [String]
        var kind: PlannedPush.Kind = .session
        var title: String
    }

    static func rows() throws -> [Row] {
        let invited = session(.invited), scheduled = session(.scheduled)
        let asked = session(.rescheduleRequested, proposed: tuesday2pm)
        return [
            Row(label: "invite", record: try change("created", by: .coach, from: nil, to: invited), to: ["C"],
                title: "🎥 New Session Scheduled"),
            Row(label: "request", record: try change("created", by: .client, from: nil, to: session(.requested)), to: ["K"],
                title: "📞 Video Call Requested"),
            Row(label: "accepted", record: try change("accept", by: .client, .accept, from: invited, to: scheduled), to: ["K"],
                title: "✅ Session Confirmed"),
            Row(label: "request accepted", record: try change("accept", by: .coach, .accept, from: session(.requested), to: scheduled),
                to: ["C"], title: "✅ Session Confirmed"),
            Row(label: "declined", record: try change("decline", by: .client, .decline, from: invited, to: session(.declined)),
                to: ["K"], title: "❌ Session Declined"),
            Row(label: "alternative", record: try change("propose", by: .client, .propose, from: invited,
                                                         to: session(.alternativeProposed, proposed: tuesday2pm)),
                to: ["K"], title: "🔄 Alternative Time Proposed"),
            Row(label: "reschedule asked", record: try change("reschedule", by: .coach, .reschedule, from: scheduled, to: asked),
                to: ["C"], title: "🔄 Reschedule Request"),
            Row(label: "reschedule accepted", record: try change("accept", by: .client, .accept, from: asked,
                                                                 to: session(.scheduled, start: tuesday2pm)),
                to: ["K"], title: "📅 Session Rescheduled"),
            Row(label: "reschedule declined", record: try change("decline", by: .client, .decline, from: asked, to: scheduled),
                to: ["K"], title: "↩️ Reschedule Declined"),
            Row(label: "reschedule lapsed", record: try change("expire", by: .system, .expire, from: asked, to: scheduled),
                to: ["K", "C"], title: "↩️ Reschedule Declined"),
            Row(label: "cancelled", record: try change("cancel", by: .coach, .cancel, from: scheduled, to: session(.cancelled)),
                to: ["C"], title: "❌ Session Cancelled"),
            Row(label: "link ended", record: try change("cancel", by: .system, .cancel, from: scheduled,
                                                        to: session(.cancelled, reason: SessionRules.linkEndedReason)),
                to: ["K", "C"], title: "❌ Session Cancelled"),
            // The coach made it, yet the coach is the one who must resolve it.
            Row(label: "conflict on invite", record: try change("created", by: .coach, from: nil, to: session(.needsResolution)),
                to: ["K"], title: "🎥 New Session Scheduled"),
            Row(label: "conflict on accept", record: try change("accept", by: .client, .accept, from: invited,
                                                                to: session(.needsResolution)),
                to: ["K"], title: "⏳ Session Pending"),
            Row(label: "starting soon", record: try change("starting_soon", by: .system, from: scheduled,
                                                           to: session(.scheduled, reminded: true)),
                to: ["K", "C"], kind: .reminder, title: "⏰ Session Starting Soon"),
            Row(label: "coach joined", record: try change("coach_joined", by: .coach, .join, from: scheduled,
                                                          to: session(.inProgress)),
                to: ["C"], kind: .reminder, title: "🟢 Coach has joined — the session has started"),
            // Another client's answer settled this thread's conflict (the core logs it as "updated" with the
            // answering client as actor): neither participant here acted, so both hear of it.
            Row(label: "settled by another client", record: try change("updated", by: .client, .accept,
                                                                        from: session(.needsResolution), to: invited),
                to: ["K", "C"], title: "🎥 New Session Scheduled"),
        ]
    }

    @Test func everySessionChangeReachesTheRightSideAsTheRightKind() throws {
        for row in try Self.rows() {
            let made = plan(row.record)
            #expect(made.map(\.userID) == row.to, "\(row.label)")
            #expect(made.allSatisfy { $0.kind == row.kind && $0.title == row.title && $0.pos == 20 }, "\(row.label): \(made)")
            #expect(made.allSatisfy { $0.data == ["session_id": "S", "change": SessionRecordBody(row.record)!.change,
                                                  "thread_id": "T-1", "kind": row.kind.rawValue] }, "\(row.label)")
            #expect(made.allSatisfy { $0.urgent && !$0.quiet && $0.sender == nil && $0.expiresAt > Self.now }, "\(row.label)")
            // Awake, nobody gets a visible push.
            let awake = Self.people(coach: Self.person("K", "Carter", awake: true), client: Self.person("C", "Sara", awake: true))
            #expect(plan(row.record, awake).isEmpty, "\(row.label)")
        }
    }

    @Test func aSessionPushSaysWhatTheThreadSaysInTheReceiversZone() throws {
        let record = try Self.change("created", by: .coach, from: nil, to: Self.session(.invited))
        let made = try #require(plan(record, Self.people(client: Self.person("C", "Sara", zone: Self.riyadh))).first)
        #expect(made.title == "🎥 New Session Scheduled")
        #expect(made.body == "Monday, Jan 20 at 3:00 PM\nDuration: 1 hour\nPurpose: Strength training review")
        #expect(made.expiresAt == Self.now + 86_400)
    }

    @Test func aReminderLastsUntilTheSessionEnds() throws {
        let soon = try Self.change("starting_soon", by: .system, from: Self.session(.scheduled),
                                   to: Self.session(.scheduled, minutes: 45, reminded: true))
        #expect(plan(soon).map(\.expiresAt) == [Self.monday3pm + 45 * 60, Self.monday3pm + 45 * 60])
        // Handled after the session ended (a consumer far behind): it expires now, never in the past.
        #expect(plan(soon, now: Self.monday3pm + 86_400).map(\.expiresAt) == [Self.monday3pm + 86_400, Self.monday3pm + 86_400])
    }

    @Test func changesNobodyMustHearOfPushNothing() throws {
        let scheduled = Self.session(.scheduled), invited = Self.session(.invited)
        let silent: [(String, ChatRecord)] = [
            ("invite unchanged", try Self.change("updated", by: .coach, from: invited, to: invited)),
            ("scheduled unchanged", try Self.change("updated", by: .system, from: scheduled, to: scheduled)),
            ("scheduled from nothing", try Self.change("created", by: .coach, from: nil, to: scheduled)),
            ("coach left", try Self.change("leave", by: .coach, .leave, from: Self.session(.inProgress), to: Self.session(.inProgress))),
            ("completed", try Self.change("complete", by: .coach, .complete, from: Self.session(.inProgress),
                                          to: Self.session(.completed))),
            ("expired", try Self.change("expire", by: .system, .expire, from: invited, to: Self.session(.expired))),
            ("missed", try Self.change("miss", by: .system, .miss, from: scheduled, to: Self.session(.missed))),
            ("not a system message", try Self.change("cancel", by: .coach, .cancel, from: scheduled, to: Self.session(.cancelled),
                                                     systemMessage: false)),
        ]
        for (label, record) in silent { #expect(plan(record).isEmpty, "\(label)") }
        // Bodies the server cannot read: not JSON, an unknown status.
        let garbage = ChatRecord(pos: 3, threadNo: 1, side: .coach, seq: 1, at: Self.now,
                                 .session(SessionRecord(sessionID: "S", byParticipant: true, json: "{\"change\":")))
        #expect(plan(garbage).isEmpty)
        let json = String(decoding: try JSONEncoder().encode(SessionRecordBody(
            change: "created", actor: .coach, action: nil, before: nil, after: invited)), as: UTF8.self)
            .replacingOccurrences(of: "\"invited\"", with: "\"teleported\"")
        #expect(json.contains("teleported"))
        #expect(plan(ChatRecord(pos: 3, threadNo: 1, side: .coach, seq: 1, at: Self.now,
                                .session(SessionRecord(sessionID: "S", byParticipant: true, json: json)))).isEmpty)
    }

    @Test func aLinkIsPushedToBothInTheirWords() {
        let started = ChatRecord(pos: 5, threadNo: 1, side: .client, seq: 0, at: Self.now, .link(LinkChangeRecord(active: true)))
        let made = plan(started)
        #expect(made.map(\.userID) == ["K", "C"])
        #expect(made.map(\.title) == ["New client: Sara", "Carter is now your coach"])
        #expect(made.allSatisfy { $0.kind == .session && $0.body.isEmpty && $0.data["link"] == "started" && $0.data["kind"] == "session" })
        let ended = ChatRecord(pos: 6, threadNo: 1, side: .client, seq: 0, at: Self.now, .link(LinkChangeRecord(active: false)))
        let arabic = Self.people(client: Self.person("C", "Sara", .arabic))
        #expect(plan(ended, arabic).map(\.title) == ["Your coaching with Sara has ended", "انتهى التدريب مع Carter"])
        #expect(plan(started, arabic).last?.title == "مدربك الآن Carter")
        #expect(plan(ended, Self.people(coach: Self.person("K", "Carter", awake: true))).map(\.userID) == ["C"])
    }

    @Test func aReadThatMovedIsASilentBadgeForTheReaderEvenAwake() {
        let read = ChatRecord(pos: 30, threadNo: 1, side: .client, seq: 7, at: Self.now,
                              .receipt(ReceiptRecord(delivered: 7, read: 7, readMoved: true)))
        let awake = Self.people(client: Self.person("C", "Sara", awake: true, unread: 0))
        #expect(plan(read, awake) == [PlannedPush(
            userID: "C", pos: 30, kind: .badge, title: "", body: "", quiet: true, threadID: "T-1", badge: 0,
            data: ["thread_id": "T-1", "kind": "badge"], expiresAt: Self.now + 3600, urgent: false, sender: nil, language: .english)])
        let delivered = ChatRecord(pos: 31, threadNo: 1, side: .client, seq: 7, at: Self.now,
                                   .receipt(ReceiptRecord(delivered: 7, read: 6, readMoved: false)))
        #expect(plan(delivered).isEmpty)
        // The reader unknown (gone since): nothing.
        #expect(plan(read, ["K": Self.person("K", "Carter")]).isEmpty)
    }

    @Test func recordsThatAreNoNewsPushNothing() throws {
        let records: [ChatRecord.Content] = [
            .ratingPrompt(.afterMessages(sent: 10)), .ratingPrompt(.afterSession(sessionID: "S")), .tier(TierRecord(tier: "gold")),
            .coaching(CoachingChangeRecord(itemID: "i", json: "{}")),
            .unknown(ChatRecord.Columns(kind: 99, a: 1, b: 2, ref: "x", body: "New message from Carter")),
        ]
        for content in records {
            #expect(plan(ChatRecord(pos: 40, threadNo: 1, side: .coach, seq: 7, at: Self.now, content)).isEmpty, "\(content)")
        }
    }

    // MARK: Previews and words

    @Test func fullPreviewsShowTheStartOfTheMessage() throws {
        let short = try #require(plan(Self.message("Drink water 💧"), preview: .full).first)
        #expect(short.title == "New message from Carter" && short.body == "Drink water 💧" && short.sender == "Carter")
        let long = try #require(plan(Self.message(String(repeating: "a", count: 5_000)), preview: .full).first)
        #expect(long.body.count == 100 && long.body.hasSuffix("…") && long.body.utf8.count <= 400)
        let meal = MealLog(name: "Chicken bowl", ingredients: ["rice"], calories: 500, proteinG: 40, carbsG: 50, fatsG: 10,
                           mealType: "lunch", photoRef: nil)
        let card = String(decoding: try JSONEncoder().encode(meal), as: UTF8.self)
        #expect(plan(Self.message(card, kind: .mealLog), preview: .full).first?.body == "🍽 Chicken bowl")
        let attached = String(decoding: try JSONEncoder().encode(AttachedText(text: "Form check", attachments: [])), as: UTF8.self)
        #expect(plan(Self.message(attached, attached: true), preview: .full).first?.body == "📎 Form check")
        let bare = String(decoding: try JSONEncoder().encode(AttachedText(text: "", attachments: [])), as: UTF8.self)
        #expect(plan(Self.message(bare, attached: true), preview: .full).first?.body == "📎")
        // The sender mode names them only.
        #expect(plan(Self.message(card, kind: .mealLog)).first?.body == "")
    }

    @Test func noPreviewNamesNobodyAndSaysNothing() throws {
        let message = try #require(plan(Self.message("My address is 5 Main St"), preview: .none).first)
        #expect(message.title == "New message" && message.body.isEmpty && message.sender == nil)
        let invite = try Self.change("created", by: .coach, from: nil, to: Self.session(.invited))
        let session = try #require(plan(invite, preview: .none).first)
        #expect(session.title == "Session update" && session.body.isEmpty)
        let arabic = Self.people(client: Self.person("C", "Sara", .arabic))
        #expect(plan(invite, arabic, preview: .none).first?.title == "تحديث على جلستك")
        #expect(plan(Self.message("x"), arabic, preview: .none).first?.title == "رسالة جديدة")
        // A link names the other person otherwise: not here.
        let linked = ChatRecord(pos: 5, threadNo: 1, side: .client, seq: 0, at: Self.now, .link(LinkChangeRecord(active: true)))
        #expect(plan(linked, preview: .none).map(\.title) == ["Coaching update", "Coaching update"])
        #expect(plan(linked, arabic, preview: .none).contains { $0.title == "تحديث على التدريب" })
    }

    @Test func arabicReceiversAndMissingNames() {
        let arabic = Self.people(client: Self.person("C", "Sara", .arabic))
        let made = plan(Self.message("مرحبا"), arabic, preview: .full)
        #expect(made.first?.title == "رسالة جديدة من Carter" && made.first?.body == "مرحبا" && made.first?.language == .arabic)
        // A sender without a name, or not known at all.
        let nameless = Self.people(coach: Self.person("K", nil))
        #expect(plan(Self.message("hi"), nameless).first?.title == "New message from Someone")
        #expect(plan(Self.message("hi"), nameless).first?.sender == "Someone")
        #expect(plan(Self.message("hi"), ["C": Self.person("C", "Sara", .arabic)]).first?.title == "رسالة جديدة من مستخدم")
        let started = ChatRecord(pos: 5, threadNo: 1, side: .client, seq: 0, at: Self.now, .link(LinkChangeRecord(active: true)))
        #expect(plan(started, ["C": Self.person("C", "Sara")]).map(\.title) == ["Someone is now your coach"])
    }

    // MARK: Preferences

    @Test func aMutedThreadSilencesItsMessagesNotItsSessions() throws {
        var muted = NotificationPreferences()
        muted.mutedThreads = [ThreadMute(threadID: "T-1", until: nil)]
        let people = Self.people(client: Self.person("C", "Sara", prefs: muted))
        #expect(plan(Self.message("hi"), people).isEmpty)
        let invite = try Self.change("created", by: .coach, from: nil, to: Self.session(.invited))
        #expect(plan(invite, people).map(\.userID) == ["C"])
        // A mute that ended, or one of another thread, mutes nothing.
        muted.mutedThreads = [ThreadMute(threadID: "T-1", until: Self.now), ThreadMute(threadID: "T-2", until: nil)]
        #expect(plan(Self.message("hi"), Self.people(client: Self.person("C", "Sara", prefs: muted))).map(\.userID) == ["C"])
    }

    @Test func quietHoursInTheReceiversZoneMakePushesQuietButNotReminders() throws {
        var quiet = NotificationPreferences()
        quiet.quietHours = QuietHours(start: 14 * 60, end: 16 * 60)
        // 15:00 in Riyadh, 12:00 in UTC.
        let night = Self.people(coach: Self.person("K", "Carter", zone: Self.riyadh, prefs: quiet),
                                client: Self.person("C", "Sara", zone: Self.riyadh, prefs: quiet))
        let message = try #require(plan(Self.message("hi"), night).first)
        #expect(message.quiet && !message.urgent)
        let invite = try #require(plan(try Self.change("created", by: .coach, from: nil, to: Self.session(.invited)), night).first)
        #expect(invite.quiet && !invite.urgent)
        let soon = try Self.change("starting_soon", by: .system, from: Self.session(.scheduled),
                                   to: Self.session(.scheduled, reminded: true))
        #expect(plan(soon, night).map { "\($0.quiet) \($0.urgent)" } == ["false true", "false true"])
        let day = Self.people(client: Self.person("C", "Sara", zone: Self.utc, prefs: quiet))
        #expect(plan(Self.message("hi"), day).map { "\($0.quiet) \($0.urgent)" } == ["false true"])
    }

    @Test func aCategoryOffSkipsItsPushesOnly() throws {
        let invite = try Self.change("created", by: .coach, from: nil, to: Self.session(.invited))
        let soon = try Self.change("starting_soon", by: .system, from: Self.session(.scheduled),
                                   to: Self.session(.scheduled, reminded: true))
        let started = ChatRecord(pos: 5, threadNo: 1, side: .client, seq: 0, at: Self.now, .link(LinkChangeRecord(active: true)))
        let read = ChatRecord(pos: 30, threadNo: 1, side: .client, seq: 7, at: Self.now,
                              .receipt(ReceiptRecord(delivered: 7, read: 7, readMoved: true)))
        func client(messages: Bool = true, sessions: Bool = true, reminders: Bool = true) -> [String: PushPerson] {
            Self.people(client: Self.person("C", "Sara", prefs: NotificationPreferences(
                messages: messages, sessions: sessions, reminders: reminders, quietHours: nil, mutedThreads: [])))
        }
        #expect(plan(Self.message("hi"), client(messages: false)).isEmpty)
        #expect(plan(invite, client(messages: false)).map(\.userID) == ["C"])
        #expect(plan(invite, client(sessions: false)).isEmpty)
        #expect(plan(started, client(sessions: false)).map(\.userID) == ["K"])
        #expect(plan(soon, client(sessions: false)).map(\.userID) == ["K", "C"])
        #expect(plan(soon, client(reminders: false)).map(\.userID) == ["K"])
        #expect(plan(Self.message("hi"), client(sessions: false, reminders: false)).map(\.userID) == ["C"])
        // The silent badge is no notification: it follows the read whatever is off.
        #expect(plan(read, client(messages: false, sessions: false, reminders: false)).map(\.kind) == [.badge])
    }

    // MARK: Edge values

    @Test func bodiesAtTheEdges() throws {
        // Empty, and as large as a text may be (8 KiB of marks on one letter, 1,000 emoji).
        #expect(plan(Self.message(""), preview: .full).first?.body == "")
        let zalgo = "a" + String(repeating: "\u{0301}", count: 4_000)
        let cut = try #require(plan(Self.message(zalgo), preview: .full).first?.body)
        #expect(cut.utf8.count <= 400 && cut.hasSuffix("…"))
        let emoji = try #require(plan(Self.message(String(repeating: "😀", count: 1_000)), preview: .full).first?.body)
        #expect(emoji == String(repeating: "😀", count: 99) + "…")
        // Exactly 100 characters is not cut.
        let hundred = String(repeating: "😀", count: 100)
        #expect(plan(Self.message(hundred), preview: .full).first?.body == hundred)
        // Line breaks of every kind become spaces: a push body is one line; other control characters pass as sent.
        let lines = try #require(plan(Self.message("one\ntwo\r\nthree\u{2028}four\tfive\u{1B}[31m"), preview: .full).first)
        #expect(lines.body == "one two three four\tfive\u{1B}[31m" && !lines.title.contains("\n"))
    }

    @Test func aCutNeverSplitsACharacter() throws {
        // At the 100-character cut: a letter with a combining mark, an Arabic letter with two marks, stay whole.
        for unit in ["e\u{301}", "بَّ", "😀"] {
            let body = try #require(plan(Self.message(String(repeating: unit, count: 150)), preview: .full).first?.body)
            #expect(body.hasSuffix("…") && body.utf8.count <= 400, "\(unit)")
            #expect(body.dropLast().allSatisfy { String($0) == unit }, "\(unit)")
        }
        // A character of several scalars where the 400-byte budget ends (a flag and a skin tone are 8 bytes, a family
        // 25). Known issue: `TextBounds.prefix` keeps the scalars of it that still fit, so the preview ends in 🇸, 👍
        // or 👨‍👩‍👧‍ (other pictures than were sent) before the "…".
        for unit in ["🇸🇦", "👍🏽", "👨‍👩‍👧‍👦"] {
            let body = try #require(plan(Self.message(String(repeating: unit, count: 100)), preview: .full).first?.body)
            #expect(body.utf8.count <= 400 && body.hasSuffix("…"), "\(unit)")
            #expect(body.dropLast().allSatisfy { String($0) == unit }, "a cluster is never split: \(unit)")
        }
    }

    @Test func aSessionAtTheEdgeOfTimeIsClamped() throws {
        // A start at Int64's edge (a database from before the wire bounded it) reads back clamped: the reminder
        // expires at the last second of year 9999, not in an overflow.
        let far = Self.session(.scheduled, start: .max, minutes: 60)
        let soon = try Self.change("starting_soon", by: .system, from: far, to: Self.session(.scheduled, start: .max, reminded: true))
        let made = plan(soon)
        #expect(made.count == 2 && made.allSatisfy { $0.expiresAt == WireRange.time.upperBound && $0.kind == .reminder })
        let past = try Self.change("starting_soon", by: .system, from: Self.session(.scheduled, start: .min),
                                   to: Self.session(.scheduled, start: .min, minutes: 100_000, reminded: true))
        #expect(plan(past).map(\.expiresAt) == [Self.now, Self.now])
    }
}
