import Foundation
import Testing
import SpotterCore
import SpotterProtocol

/// The dashboard's engagement and popular challenge types (seed 002 coach §8), against numbers worked out by hand.
@Suite("Dashboard analytics: engagement and challenge types")
struct DashboardAnalyticsTests {
    static let day: Int64 = 86_400
    /// 2026-11-23 00:00 UTC, a Monday.
    static let monday: Int64 = 1_795_392_000
    static let utc = TimeZone(identifier: "UTC")!

    static func client(_ id: String, meals: [Int64] = [], zone: TimeZone = utc) -> DashboardClient {
        DashboardClient(clientID: id, threadID: "t-" + id, name: id, unread: 0, zone: zone, mealTimes: meals,
                        nextSession: nil, pendingResolutions: 0)
    }

    static func challenge(_ book: inout CoachingBook, client: String, start: String, focuses: [String], today: Int64) throws -> String {
        var command = ChallengeCreateCommand()
        command.name = "Week"
        command.startDate = start
        command.tasks = focuses.map { focus in
            var task = ChallengeTaskView(day: 0, name: "Do", description: nil, focus: focus, intensity: "light", doneAt: nil)
            task.day = nil
            return task
        }
        let body = try book.createChallenge(.init(id: UUID().uuidString, clientID: client, coachID: "k", command: command,
                                                  today: today, now: 0))
        book.apply(body)
        return body.challenge!.id
    }

    @Test func engagementIsTheMeanShareOfEngagedDays() throws {
        var book = CoachingBook()
        let today = Self.monday / Self.day
        // The range: the 7 days before Monday (Mon 16th – Sun 22nd); now is Monday noon.
        let from = Self.monday - 7 * Self.day, to = Self.monday, now = Self.monday + 43_200
        // a: meals on two days (three on one of them), a check-in on a third day, a task on a fourth, a session on
        //    the second meal day again: 4 of 7 days.
        let a = Self.client("a", meals: [from + 3600, from + 7200, from + 9000, from + 2 * Self.day + 60])
        var command = CheckInSubmitCommand()
        command.weight = 80
        book.apply(try book.submitCheckIn(id: "ci", clientID: "a", command: command, photoExists: { _ in true },
                                          now: from + 3 * Self.day + 5))
        let id = try Self.challenge(&book, client: "a", start: "2026-11-20", focuses: Array(repeating: "training", count: 3),
                                    today: today - 3)
        let at = from + 5 * Self.day + 100  // Saturday the 21st, day 2 of the challenge
        book.apply(try #require(try book.checkTask(challengeID: id, clientID: "a", day: 2, done: true, today: at / Self.day,
                                                   dayOf: { $0 / Self.day }, now: at)))
        let attended = ["t-a": [from + 2 * Self.day + 7200], "t-b": [from - 60, to]]  // b's: outside the range
        // b: nothing in the range (a meal just before it, one at its end): 0 of 7.
        let b = Self.client("b", meals: [from - 1, to])
        // (4/7 + 0/7) / 2 = 28.57 % → 28.
        #expect(CoachDashboard.engagement(clients: [a, b], book: book, attended: attended, from: from, to: to, now: now) == 28)
        #expect(CoachDashboard.engagement(clients: [a], book: book, attended: attended, from: from, to: to, now: now) == 57)
        #expect(CoachDashboard.engagement(clients: [b], book: book, attended: attended, from: from, to: to, now: now) == 0)
        // No clients, an empty or reversed range: nothing to measure.
        #expect(CoachDashboard.engagement(clients: [], book: book, attended: [:], from: from, to: to, now: now) == nil)
        #expect(CoachDashboard.engagement(clients: [a], book: book, attended: [:], from: to, to: to, now: now) == nil)
        #expect(CoachDashboard.engagement(clients: [a], book: book, attended: [:], from: to, to: from, now: now) == nil)
        // Days after today are not counted: a range ending next week, measured on Wednesday the 18th (3 days: 16–18),
        // a engaged on the 16th and 18th → 66.
        #expect(CoachDashboard.engagement(clients: [a], book: book, attended: attended, from: from, to: to + 7 * Self.day,
                                          now: from + 2 * Self.day + 80_000) == 66)
        // A range entirely in the future: nothing to measure.
        #expect(CoachDashboard.engagement(clients: [a], book: book, attended: [:], from: now + Self.day, to: now + 2 * Self.day,
                                          now: now) == nil)
        // In Riyadh (UTC+3) the range's days are the 16th to the 23rd (8): a meal a minute before it is not counted,
        // the one at 01:00 UTC is on the 16th, the one at 23:59 UTC on the 22nd is on the 23rd: 2 of 8.
        let riyadh = Self.client("r", meals: [from - 60, from + 3600, to - 60], zone: TimeZone(identifier: "Asia/Riyadh")!)
        #expect(CoachDashboard.engagement(clients: [riyadh], book: book, attended: [:], from: from, to: to, now: now) == 25)
    }

    @Test func popularTypesAreRankedWithStableTies() throws {
        var book = CoachingBook()
        let today = Self.monday / Self.day
        let from = Self.monday - 7 * Self.day, to = Self.monday + 1, now = Self.monday
        // Nutrition twice, recovery twice (a tie: nutrition first), training once, consistency never.
        _ = try Self.challenge(&book, client: "a", start: "2026-11-16", focuses: ["nutrition", "nutrition", "training"], today: today - 7)
        _ = try Self.challenge(&book, client: "b", start: "2026-11-20", focuses: ["recovery", "recovery", "training"], today: today - 3)
        _ = try Self.challenge(&book, client: "b", start: "2026-11-21", focuses: ["nutrition", "recovery", "consistency"], today: today - 2)
        _ = try Self.challenge(&book, client: "a", start: "2026-11-22", focuses: ["recovery", "recovery", "nutrition"], today: today - 1)
        _ = try Self.challenge(&book, client: "a", start: "2026-11-23", focuses: ["training", "training", "consistency"], today: today)
        // Outside the range: ended before it, or starting after today.
        _ = try Self.challenge(&book, client: "a", start: "2026-11-10", focuses: ["consistency", "consistency", "consistency"],
                               today: today - 13)
        _ = try Self.challenge(&book, client: "b", start: "2026-11-24", focuses: ["consistency", "consistency", "consistency"],
                               today: today)
        let types = CoachDashboard.popularTypes(clients: [Self.client("a"), Self.client("b")], book: book, from: from, to: to, now: now)
        #expect(types == [ChallengeTypeCount(type: "nutrition", challenges: 2), ChallengeTypeCount(type: "recovery", challenges: 2),
                          ChallengeTypeCount(type: "training", challenges: 1)])
        // A client not of this coach's list is not counted.
        #expect(CoachDashboard.popularTypes(clients: [Self.client("b")], book: book, from: from, to: to, now: now)
                == [ChallengeTypeCount(type: "nutrition", challenges: 1), ChallengeTypeCount(type: "recovery", challenges: 1)])
        #expect(CoachDashboard.popularTypes(clients: [], book: book, from: from, to: to, now: now).isEmpty)
    }

    @Test func theAnalyticsJSONCarriesBoth() {
        var view = CoachAnalyticsView(from: 1, to: 2, clients: 0, challengeCompletionPercent: nil, checkInsPerClientWeek: nil,
                                      mealLogDaysPercent: nil, sessionAttendancePercent: nil)
        #expect(view.jsonText == #"{"clients":0,"from":1,"popular_challenge_types":[],"to":2}"#)
        view.engagementPercent = 42
        view.popularChallengeTypes = [ChallengeTypeCount(type: "training", challenges: 3)]
        #expect(view.jsonText == #"{"clients":0,"engagement_percent":42,"from":1,"popular_challenge_types":[{"challenges":3,"type":"training"}],"to":2}"#)
        #expect(view.jsonText == JSONText.encoder.encodeToString(view))
    }
}
