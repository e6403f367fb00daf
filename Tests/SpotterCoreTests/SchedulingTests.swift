import Foundation
import Testing
@testable import SpotterCore
import SpotterProtocol

/// A coach's availability and the free slots it leaves (issue 30 item 1): DST in the coach's zone, gaps and
/// repeated hours, buffers, notice, the day's cap, both calendars, exceptions, validation at the edges, and the
/// core's decision on a time outside availability.
@Suite("Scheduling: availability and free slots")
struct SchedulingTests {
    static let weekdays: [String: [AvailabilityHours]] = Dictionary(uniqueKeysWithValues: ["mon", "tue", "wed", "thu", "fri"].map {
        ($0, [AvailabilityHours(start: "09:00", end: "17:00")])
    })

    static func availability(_ zone: String = "America/New_York", weekly: [String: [AvailabilityHours]] = weekdays,
                             exceptions: [AvailabilityException] = [], before: Int64? = nil, after: Int64? = nil,
                             notice: Int64? = nil, cap: Int64? = nil) throws -> CoachAvailability {
        try CoachAvailability(command: AvailabilitySetCommand(
            timeZone: zone, weekly: weekly, exceptions: exceptions, bufferBeforeMinutes: before, bufferAfterMinutes: after,
            minimumNoticeMinutes: notice, maxSessionsPerDay: cap))
    }

    /// Unix seconds of a UTC date-time.
    static func utc(_ year: Int, _ month: Int, _ day: Int, _ hour: Int = 0, _ minute: Int = 0) -> Int64 {
        FreeSlots.daysFromCivil(.init(year: year, month: month, day: day)) * 86_400 + Int64(hour * 3600 + minute * 60)
    }

    static func session(_ id: String, coach: String = "k", client: String = "a", start: Int64, minutes: Int = 60,
                        status: SessionStatus = .scheduled) -> Session {
        Session(id: id, threadID: "t", coachID: coach, clientID: client, start: start, durationMinutes: minutes,
                purpose: "p", meetURL: "u", status: status)
    }

    static func slots(_ availability: CoachAvailability, busy: [Session] = [], coach: [Session]? = nil, length: Int64 = 60,
                      from: Int64, to: Int64, step: Int64 = 60, now: Int64 = 0) -> [Int64] {
        FreeSlots.compute(availability, busy: busy, coachSessions: coach ?? busy, length: length, from: from, to: to,
                          step: step, now: now).slots.map(\.start)
    }

    @Test func nineToFiveStaysLocalAcrossBothChanges() throws {
        let a = try Self.availability()
        // Friday 6 March 2026 (EST, UTC−5) and Monday 9 March (EDT, UTC−4): the weekend between changes the clocks.
        let march = Self.slots(a, from: Self.utc(2026, 3, 6), to: Self.utc(2026, 3, 10))
        #expect(march.count == 16)
        #expect(march.first == Self.utc(2026, 3, 6, 14) && march[7] == Self.utc(2026, 3, 6, 21))
        #expect(march[8] == Self.utc(2026, 3, 9, 13) && march.last == Self.utc(2026, 3, 9, 20))
        // Friday 30 October (EDT) and Monday 2 November (EST), across Sunday 1 November's change.
        let november = Self.slots(a, from: Self.utc(2026, 10, 30), to: Self.utc(2026, 11, 3))
        #expect(november.count == 16 && november.first == Self.utc(2026, 10, 30, 13) && november[8] == Self.utc(2026, 11, 2, 14))
        // Shown in the asker's zone: 09:00 local in New York either side; 16:00 / 17:00 in Riyadh.
        let ny = TimeZoneRules.zone("America/New_York"), riyadh = TimeZoneRules.zone("Asia/Riyadh")
        #expect(FreeSlots.localText(march[0], ny) == "2026-03-06T09:00-05:00")
        #expect(FreeSlots.localText(march[8], ny) == "2026-03-09T09:00-04:00")
        #expect(FreeSlots.localText(march[8], riyadh) == "2026-03-09T16:00+03:00")
        #expect(FreeSlots.localText(march[0], TimeZoneRules.zone("UTC")) == "2026-03-06T14:00Z")
    }

    @Test func aSkippedLocalTimeMovesOnAndARepeatedOneIsItsFirst() throws {
        // 8 March 2026: 02:00 EST jumps to 03:00 EDT. 02:30 does not exist: read as 03:30 EDT (07:30Z).
        let gap = try Self.availability(exceptions: [AvailabilityException(date: "2026-03-08", hours: [.init(start: "02:30", end: "04:00")])])
        #expect(Self.slots(gap, length: 30, from: Self.utc(2026, 3, 8), to: Self.utc(2026, 3, 9), step: 15)
            == [Self.utc(2026, 3, 8, 7, 30)])
        // 1 November 2026: 01:00–02:00 happens twice. 01:30 is the first (EDT, 05:30Z); 03:00 is EST (08:00Z).
        let repeated = try Self.availability(exceptions: [AvailabilityException(date: "2026-11-01", hours: [.init(start: "01:30", end: "03:00")])])
        let found = Self.slots(repeated, length: 30, from: Self.utc(2026, 11, 1), to: Self.utc(2026, 11, 2), step: 30)
        #expect(found.first == Self.utc(2026, 11, 1, 5, 30) && found.last == Self.utc(2026, 11, 1, 7, 30) && found.count == 5)
    }

    @Test func bothCalendarsWithBuffersBlockTime() throws {
        let a = try Self.availability("UTC", before: 15, after: 15)
        let day = Self.utc(2027, 1, 18)  // a Monday
        // The coach's session 12:00–13:00, the client's (with another coach) 15:00–16:00; a cancelled one is free.
        let busy = [Self.session("s1", start: day + 12 * 3600),
                    Self.session("s2", coach: "other", start: day + 15 * 3600),
                    Self.session("s3", start: day + 9 * 3600, status: .cancelled),
                    Self.session("s4", start: day + 10 * 3600, status: .declined)]
        let found = Self.slots(a, busy: busy, coach: [busy[0], busy[2], busy[3]], from: day, to: day + 86_400, step: 15)
        // 60 minutes plus 15 either side: 09:00–10:45 starts, then 13:15–13:45, then 16:15–16:00 → none after 16:00.
        #expect(found.contains(day + 9 * 3600) && found.contains(day + 10 * 3600 + 45 * 60))
        #expect(!found.contains(day + 11 * 3600) && !found.contains(day + 13 * 3600))
        #expect(found.contains(day + 13 * 3600 + 15 * 60) && found.contains(day + 13 * 3600 + 45 * 60))
        #expect(!found.contains(day + 14 * 3600) && !found.contains(day + 16 * 3600))
        #expect(found.filter { $0 > day + 16 * 3600 }.isEmpty)  // 16:15 + 60 min > 17:00
        // A pending alternative holds its proposed time too.
        var pending = Self.session("s5", start: day + 20 * 86_400, status: .alternativeProposed)
        pending.proposedStart = day + 9 * 3600
        #expect(!Self.slots(a, busy: [pending], from: day, to: day + 86_400).contains(day + 9 * 3600))
    }

    @Test func noticeAndTheDaysCap() throws {
        let day = Self.utc(2027, 1, 18)
        let notice = try Self.availability("UTC", notice: 120)
        #expect(Self.slots(notice, from: day, to: day + 86_400, now: day + 10 * 3600 + 60).first == day + 13 * 3600)
        // One session a day at most (in the coach's zone): Monday has one, so Tuesday is the first day offered.
        let capped = try Self.availability("Asia/Riyadh", cap: 1)
        let monday = Self.session("s1", start: day + 6 * 3600)  // 09:00 Riyadh
        let found = Self.slots(capped, busy: [monday], from: day, to: day + 2 * 86_400)
        #expect(found.first == day + 86_400 + 6 * 3600 && found.count == 8)
        // Another client's session of the client does not count toward the coach's cap.
        #expect(Self.slots(capped, busy: [monday], coach: [], from: day, to: day + 86_400).count == 7)
    }

    @Test func exceptionsAndSpansMeetingAtMidnight() throws {
        let day = Self.utc(2027, 1, 18)
        let a = try Self.availability("UTC", weekly: ["mon": [.init(start: "22:00", end: "24:00")], "tue": [.init(start: "00:00", end: "01:00")]],
                                      exceptions: [])
        // A 120-minute session may cross midnight into Tuesday's span.
        #expect(Self.slots(a, length: 120, from: day, to: day + 2 * 86_400, step: 30)
            == [day + 22 * 3600, day + 22 * 3600 + 1800, day + 23 * 3600])
        #expect(FreeSlots.allows(a, start: day + 23 * 3600, minutes: 120, now: 0))
        #expect(!FreeSlots.allows(a, start: day + 23 * 3600 + 60, minutes: 120, now: 0))
        #expect(!FreeSlots.allows(a, start: day + 21 * 3600, minutes: 60, now: 0))
        let off = try Self.availability("UTC", exceptions: [AvailabilityException(date: "2027-01-18", hours: []),
                                                            AvailabilityException(date: "2027-01-23", hours: [.init(start: "10:00", end: "11:00")])])
        #expect(Self.slots(off, from: day, to: day + 86_400).isEmpty)
        #expect(Self.slots(off, from: day + 5 * 86_400, to: day + 6 * 86_400) == [day + 5 * 86_400 + 10 * 3600])  // a Saturday
        #expect(Self.slots(off, from: day + 6 * 86_400, to: day + 7 * 86_400).isEmpty)  // Sunday, a weekly day off
    }

    @Test func aLongRangeIsTruncatedAndTheEdgeOfTimeIsSafe() throws {
        let a = try Self.availability("UTC", weekly: Dictionary(uniqueKeysWithValues: CoachAvailability.weekdayKeys.map { ($0, [AvailabilityHours(start: "00:00", end: "24:00")]) }))
        let day = Self.utc(2027, 1, 18)
        let result = FreeSlots.compute(a, busy: [], coachSessions: [], length: 5, from: day, to: day + 62 * 86_400, step: 5, now: 0)
        #expect(result.slots.count == FreeSlots.maxSlots && result.truncated)
        let last = WireRange.time.upperBound
        let edge = FreeSlots.compute(a, busy: [], coachSessions: [], length: 480, from: last - 2 * 86_400, to: last, step: 1_440, now: 0)
        #expect(edge.slots.count == 2 && edge.slots.allSatisfy { $0.end <= last + 1 })
        #expect(FreeSlots.compute(a, busy: [], coachSessions: [], length: 60, from: 0, to: 86_400, step: 60, now: 0).slots.count == 24)
    }

    @Test func everyFieldIsChecked() throws {
        func refusal(_ command: AvailabilitySetCommand) -> APIError? {
            do { _ = try CoachAvailability(command: command); return nil } catch { return error }
        }
        func hours(_ spans: [(String, String)]) -> AvailabilitySetCommand {
            AvailabilitySetCommand(timeZone: "UTC", weekly: ["mon": spans.map { AvailabilityHours(start: $0.0, end: $0.1) }])
        }
        #expect(refusal(AvailabilitySetCommand(timeZone: nil)) == APIError(.missingField, field: "time_zone"))
        for zone in ["EST", "GMT+3", "Etc/GMT+12", "", "Mars/Base", "../etc/passwd"] {
            #expect(refusal(AvailabilitySetCommand(timeZone: zone)) == APIError(.invalidTimeZone, field: "time_zone"))
        }
        for bad in [[("24:01", "24:00")], [("9:00", "17:00")], [("09:00", "09:00")], [("17:00", "09:00")], [("09:60", "10:00")],
                    [("09:00", "12:00"), ("11:00", "13:00")], [("0a:00", "10:00")], [("09:00\u{0}", "10:00")], [("-1:00", "10:00")]] {
            #expect(refusal(hours(bad)) == APIError(.badRequest, field: "weekly"), "\(bad)")
        }
        #expect(refusal(hours(Array(repeating: ("09:00", "10:00"), count: 9))) == APIError(.outOfRange, field: "weekly"))
        #expect(refusal(hours((0..<8).map { (CoachAvailability.clock($0 * 60), CoachAvailability.clock($0 * 60 + 30)) })) == nil)
        #expect(refusal(hours([("00:00", "24:00")])) == nil && refusal(hours([("09:00", "12:00"), ("12:00", "13:00")])) == nil)
        #expect(refusal(AvailabilitySetCommand(timeZone: "UTC", weekly: ["monday": []])) == APIError(.badRequest, field: "weekly"))
        for date in ["2027-02-29", "2027-13-01", "2027-00-10", "1969-12-31", "27-01-01", "2027/01/01", "2027-01-32"] {
            #expect(refusal(AvailabilitySetCommand(timeZone: "UTC", exceptions: [.init(date: date, hours: [])])) == APIError(.badRequest, field: "exceptions"), "\(date)")
        }
        #expect(refusal(AvailabilitySetCommand(timeZone: "UTC", exceptions: [.init(date: "2028-02-29", hours: [])])) == nil)
        #expect(refusal(AvailabilitySetCommand(timeZone: "UTC", exceptions: [.init(date: "2028-01-01", hours: []), .init(date: "2028-01-01", hours: [])]))
            == APIError(.badRequest, field: "exceptions"))
        let many = (0..<367).map { AvailabilityException(date: CoachAvailability.text(FreeSlots.civil(fromDays: 20_000 + Int64($0))), hours: []) }
        #expect(refusal(AvailabilitySetCommand(timeZone: "UTC", exceptions: many)) == APIError(.outOfRange, field: "exceptions"))
        #expect(refusal(AvailabilitySetCommand(timeZone: "UTC", exceptions: Array(many.prefix(366)))) == nil)
        for (command, field) in [(AvailabilitySetCommand(timeZone: "UTC", bufferBeforeMinutes: 241), "buffer_before_minutes"),
                                 (AvailabilitySetCommand(timeZone: "UTC", bufferAfterMinutes: -1), "buffer_after_minutes"),
                                 (AvailabilitySetCommand(timeZone: "UTC", minimumNoticeMinutes: 43_201), "minimum_notice_minutes"),
                                 (AvailabilitySetCommand(timeZone: "UTC", maxSessionsPerDay: 0), "max_sessions_per_day"),
                                 (AvailabilitySetCommand(timeZone: "UTC", maxSessionsPerDay: 49), "max_sessions_per_day"),
                                 (AvailabilitySetCommand(timeZone: "UTC", maxSessionsPerDay: Int64.min), "max_sessions_per_day")] {
            #expect(refusal(command) == APIError(.outOfRange, field: field))
        }
        // What is saved reads back the same.
        let a = try Self.availability(exceptions: [.init(date: "2027-12-25", hours: [])], before: 10, after: 5, notice: 60, cap: 4)
        #expect(CoachAvailability(view: a.view) == a)
        #expect(a.view.weekly["mon"] == [AvailabilityHours(start: "09:00", end: "17:00")] && a.view.weekly["sun"] == nil)
    }

    @Test func theFlagIsWrittenOnlyWhenSetAndReadBack() throws {
        var session = Self.session("s1", start: 1_800_000_000)
        #expect(!session.view.jsonText.contains("outside_availability"))
        session.outsideAvailability = true
        let text = session.view.jsonText
        #expect(text.contains(#""outside_availability":true"#))
        let decoded = try JSONDecoder().decode(SessionView.self, from: Data(text.utf8))
        #expect(decoded == session.view && Session(view: decoded)?.outsideAvailability == true)
    }

    @Test func aClientsTimeOutsideIsRefusedACoachsIsFlagged() throws {
        let h = CoreHarness()
        // Coach k works 09:00–17:00 UTC on weekdays; CoreHarness.start is Friday 2027-01-15 08:00 UTC.
        let monday = CoreHarness.start + 3 * CoreHarness.day - 8 * CoreHarness.hour  // Monday 00:00
        // Without availability nothing changes.
        let free = try h.commit(.request(at: monday + 2 * CoreHarness.hour))
        #expect(try decode(SessionView.self, free.reply).outsideAvailability == nil)
        h.availability["k"] = try Self.availability("UTC", notice: 120)
        #expect(h.refusal(.request(at: monday + 20 * CoreHarness.hour)) == APIError(.outsideAvailability, field: "start"))
        #expect(h.refusal(.request(at: monday + 16 * CoreHarness.hour + 50 * 60)) == APIError(.outsideAvailability, field: "start"))
        // Inside the hours but within the notice (now + 120 min) is outside too; a past time keeps its own error.
        #expect(h.refusal(.request("b", thread: "t2", at: CoreHarness.start + 90 * 60)) == APIError(.outsideAvailability, field: "start"))
        #expect(h.refusal(.request(at: CoreHarness.start - 60)) == APIError(.startInPast, field: "start"))
        let inside = try h.commit(.request("b", thread: "t2", at: monday + 9 * CoreHarness.hour))
        #expect(try decode(SessionView.self, inside.reply).outsideAvailability == nil)
        // The coach may invite outside: allowed, flagged for both.
        let late = try h.commit(.invite(at: monday + 20 * CoreHarness.hour))
        let flagged = try decode(SessionView.self, late.reply)
        #expect(flagged.outsideAvailability == true && h.core.sessions[flagged.id]?.outsideAvailability == true)
        #expect(late.records.first?.session?.outsideAvailability == true)
        // The client's alternative outside is refused; inside is taken.
        #expect(h.refusal(.act("a", .propose, flagged.id, start: monday + 30 * CoreHarness.hour)) == APIError(.outsideAvailability, field: "start"))
        _ = try h.commit(.act("a", .propose, flagged.id, start: monday + 34 * CoreHarness.hour))
        // The coach's own new time inside clears the flag.
        let moved = try h.commit(.invite(at: monday + 68 * CoreHarness.hour))
        let movedID = try decode(SessionView.self, moved.reply).id
        #expect(h.core.sessions[movedID]?.outsideAvailability == true)
        _ = try h.commit(.act("a", .accept, movedID))
        _ = try h.commit(.act("k", .reschedule, movedID, start: monday + 82 * CoreHarness.hour))
        #expect(h.core.sessions[movedID]?.outsideAvailability == false)
    }
}
