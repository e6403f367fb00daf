import Foundation
import SpotterProtocol

/// A coach's availability (issue 30, seed 002 §5 "the scheduler suggests free times"), modelled on Cal.com's
/// schedules: weekly working hours per weekday in the coach's IANA zone (several spans a day), one-off date
/// exceptions (a date off, or other hours), buffers before and after a session, a minimum notice, and a cap on
/// sessions per day (days in the coach's zone). Validated once, where it enters (`init(view:)`); pure.
public struct CoachAvailability: Sendable, Equatable {
    /// A span of a local day in minutes, [start, end), 0…1440.
    public struct Span: Sendable, Equatable, Comparable {
        public var start: Int
        public var end: Int
        public init(_ start: Int, _ end: Int) {
            self.start = start
            self.end = end
        }
        public static func < (a: Span, b: Span) -> Bool { (a.start, a.end) < (b.start, b.end) }
    }

    /// A local date (proleptic Gregorian) in the coach's zone.
    public struct Day: Sendable, Hashable, Comparable {
        public var year: Int
        public var month: Int
        public var day: Int
        public init(year: Int, month: Int, day: Int) {
            self.year = year
            self.month = month
            self.day = day
        }
        public static func < (a: Day, b: Day) -> Bool { (a.year, a.month, a.day) < (b.year, b.month, b.day) }
    }

    public static let weekdayKeys = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]  // Calendar's weekday − 1
    public static let maxSpansPerDay = 8
    public static let maxExceptions = 366
    public static let maxBufferMinutes = 240
    /// 30 days.
    public static let maxNoticeMinutes = 43_200
    public static let maxSessionsPerDay = 48

    /// A name `TimeZoneRules` allows.
    public var timeZone: String
    /// Index 0 = Sunday … 6 = Saturday; each sorted, not overlapping.
    public var weekly: [[Span]]
    public var exceptions: [Day: [Span]]
    public var bufferBefore: Int
    public var bufferAfter: Int
    public var minimumNotice: Int
    public var maxPerDay: Int?

    public init(timeZone: String, weekly: [[Span]], exceptions: [Day: [Span]] = [:], bufferBefore: Int = 0,
                bufferAfter: Int = 0, minimumNotice: Int = 0, maxPerDay: Int? = nil) {
        self.timeZone = timeZone
        self.weekly = weekly
        self.exceptions = exceptions
        self.bufferBefore = bufferBefore
        self.bufferAfter = bufferAfter
        self.minimumNotice = minimumNotice
        self.maxPerDay = maxPerDay
    }

    /// The availability a coach sent (`availability.set`), every field checked: a known zone, weekday keys
    /// `mon`…`sun`, times `HH:MM` from 00:00 to 24:00 on the minute, each span's start before its end, at most 8
    /// spans a day and none overlapping, at most 366 exceptions on distinct real dates (years 1970–9999), buffers
    /// 0–240 minutes, notice 0–43,200 minutes (30 days), a cap of 1–48 sessions a day. A refusal names the field.
    public init(command: AvailabilitySetCommand) throws(APIError) {
        guard let zone = command.timeZone else { throw APIError(.missingField, field: "time_zone") }
        let timeZone = try TimeZoneRules.check(zone, field: "time_zone")
        var weekly = Array(repeating: [Span](), count: 7)
        for (key, hours) in command.weekly ?? [:] {
            guard let index = Self.weekdayKeys.firstIndex(of: key) else { throw APIError(.badRequest, field: "weekly") }
            weekly[index] = try Self.spans(hours, field: "weekly")
        }
        let listed = command.exceptions ?? []
        guard listed.count <= Self.maxExceptions else { throw APIError(.outOfRange, field: "exceptions") }
        var exceptions: [Day: [Span]] = [:]
        for exception in listed {
            guard let day = Self.day(exception.date), exceptions[day] == nil else { throw APIError(.badRequest, field: "exceptions") }
            exceptions[day] = try Self.spans(exception.hours, field: "exceptions")
        }
        func minutes(_ value: Int64?, _ limit: Int, _ field: String) throws(APIError) -> Int {
            guard let value else { return 0 }
            guard (0...Int64(limit)).contains(value) else { throw APIError(.outOfRange, field: field) }
            return Int(value)
        }
        let cap: Int?
        if let raw = command.maxSessionsPerDay {
            guard (1...Int64(Self.maxSessionsPerDay)).contains(raw) else { throw APIError(.outOfRange, field: "max_sessions_per_day") }
            cap = Int(raw)
        } else {
            cap = nil
        }
        self.init(timeZone: timeZone, weekly: weekly, exceptions: exceptions,
                  bufferBefore: try minutes(command.bufferBeforeMinutes, Self.maxBufferMinutes, "buffer_before_minutes"),
                  bufferAfter: try minutes(command.bufferAfterMinutes, Self.maxBufferMinutes, "buffer_after_minutes"),
                  minimumNotice: try minutes(command.minimumNoticeMinutes, Self.maxNoticeMinutes, "minimum_notice_minutes"),
                  maxPerDay: cap)
    }

    /// The wire's form (saved as JSON in the accounts store, and what `availability.get` answers).
    public var view: AvailabilityView {
        var weeklyView: [String: [AvailabilityHours]] = [:]
        for (index, spans) in weekly.enumerated() where !spans.isEmpty {
            weeklyView[Self.weekdayKeys[index]] = spans.map(Self.hours)
        }
        let exceptionsView = exceptions.keys.sorted().map { day in
            AvailabilityException(date: Self.text(day), hours: exceptions[day, default: []].map(Self.hours))
        }
        return AvailabilityView(timeZone: timeZone, weekly: weeklyView, exceptions: exceptionsView,
                                bufferBeforeMinutes: bufferBefore, bufferAfterMinutes: bufferAfter,
                                minimumNoticeMinutes: minimumNotice, maxSessionsPerDay: maxPerDay)
    }

    /// Read back from the store: the same checks as a command (a row that no longer passes reads as none).
    public init?(view: AvailabilityView) {
        let command = AvailabilitySetCommand(
            timeZone: view.timeZone, weekly: view.weekly, exceptions: view.exceptions,
            bufferBeforeMinutes: Int64(view.bufferBeforeMinutes), bufferAfterMinutes: Int64(view.bufferAfterMinutes),
            minimumNoticeMinutes: Int64(view.minimumNoticeMinutes), maxSessionsPerDay: view.maxSessionsPerDay.map(Int64.init))
        guard let parsed = try? CoachAvailability(command: command) else { return nil }
        self = parsed
    }

    /// The spans of `day`: its exception's if it has one, else its weekday's.
    public func spans(on day: Day, weekday: Int) -> [Span] {
        exceptions[day] ?? weekly[weekday]
    }

    // MARK: Parsing

    static func spans(_ hours: [AvailabilityHours], field: String) throws(APIError) -> [Span] {
        guard hours.count <= maxSpansPerDay else { throw APIError(.outOfRange, field: field) }
        var spans: [Span] = []
        for span in hours {
            guard let start = minuteOfDay(span.start), let end = minuteOfDay(span.end), start < end else {
                throw APIError(.badRequest, field: field)
            }
            spans.append(Span(start, end))
        }
        spans.sort()
        for (earlier, later) in zip(spans, spans.dropFirst()) where later.start < earlier.end {
            throw APIError(.badRequest, field: field)
        }
        return spans
    }

    /// `HH:MM`, 00:00 through 24:00, exactly five ASCII characters.
    static func minuteOfDay(_ text: String) -> Int? {
        let bytes = Array(text.utf8)
        guard bytes.count == 5, bytes[2] == UInt8(ascii: ":"),
              let hour = twoDigits(bytes[0], bytes[1]), let minute = twoDigits(bytes[3], bytes[4]),
              hour <= 24, minute < 60 else { return nil }
        let total = hour * 60 + minute
        return total <= 1_440 ? total : nil
    }

    /// `YYYY-MM-DD`, a real date from 1970 through 9999.
    static func day(_ text: String) -> Day? {
        let bytes = Array(text.utf8)
        guard bytes.count == 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
              let high = twoDigits(bytes[0], bytes[1]), let low = twoDigits(bytes[2], bytes[3]),
              let month = twoDigits(bytes[5], bytes[6]), let day = twoDigits(bytes[8], bytes[9]) else { return nil }
        let year = high * 100 + low
        guard year >= 1970, (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year) else { return nil }
        return Day(year: year, month: month, day: day)
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    private static func twoDigits(_ a: UInt8, _ b: UInt8) -> Int? {
        let zero = UInt8(ascii: "0"), nine = UInt8(ascii: "9")
        guard (zero...nine).contains(a), (zero...nine).contains(b) else { return nil }
        return Int(a - zero) * 10 + Int(b - zero)
    }

    static func hours(_ span: Span) -> AvailabilityHours {
        AvailabilityHours(start: clock(span.start), end: clock(span.end))
    }

    static func clock(_ minutes: Int) -> String {
        pad(minutes / 60) + ":" + pad(minutes % 60)
    }

    static func text(_ day: Day) -> String {
        String(day.year) + "-" + pad(day.month) + "-" + pad(day.day)
    }

    static func pad(_ value: Int) -> String { value < 10 ? "0" + String(value) : String(value) }
}
