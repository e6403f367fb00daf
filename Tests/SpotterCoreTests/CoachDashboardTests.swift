import Foundation
import Testing
import SpotterCore
import SpotterProtocol

/// The coach's dashboard without sockets: each card from the record and the shell's counts, and the analytics
/// over a range, checked against numbers worked out by hand.
@Suite("Coach dashboard")
struct CoachDashboardTests {
    static let day: Int64 = 86_400
    /// 2026-11-23 00:00 UTC, a Monday.
    static let monday: Int64 = 1_795_392_000
    static let utc = TimeZone(identifier: "UTC")!

    static func client(_ id: String, name: String, meals: [Int64] = [], zone: TimeZone = utc) -> DashboardClient {
        DashboardClient(clientID: id, threadID: "t-" + id, name: name, unread: 2, zone: zone, mealTimes: meals,
                        nextSession: nil, pendingResolutions: 0)
    }

    static func challenge(_ book: inout CoachingBook, client: String, start: String, days: Int, today: Int64) throws -> String {
        var command = ChallengeCreateCommand()
        command.name = "Steps"
        command.startDate = start
        command.tasks = (1...days).map { _ in
            var task = ChallengeTaskView(day: 0, name: "Walk", description: nil, focus: "training", intensity: "light", doneAt: nil)
            task.day = nil
            return task
        }
        let body = try book.createChallenge(.init(id: "ch-" + client, clientID: client, coachID: "k", command: command, today: today, now: 0))
        book.apply(body)
        return body.challenge!.id
    }

    static func checkIn(_ book: inout CoachingBook, _ id: String, client: String, kg: Double, at: Int64) throws {
        var command = CheckInSubmitCommand()
        command.weight = kg
        book.apply(try book.submitCheckIn(id: id, clientID: client, command: command, photoExists: { _ in true }, now: at))
    }

    @Test func cardsShowTheRecordAndTheShellsCounts() throws {
        var book = CoachingBook()
        let today = Self.monday / Self.day
        let id = try Self.challenge(&book, client: "a", start: "2026-11-23", days: 4, today: today)
        book.apply(try #require(try book.checkTask(challengeID: id, clientID: "a", day: 1, done: true, today: today,
                                                   dayOf: { $0 / Self.day }, now: Self.monday + 10)))
        try Self.checkIn(&book, "w1", client: "a", kg: 82.4, at: Self.monday - 7 * Self.day)
        try Self.checkIn(&book, "w2", client: "a", kg: 81.1, at: Self.monday - 3600)
        var amal = Self.client("a", name: "Amal")
        amal.nextSession = NextSessionView(id: "s1", start: Self.monday + Self.day, status: "scheduled")
        amal.pendingResolutions = 1
        let card = CoachDashboard.card(amal, book: book, now: Self.monday + 60)
        #expect(card.activeChallenges == [ChallengeSummary(id: id, name: "Steps", done: 1, days: 4, percent: 25, status: "active")])
        #expect(card.latestWeightKg == 81.1 && card.weightChangeKg == -1.3 && card.lastCheckInAt == Self.monday - 3600)
        #expect(card.unread == 2 && card.nextSession?.id == "s1" && card.pendingResolutions == 1 && card.goal == nil)
        // A client with nothing yet: an empty card, no trend.
        let empty = CoachDashboard.card(Self.client("b", name: "Badr"), book: book, now: Self.monday)
        #expect(empty.activeChallenges.isEmpty && empty.latestWeightKg == nil && empty.weightChangeKg == nil)
        // Cards come by name.
        let result = CoachDashboard.make(clients: [Self.client("b", name: "Zaid"), amal], book: book, attendance: (0, 0),
                                         from: Self.monday - 7 * Self.day, to: Self.monday, now: Self.monday)
        #expect(result.clients.map(\.name) == ["Amal", "Zaid"])
    }

    @Test func analyticsOverARange() throws {
        var book = CoachingBook()
        // The range: the 7 days before Monday (16th–22nd); now is Monday noon.
        let from = Self.monday - 7 * Self.day, to = Self.monday, now = Self.monday + Self.day / 2
        let today = now / Self.day
        // Client a: a 4-day challenge from the 20th (days 20, 21, 22 in the range; the 23rd is after it), 2 of them done.
        let id = try Self.challenge(&book, client: "a", start: "2026-11-20", days: 4, today: today - 3)
        for day in [1, 3] {
            book.apply(try #require(try book.checkTask(challengeID: id, clientID: "a", day: day, done: true, today: today,
                                                       dayOf: { $0 / Self.day }, now: now)))
        }
        // Check-ins: a has 2 in the range and 1 before it, b has 1.
        try Self.checkIn(&book, "a0", client: "a", kg: 80, at: from - 1)
        try Self.checkIn(&book, "a1", client: "a", kg: 80, at: from)
        try Self.checkIn(&book, "a2", client: "a", kg: 80, at: to - 1)
        try Self.checkIn(&book, "b1", client: "b", kg: 60, at: from + Self.day)
        // Meals: a logs on 3 days (two meals on one of them), b on 1 day; one meal of b's is after the range.
        let a = Self.client("a", name: "Amal", meals: [from + 100, from + 200, from + Self.day, to - 10])
        let b = Self.client("b", name: "Badr", meals: [from + 3 * Self.day, to + 50])
        let analytics = CoachDashboard.analytics(clients: [a, b], book: book, attendance: (3, 1), from: from, to: to, now: now)
        #expect(analytics.clients == 2)
        #expect(analytics.challengeCompletionPercent == 66)  // 2 of the 3 due days
        #expect(analytics.checkInsPerClientWeek == 1.5)  // 3 check-ins, 2 clients, 1 week
        #expect(analytics.mealLogDaysPercent == 28)  // 4 meal days of 14 client-days
        #expect(analytics.sessionAttendancePercent == 75)  // 3 completed, 1 missed
        // With nothing to measure the figures are absent, not zero.
        let none = CoachDashboard.analytics(clients: [], book: CoachingBook(), attendance: (0, 0), from: from, to: to, now: now)
        #expect(none.challengeCompletionPercent == nil && none.checkInsPerClientWeek == nil && none.mealLogDaysPercent == nil
                && none.sessionAttendancePercent == nil)
    }

    @Test func mealDaysAreTheClientsCalendarDays() throws {
        // 22:30 and 23:30 UTC on the 22nd are the 23rd in Riyadh: one day there, and two meals that straddle UTC
        // midnight are one day in UTC but two in Riyadh.
        let riyadh = TimeZone(identifier: "Asia/Riyadh")!
        let meals = [Self.monday - 5_400, Self.monday - 1_800, Self.monday + 600]
        let from = Self.monday - 7 * Self.day, to = Self.monday + Self.day
        let inRiyadh = CoachDashboard.analytics(clients: [Self.client("a", name: "A", meals: meals, zone: riyadh)], book: CoachingBook(),
                                                attendance: (0, 0), from: from, to: to, now: to)
        let inUTC = CoachDashboard.analytics(clients: [Self.client("a", name: "A", meals: meals)], book: CoachingBook(),
                                             attendance: (0, 0), from: from, to: to, now: to)
        // The range's 8 × 24 hours touch 9 calendar days in Riyadh, 8 in UTC.
        #expect(inRiyadh.mealLogDaysPercent == 1 * 100 / 9)
        #expect(inUTC.mealLogDaysPercent == 2 * 100 / 8)
    }

    @Test func theNextSessionIsTheSoonestStillOn() throws {
        var sessions = SessionBook()
        let now = Self.monday
        func invite(_ id: String, thread: String, client: String, in days: Int64) {
            _ = sessions.create(id: id, threadID: thread, coachID: "k", clientID: client, by: .coach, start: now + days * Self.day,
                                durationMinutes: 30, purpose: "Check-in", meetURL: "u", now: now)
        }
        invite("later", thread: "t1", client: "a", in: 3)
        invite("sooner", thread: "t1", client: "a", in: 1)
        _ = sessions.act(.accept, sessionID: "sooner", userID: "a", now: now)
        invite("gone", thread: "t2", client: "b", in: 2)
        _ = sessions.act(.decline, sessionID: "gone", userID: "b", now: now)
        let figures = CoachDashboard.sessionFigures(sessions, coachID: "k", now: now, from: now - 7 * Self.day, to: now)
        #expect(figures.next["t1"] == NextSessionView(id: "sooner", start: now + Self.day, status: "scheduled"))
        #expect(figures.next["t2"] == nil && figures.pending.isEmpty && figures.completed == 0 && figures.missed == 0)
        // Another coach's figures hold none of these.
        #expect(CoachDashboard.sessionFigures(sessions, coachID: "other", now: now, from: 0, to: now).next.isEmpty)
    }
}
