import Foundation
import SpotterProtocol

/// Free times for a session between a coach and a client: the coach's availability less what either of them
/// has booked (with the coach's buffers), no sooner than the minimum notice, on days under the coach's cap.
/// Pure: the sessions, the time and the zones come in; nothing is read.
///
/// Days and hours are the coach's local ones: each span's edges are placed on each date by that date's offset,
/// so 09:00–17:00 in America/New_York stays 09:00–17:00 local across the March and November changes (14:00Z to
/// 22:00Z in summer, 15:00Z to 23:00Z in winter). A local time that does not exist (in the spring gap, 02:30 on
/// the March change day) is placed where it would be had the clock not jumped (03:30 after the jump); a local
/// time that happens twice (in the autumn's repeated hour) is its first occurrence. A span ending at 24:00 meets
/// the next day's span starting at 00:00, so a session may cross midnight.
public enum FreeSlots {
    /// A session's length for `availability.slots`: 5–480 minutes.
    public static let lengths: ClosedRange<Int64> = 5...480
    /// The distance between two starts offered: 5–1,440 minutes (default 15).
    public static let steps: ClosedRange<Int64> = 5...1_440
    public static let defaultStep: Int64 = 15
    /// The longest range asked at once: 62 days.
    public static let maxRangeSeconds: Int64 = 62 * 86_400
    /// The most slots one reply carries.
    public static let maxSlots = 500

    /// Statuses whose sessions keep their time (and, for the coach, count toward the day's cap): every one but
    /// the cancelled, the declined and the expired.
    public static func holdsTime(_ status: SessionStatus) -> Bool {
        ![.cancelled, .declined, .expired].contains(status)
    }

    public struct Slot: Sendable, Equatable {
        public var start: Int64
        public var end: Int64
    }

    /// The free starts in [from, to), `step` minutes apart from each available span's start, of sessions lasting
    /// `length` minutes; at most `limit`, the second value true when there were more. `busy` are the coach's and
    /// the client's sessions (those that `holdsTime` count; a pending alternative or reschedule holds its
    /// proposed time too); `coachSessions` count toward the coach's day cap. Numbers already range-checked
    /// (`check`).
    public static func compute(_ availability: CoachAvailability, busy: [Session], coachSessions: [Session],
                               length: Int64, from: Int64, to: Int64, step: Int64, now: Int64,
                               limit: Int = maxSlots) -> (slots: [Slot], truncated: Bool) {
        let zone = TimeZoneRules.zone(availability.timeZone)
        let seconds = length * 60, stepSeconds = step * 60
        let before = Int64(availability.bufferBefore) * 60, after = Int64(availability.bufferAfter) * 60
        let earliest = max(from, now + Int64(availability.minimumNotice) * 60)
        guard earliest < to else { return ([], false) }
        let blocked = merged(busyTimes(busy))
        var perDay: [CoachAvailability.Day: Int] = [:]
        if availability.maxPerDay != nil {
            for session in coachSessions where holdsTime(session.status) {
                perDay[localDay(session.start, zone), default: 0] += 1
            }
        }
        var slots: [Slot] = []
        var next = 0
        for window in windows(availability, zone: zone, from: earliest - 86_400, to: to + 86_400) {
            guard window.end - seconds >= earliest, window.start < to else { continue }
            var start = window.start
            if start < earliest { start += (earliest - start + stepSeconds - 1) / stepSeconds * stepSeconds }
            while start < to, start + seconds <= window.end {
                // Busy spans end before this slot's buffer begins: never again in the way (starts only grow).
                while next < blocked.count, blocked[next].end <= start - before { next += 1 }
                let free = next == blocked.count || blocked[next].start >= start + seconds + after
                if free, let cap = availability.maxPerDay, perDay[localDay(start, zone), default: 0] >= cap {
                    // The day is full.
                } else if free {
                    if slots.count == limit { return (slots, true) }
                    slots.append(Slot(start: start, end: start + seconds))
                }
                start += stepSeconds
            }
        }
        return (slots, false)
    }

    /// Whether a session of `minutes` at `start` lies inside the coach's hours (one available span, or spans
    /// meeting across midnight) and after the minimum notice. Buffers and the day's cap are not part of it (an
    /// overlap is `session_conflict`'s business).
    public static func allows(_ availability: CoachAvailability, start: Int64, minutes: Int, now: Int64) -> Bool {
        guard start >= now + Int64(availability.minimumNotice) * 60 else { return false }
        let end = start + Int64(minutes) * 60
        let zone = TimeZoneRules.zone(availability.timeZone)
        return windows(availability, zone: zone, from: start - 2 * 86_400, to: end + 2 * 86_400)
            .contains { $0.start <= start && end <= $0.end }
    }

    /// The coach's available spans as instants, for every local date from `from`'s to `to`'s, sorted, those that
    /// overlap or meet merged.
    static func windows(_ availability: CoachAvailability, zone: TimeZone, from: Int64, to: Int64) -> [Slot] {
        var raw: [Slot] = []
        var day = localDay(from, zone)
        let last = localDay(to, zone)
        while day <= last {
            let weekday = weekday(of: day)
            for span in availability.spans(on: day, weekday: weekday) {
                raw.append(Slot(start: instant(day, minute: span.start, zone), end: instant(day, minute: span.end, zone)))
            }
            day = following(day)
        }
        raw.sort { $0.start < $1.start }
        return merged(raw)
    }

    static func busyTimes(_ sessions: [Session]) -> [Slot] {
        var times: [Slot] = []
        times.reserveCapacity(sessions.count)
        for session in sessions where holdsTime(session.status) {
            times.append(Slot(start: session.start, end: session.end))
            if let proposed = session.proposedStart {
                times.append(Slot(start: proposed, end: session.end(startingAt: proposed)))
            }
        }
        times.sort { $0.start < $1.start }
        return times
    }

    static func merged(_ sorted: [Slot]) -> [Slot] {
        var out: [Slot] = []
        out.reserveCapacity(sorted.count)
        for slot in sorted where slot.end > slot.start {
            if let last = out.last, slot.start <= last.end {
                out[out.count - 1].end = max(last.end, slot.end)
            } else {
                out.append(slot)
            }
        }
        return out
    }

    // MARK: Civil time (pure arithmetic; the zone only gives offsets)

    /// The instant of `minute` (0…1440) on local `day` in `zone`; see the type's note for gaps and repeats.
    static func instant(_ day: CoachAvailability.Day, minute: Int, _ zone: TimeZone) -> Int64 {
        let local = daysFromCivil(day) * 86_400 + Int64(minute) * 60
        let offsetBefore = offset(zone, local - 86_400), offsetAfter = offset(zone, local + 86_400)
        let early = local - offsetBefore, late = local - offsetAfter
        let earlyHolds = offset(zone, early) == offsetBefore, lateHolds = offset(zone, late) == offsetAfter
        switch (earlyHolds, lateHolds) {
        case (true, true): return min(early, late)  // repeated: the first occurrence
        case (true, false): return early
        case (false, true): return late
        case (false, false): return early  // skipped: as if the clock had not jumped
        }
    }

    static func offset(_ zone: TimeZone, _ instant: Int64) -> Int64 {
        Int64(zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(instant))))
    }

    /// The local date of `instant` in `zone`.
    static func localDay(_ instant: Int64, _ zone: TimeZone) -> CoachAvailability.Day {
        let local = instant + offset(zone, instant)
        return civil(fromDays: floorDivide(local, 86_400))
    }

    /// `instant` as a local time in `zone`: `2026-03-09T09:00-04:00` (`Z` for UTC's offset 0).
    public static func localText(_ instant: Int64, _ zone: TimeZone) -> String {
        let offset = offset(zone, instant)
        let local = instant + offset
        let day = civil(fromDays: floorDivide(local, 86_400))
        let minute = Int((local - floorDivide(local, 86_400) * 86_400) / 60)
        var text = CoachAvailability.text(day) + "T" + CoachAvailability.clock(minute)
        if offset == 0 { return text + "Z" }
        let magnitude = Int(abs(offset) / 60)
        text += (offset < 0 ? "-" : "+") + CoachAvailability.pad(magnitude / 60) + ":" + CoachAvailability.pad(magnitude % 60)
        return text
    }

    static func following(_ day: CoachAvailability.Day) -> CoachAvailability.Day {
        civil(fromDays: daysFromCivil(day) + 1)
    }

    /// 0 = Sunday … 6 = Saturday (1970-01-01 was a Thursday).
    static func weekday(of day: CoachAvailability.Day) -> Int {
        Int(((daysFromCivil(day) % 7) + 11) % 7)
    }

    private static func floorDivide(_ a: Int64, _ b: Int64) -> Int64 {
        a >= 0 ? a / b : -((-a + b - 1) / b)
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
    static func daysFromCivil(_ day: CoachAvailability.Day) -> Int64 {
        let y = Int64(day.month <= 2 ? day.year - 1 : day.year)
        let era = floorDivide(y, 400)
        let yoe = y - era * 400
        let m = Int64(day.month), d = Int64(day.day)
        let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    static func civil(fromDays days: Int64) -> CoachAvailability.Day {
        let z = days + 719_468
        let era = floorDivide(z, 146_097)
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return CoachAvailability.Day(year: Int(yoe + era * 400 + (m <= 2 ? 1 : 0)), month: Int(m), day: Int(d))
    }
}
