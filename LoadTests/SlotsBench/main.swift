// Free slots (issue 30 item 1), with no sockets and no disk: what the loop does for `availability.slots` once the
// coach's availability is read — the coach's and the client's sessions over the range, `FreeSlots.compute`, each
// slot's local time in the asker's zone. Target: ≤ 2 ms for 14 days and a coach with 200 sessions.
import ArgumentParser
import Foundation
import Histogram
import SpotterCore
import SpotterProtocol

@main
struct SlotsBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "spotter-slots-bench",
        abstract: "Times free slots for a coach with many sessions.")

    @Option(help: "The coach's sessions in the range (30 or 60 minutes, spread over the working hours).") var sessions = 200
    @Option(help: "Days asked for.") var days = 14
    @Option(help: "Length of the session asked for, minutes.") var length = 30
    @Option(help: "Minutes between starts offered.") var step = 15
    @Option(help: "Calls to time.") var calls = 5000

    func run() throws {
        let day: Int64 = 86_400
        let now: Int64 = 1_773_000_000  // 2026-03-08, the New York spring change inside the range
        let weekdays = Dictionary(uniqueKeysWithValues: ["mon", "tue", "wed", "thu", "fri", "sat"].map {
            ($0, [AvailabilityHours(start: "08:00", end: "12:00"), AvailabilityHours(start: "13:00", end: "20:00")])
        })
        let availability = try CoachAvailability(command: AvailabilitySetCommand(
            timeZone: "America/New_York", weekly: weekdays,
            exceptions: [AvailabilityException(date: "2026-03-17", hours: [AvailabilityHours(start: "10:00", end: "14:00")])],
            bufferBeforeMinutes: 10, bufferAfterMinutes: 10, minimumNoticeMinutes: 120, maxSessionsPerDay: 20))
        var book = SessionBook()
        // The coach's sessions: `sessions` of them over the range, with 40 clients; the asker is client0.
        var made = 0, n = 0
        while made < sessions {
            let start = now + day / 2 + Int64(n) * (Int64(days) * day / Int64(sessions)) + Int64(n % 3) * 900
            n += 1
            let client = "client\(n % 40)", id = "s\(n)"
            if case .success = book.create(id: id, threadID: "t-\(client)", coachID: "coach", clientID: client, by: .coach,
                                           start: start, durationMinutes: n % 2 == 0 ? 30 : 60, purpose: "Call", meetURL: "u",
                                           now: now) {
                _ = book.act(.accept, sessionID: id, userID: client, now: now)
                made += 1
            }
        }
        // The client has 20 sessions with another coach.
        for k in 0..<20 {
            let id = "o\(k)", start = now + Int64(k) * (Int64(days) * day / 20) + 5 * 3600
            if case .success = book.create(id: id, threadID: "t-other", coachID: "other", clientID: "client0", by: .coach,
                                           start: start, durationMinutes: 45, purpose: "Other", meetURL: "u", now: now) {
                _ = book.act(.accept, sessionID: id, userID: "client0", now: now)
            }
        }
        let from = now, to = now + Int64(days) * day
        let zone = TimeZoneRules.zone("Asia/Riyadh")
        var histogram = Histogram<UInt64>(highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: .three)
        var pureHistogram = Histogram<UInt64>(highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: .three)
        // CPU time of this thread for the pure call: on a shared machine the wall clock's tail is mostly waiting
        // for a core (preemption), which the CPU time leaves out.
        var cpuHistogram = Histogram<UInt64>(highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: .three)
        func threadCPU() -> UInt64 {
            var spec = timespec()
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
            return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
        }
        var count = 0, coachCount = 0
        for _ in 0..<calls {
            // As `AppSocket.freeSlots` does it, from the session book to the reply's slots.
            let began = DispatchTime.now().uptimeNanoseconds
            let coachSessions = book.calendar(of: "coach", from: from - day, to: to + day)
            let clientSessions = book.calendar(of: "client0", from: from - day, to: to + day).filter { $0.coachID != "coach" }
            let pureBegan = DispatchTime.now().uptimeNanoseconds, cpuBegan = threadCPU()
            let found = FreeSlots.compute(availability, busy: coachSessions + clientSessions, coachSessions: coachSessions,
                                          length: Int64(length), from: from, to: to, step: Int64(step), now: now)
            cpuHistogram.record(threadCPU() - cpuBegan)
            pureHistogram.record(DispatchTime.now().uptimeNanoseconds - pureBegan)
            let views = found.slots.map { FreeSlotView(start: $0.start, end: $0.end, local: FreeSlots.localText($0.start, zone)) }
            histogram.record(DispatchTime.now().uptimeNanoseconds - began)
            count = views.count
            coachCount = coachSessions.count
        }
        guard count > 0, coachCount >= sessions else {
            throw ValidationError("not what was set up: \(count) slots, \(coachCount) sessions")
        }
        func us(_ h: Histogram<UInt64>, _ q: Double) -> String { String(format: "%.0f", Double(h.valueAtPercentile(q)) / 1000) }
        print("coach with \(coachCount) sessions in \(days) days (client: 20 with another coach); \(length)-minute sessions every \(step) minutes; \(count) slots; \(calls) calls")
        print("| operation | p50 µs | p99 µs | p99.9 µs | max µs |")
        print("|---|---|---|---|---|")
        print("| `FreeSlots.compute` (pure) | \(us(pureHistogram, 50)) | \(us(pureHistogram, 99)) | \(us(pureHistogram, 99.9)) | \(String(format: "%.0f", Double(pureHistogram.max) / 1000)) |")
        print("| `FreeSlots.compute`, this thread's CPU time | \(us(cpuHistogram, 50)) | \(us(cpuHistogram, 99)) | \(us(cpuHistogram, 99.9)) | \(String(format: "%.0f", Double(cpuHistogram.max) / 1000)) |")
        print("| calendars + compute + local times (the handler's work) | \(us(histogram, 50)) | \(us(histogram, 99)) | \(us(histogram, 99.9)) | \(String(format: "%.0f", Double(histogram.max) / 1000)) |")
    }
}
