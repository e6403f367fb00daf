// The coach's dashboard, with no sockets and no disk: what the server's loop does for `dashboard` (the coach's
// upcoming sessions, every client's card, the analytics over the range, the JSON), timed for a coach with many
// clients, each with a year of coaching record. Issue 13's target: ≤ 5 ms for a coach with 200 clients; issue 30
// adds the engagement and the popular challenge types to the analytics, within the same 5 ms.
import ArgumentParser
import Foundation
import Histogram
import SpotterCore
import SpotterProtocol

@main
struct DashboardBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "spotter-dashboard-bench",
        abstract: "Times the coach's dashboard over a year of coaching record per client.")

    @Option(help: "Clients of the coach.") var clients = 200
    @Option(help: "Days of history per client (3 meal logs a day, a check-in a week, a 7-day challenge every 2 weeks).")
    var days = 365
    @Option(help: "Range of the analytics, in days.") var rangeDays = 30
    @Option(help: "Dashboards to time.") var calls = 2000
    @Flag(help: "Leave out the engagement and the challenge types (issue 30), to time the rest alone.")
    var skipEngagement = false

    func run() throws {
        let day: Int64 = 86_400
        let now: Int64 = 1_800_000_000
        let first = now - Int64(days) * day
        let zones = ["Asia/Riyadh", "Europe/London", "America/New_York", "UTC"].map { TimeZone(identifier: $0)! }
        var book = CoachingBook()
        var sessions = SessionBook()
        var dashboardClients: [DashboardClient] = []
        let setupStart = DispatchTime.now().uptimeNanoseconds
        for c in 0..<clients {
            let client = "client\(c)", thread = "thread\(c)"
            let zone = zones[c % zones.count]
            // A 7-day challenge every 14 days, with 5 of its days checked off.
            for (n, start) in stride(from: first, to: now, by: Int(14 * day)).enumerated() {
                var command = ChallengeCreateCommand()
                command.name = "Week of \(start)"
                command.startDate = LocalDay.format(LocalDay.of(start, in: zone))
                command.tasks = (1...7).map { _ in
                    var task = ChallengeTaskView(day: 0, name: "Walk 8,000 steps", description: nil,
                                                 focus: CoachDashboard.focusOrder[(n + c) % 3],
                                                 intensity: "moderate", doneAt: nil)
                    task.day = nil
                    return task
                }
                let startDay = LocalDay.of(start, in: zone)
                let made = try book.createChallenge(.init(id: "\(client)-\(start)", clientID: client, coachID: "coach",
                                                          command: command, today: startDay, now: start))
                book.apply(made)
                for taskDay in 1...5 {
                    let at = start + Int64(taskDay - 1) * day + 3600
                    if let body = try book.checkTask(challengeID: made.challenge!.id, clientID: client, day: taskDay, done: true,
                                                     today: LocalDay.of(at, in: zone), dayOf: { LocalDay.of($0, in: zone) }, now: at) {
                        book.apply(body)
                    }
                }
            }
            for week in stride(from: first, to: now, by: Int(7 * day)) {
                var command = CheckInSubmitCommand()
                command.weight = 80 - Double(week - first) / Double(60 * day)
                book.apply(try book.submitCheckIn(id: "\(client)-ci-\(week)", clientID: client, command: command,
                                                  photoExists: { _ in true }, now: week))
            }
            // A daily check-in every morning (issue 30 item 3): the card shows the newest.
            for midnight in stride(from: first, to: now, by: Int(day)) {
                var daily = DailyCheckInSubmitCommand()
                (daily.mood, daily.soreness, daily.stress) = (3, 2, 2)
                let at = midnight + 7 * 3600
                book.apply(try book.submitDailyCheckIn(id: "\(client)-d-\(midnight)", clientID: client, command: daily,
                                                       today: LocalDay.of(at, in: zone), now: at))
            }
            var meals: [Int64] = []
            for midnight in stride(from: first, to: now, by: Int(day)) {
                meals += [midnight + 8 * 3600, midnight + 13 * 3600, midnight + 20 * 3600]
            }
            // Five sessions: two done, one missed, two ahead.
            for (n, offset) in [-20, -10, -5, 3, 10].enumerated() {
                let id = "\(client)-s\(n)", start = now + Int64(offset) * day + Int64(c) * 1800
                _ = sessions.create(id: id, threadID: thread, coachID: "coach", clientID: client, by: .coach,
                                    start: start, durationMinutes: 30, purpose: "Check-in call", meetURL: "u", now: start - day)
                _ = sessions.act(.accept, sessionID: id, userID: client, now: start - day)
            }
            dashboardClients.append(DashboardClient(clientID: client, threadID: thread, name: "Client \(c)", unread: Int64(c % 7),
                                                    zone: zone, mealTimes: meals, nextSession: nil, pendingResolutions: 0))
        }
        let setupSeconds = Double(DispatchTime.now().uptimeNanoseconds - setupStart) / 1e9

        // As `RecordDesk.dashboard` does it: the coach's upcoming sessions, the cards, the analytics, the JSON.
        let to = now + 1, from = to - Int64(rangeDays) * day
        var histogram = Histogram<UInt64>(highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: .three)
        var bytes = 0
        var last: DashboardResult?
        for _ in 0..<calls {
            let began = DispatchTime.now().uptimeNanoseconds
            let figures = CoachDashboard.sessionFigures(sessions, coachID: "coach", now: now, from: from, to: to)
            let withSessions = dashboardClients.map { client -> DashboardClient in
                var client = client
                client.nextSession = figures.next[client.threadID]
                client.pendingResolutions = figures.pending[client.threadID] ?? 0
                return client
            }
            var result = CoachDashboard.make(clients: withSessions, book: book, attendance: (figures.completed, figures.missed),
                                             from: from, to: to, now: now)
            if !skipEngagement { result.analytics = CoachDashboard.withEngagement(
                result.analytics, clients: withSessions, book: book,
                attended: CoachDashboard.attendedStarts(sessions, coachID: "coach", from: from, to: to), now: now) }
            bytes += result.jsonText.utf8.count
            histogram.record(DispatchTime.now().uptimeNanoseconds - began)
            last = result
        }
        guard let last, last.clients.count == clients, last.clients.allSatisfy({ $0.nextSession != nil && $0.latestWeightKg != nil }),
              last.analytics.mealLogDaysPercent ?? 0 > 90,
              skipEngagement || (last.analytics.engagementPercent ?? 0 > 90 && last.analytics.popularChallengeTypes.count == 3) else {
            throw ValidationError("the dashboard is not what was set up: \(String(describing: last?.analytics))")
        }
        func us(_ q: Double) -> String { String(format: "%.0f", Double(histogram.valueAtPercentile(q)) / 1000) }
        print((skipEngagement ? "without" : "with") + " engagement and challenge types; coach with \(clients) clients × \(days) days of record (set up in \(String(format: "%.1f", setupSeconds)) s); range \(rangeDays) days; \(calls) calls")
        print("analytics: \(last.analytics)")
        print("| operation | p50 µs | p99 µs | p99.9 µs | max µs |")
        print("|---|---|---|---|---|")
        print("| the `dashboard` reply, JSON included (\(bytes / calls) bytes) | \(us(50)) | \(us(99)) | \(us(99.9)) | \(String(format: "%.0f", Double(histogram.max) / 1000)) |")
    }
}
