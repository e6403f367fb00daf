import Foundation
import Testing
import SpotterProtocol
@testable import SpotterCore

@Suite("SessionText: system messages in each recipient's language and time zone")
struct SessionTextTests {
    static let riyadh = TimeZone(identifier: "Asia/Riyadh")!
    /// Monday 2025-01-20 15:00 in Riyadh (UTC+3), the seed's example day.
    static let monday3pm: Int64 = 1_737_374_400
    /// Tuesday 2025-01-21 14:00 in Riyadh.
    static let tuesday2pm: Int64 = 1_737_457_200

    func session(_ status: SessionStatus, start: Int64 = monday3pm, proposed: Int64? = nil, reason: String? = nil) -> Session {
        Session(id: "s", threadID: "t", coachID: "K", clientID: "A", start: start, durationMinutes: 60,
                purpose: "Strength training review", meetURL: "https://meet.example/x", status: status,
                proposedStart: proposed, cancelReason: reason)
    }

    func text(_ before: Session?, _ after: Session, actor: SessionActor? = .coach, to recipient: SessionActor = .client,
              _ language: Language = .english, _ zone: TimeZone = riyadh) -> String {
        SessionText.render(before: before, after: after, actor: actor, recipient: recipient, language: language, timeZone: zone)
    }

    @Test("a session record's JSON is what JSONEncoder writes, and reads back to the same message")
    func recordBody() throws {
        for (before, action) in [(Session?.none, SessionAction?.none), (session(.invited), .accept)] {
            let after = session(before == nil ? .invited : .scheduled)
            let body = SessionRecordBody(change: action?.rawValue ?? "created", actor: action == nil ? .coach : .client,
                                         action: action, before: before, after: after)
            let json = body.jsonText(sessionJSON: body.session.jsonText)
            #expect(json == JSONText.encoder.encodeToString(body))
            let record = ChatRecord(threadNo: 1, side: .client, seq: 4, at: 5,
                                    .session(SessionRecord(sessionID: "s", byParticipant: true, json: json)))
            let message = try #require(SessionText.message(record, threadID: "t", recipient: .coach, language: .english,
                                                           timeZone: Self.riyadh))
            #expect(message.seq == 4 && message.kind == "system" && message.sessionId == "s" && message.senderId == nil)
            #expect(message.text == text(before, after, actor: body.actor.flatMap(SessionActor.init(rawValue:)),
                                         to: .coach))
        }
    }

    @Test("the seed's three messages, word for word")
    func seedWording() {
        #expect(text(nil, session(.invited)) == """
            🎥 New Session Scheduled
            Monday, Jan 20 at 3:00 PM
            Duration: 1 hour
            Purpose: Strength training review
            """)
        #expect(text(session(.scheduled), session(.cancelled, reason: "Coach unavailable")) == """
            ❌ Session Cancelled
            Your session on Monday, Jan 20 has been cancelled.
            Reason: Coach unavailable
            """)
        #expect(text(session(.scheduled), session(.rescheduleRequested, proposed: Self.tuesday2pm)) == """
            🔄 Reschedule Request
            Coach is asking to move your session from Monday 3PM to Tuesday 2PM.
            """)
        // The coach, who asked, reads it as theirs.
        #expect(text(session(.scheduled), session(.rescheduleRequested, proposed: Self.tuesday2pm), to: .coach)
                == "🔄 Reschedule Request\nYou asked to move the session from Monday 3PM to Tuesday 2PM.")
    }

    @Test("Arabic, with the same instants")
    func arabic() {
        #expect(text(nil, session(.invited), .arabic) == """
            🎥 جلسة جديدة مجدولة
            الاثنين، 20 يناير الساعة 3:00 م
            المدة: ساعة واحدة
            الهدف: Strength training review
            """)
        #expect(text(session(.scheduled), session(.cancelled, reason: "المدرب غير متاح"), .arabic) == """
            ❌ تم إلغاء الجلسة
            تم إلغاء جلستك يوم الاثنين، 20 يناير.
            السبب: المدرب غير متاح
            """)
        #expect(text(session(.scheduled), session(.rescheduleRequested, proposed: Self.tuesday2pm), .arabic)
                == "🔄 طلب إعادة جدولة\nالمدرب يطلب نقل جلستك من الاثنين 3 م إلى الثلاثاء 2 م.")
    }

    @Test("a reschedule across the US daylight-saving change keeps each side's wall clock")
    func acrossDST() throws {
        let newYork = try #require(TimeZone(identifier: "America/New_York"))
        let london = try #require(TimeZone(identifier: "Europe/London"))
        // Saturday 2026-03-07 15:00 EST (20:00Z) → Monday 2026-03-09 15:00 EDT (19:00Z): clocks moved on the 8th.
        let saturday: Int64 = 1_772_913_600, monday: Int64 = 1_773_082_800
        let request = session(.rescheduleRequested, start: saturday, proposed: monday)
        #expect(text(session(.scheduled, start: saturday), request, actor: .client, to: .coach, .english, newYork)
                == "🔄 Reschedule Request\nClient is asking to move your session from Saturday 3PM to Monday 3PM.")
        // London changes three weeks later: the same instants are 8 PM and 7 PM there.
        #expect(text(session(.scheduled, start: saturday), request, actor: .client, to: .coach, .english, london)
                == "🔄 Reschedule Request\nClient is asking to move your session from Saturday 8PM to Monday 7PM.")
        let moved = session(.scheduled, start: monday)
        #expect(text(request, moved, actor: .coach, to: .client, .english, newYork)
                == "📅 Session Rescheduled\nNow: Monday, Mar 9 at 3:00 PM")
    }

    @Test("every status reached from every other renders a non-empty message in both languages")
    func everyChangeRenders() {
        for status in SessionStatus.allCases {
            for before in [nil] + SessionStatus.allCases.map({ session($0) }) {
                for language in Language.allCases {
                    #expect(!text(before, session(status, proposed: Self.tuesday2pm), language).isEmpty)
                }
            }
        }
    }
}
