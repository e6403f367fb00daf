import Foundation
import Testing
import SpotterCore
import SpotterProtocol

/// Group challenges without sockets (seed 003: 7, 14 or 30 days, participant counts): the length rule, joining,
/// leaving, finishing, and the counts each of them moves.
@Suite("Group challenges")
struct GroupChallengeTests {
    static let day: Int64 = 86_400
    /// 2026-11-23 00:00 UTC.
    static let monday: Int64 = 1_795_392_000
    static let today = monday / day

    static func made(_ book: inout CoachingBook, days: Int, client: String = "c1", coach: String = "k",
                     template: String? = "steps", start: String = "2026-11-23") throws -> ChallengeView {
        var command = CoachingBookTests.command(days: days, start: start, template: template)
        command.tasks = command.tasks?.enumerated().map { index, task in
            var task = task
            task.focus = index % 3 == 0 ? "nutrition" : "training"
            return task
        }
        let body = try book.createChallenge(.init(id: UUID().uuidString, clientID: client, coachID: coach, command: command,
                                                  today: today, now: monday))
        book.apply(body)
        return try #require(body.challenge)
    }

    static func join(_ book: inout CoachingBook, client: String, coach: String = "k", template: String? = "steps",
                     start: String? = nil, today: Int64 = today) throws(RecordError) -> ChallengeView {
        var command = ChallengeJoinCommand()
        command.templateId = template
        command.startDate = start
        let body = try book.joinChallenge(.init(id: UUID().uuidString, clientID: client, coachID: coach, command: command,
                                                today: today, now: monday + 60))
        book.apply(body)
        return body.challenge!
    }

    static func counts(_ book: CoachingBook, today: Int64 = today, template: String = "steps") -> (Int, Int)? {
        book.participation(coach: "k", template: template, today: { _ in today }).map { ($0.participants, $0.finished) }
    }

    @Test func aGroupChallengeLastsSevenFourteenOrThirtyDays() throws {
        var book = CoachingBook()
        for days in [7, 14, 30] {
            #expect(try Self.made(&book, days: days, client: "c\(days)", template: "t\(days)").days == days)
        }
        for days in [0, 1, 3, 6, 8, 13, 15, 29, 31, 100] {
            #expect(throws: days == 0 ? RecordError.missing("tasks") : RecordError.challengeLength) {
                _ = try Self.made(&book, days: days, client: "x", template: "t")
            }
        }
        // A personal challenge (no template) keeps seed 002's 3–14 days.
        #expect(try Self.made(&book, days: 10, template: nil).days == 10)
        #expect(throws: RecordError.outOfRange("tasks")) { _ = try Self.made(&book, days: 30, template: nil) }
        #expect(APIError(record: .challengeLength) == APIError(.challengeLength, field: "tasks"))
    }

    @Test func joiningCopiesTheTemplateAndCountsTheClient() throws {
        var book = CoachingBook()
        let first = try Self.made(&book, days: 7)
        #expect(Self.counts(book)! == (1, 0))
        let joined = try Self.join(&book, client: "c2", start: "2026-11-25")
        #expect(joined.templateId == "steps" && joined.clientId == "c2" && joined.coachId == "k" && joined.days == 7)
        #expect(joined.tasks.map(\.name) == first.tasks.map(\.name) && joined.tasks.allSatisfy { $0.doneAt == nil })
        #expect(joined.startDate == "2026-11-25" && joined.status == "pending" && joined.name == "Hydration week")
        #expect(Self.counts(book)! == (2, 0))
        // Joined twice: refused; another coach's template or an unknown one: not found; the dates are checked.
        #expect(throws: RecordError.alreadyJoined) { _ = try Self.join(&book, client: "c2") }
        #expect(throws: RecordError.alreadyJoined) { _ = try Self.made(&book, days: 7, client: "c2") }
        #expect(throws: RecordError.notFound("template_id")) { _ = try Self.join(&book, client: "c3", coach: "other") }
        #expect(throws: RecordError.notFound("template_id")) { _ = try Self.join(&book, client: "c3", template: "nope") }
        #expect(throws: RecordError.notFound("template_id")) { _ = try Self.join(&book, client: "c3", template: "") }
        #expect(throws: RecordError.notFound("template_id")) {
            _ = try Self.join(&book, client: "c3", template: String(repeating: "s", count: 65))
        }
        #expect(throws: RecordError.missing("template_id")) { _ = try Self.join(&book, client: "c3", template: nil) }
        #expect(throws: RecordError.outOfRange("start_date")) { _ = try Self.join(&book, client: "c3", start: "2026-11-22") }
        #expect(throws: RecordError.outOfRange("start_date")) { _ = try Self.join(&book, client: "c3", start: "2027-11-25") }
        #expect(throws: RecordError.badValue("start_date")) { _ = try Self.join(&book, client: "c3", start: "2026-02-30") }
        #expect(throws: RecordError.badValue("start_date")) { _ = try Self.join(&book, client: "c3", start: "\u{0}") }
        #expect(Self.counts(book)! == (2, 0))
        #expect(book.participantIDs(coach: "k", template: "steps", today: { _ in Self.today }) == ["c1", "c2"])
        #expect(book.participation(coach: "other", template: "steps", today: { _ in Self.today }) == nil)
    }

    @Test func leavingAndFinishingMoveTheCounts() throws {
        var book = CoachingBook()
        let first = try Self.made(&book, days: 7)
        let second = try Self.join(&book, client: "c2")
        // c2 leaves: no longer counted; leaving again changes nothing; checking a left challenge is refused.
        let left = try #require(try book.leaveChallenge(challengeID: second.id, clientID: "c2", today: Self.today, now: Self.monday + 99))
        #expect(left.change == "challenge.left" && left.challenge?.status == "left" && left.challenge?.leftAt == Self.monday + 99)
        book.apply(left)
        #expect(Self.counts(book)! == (1, 0))
        #expect(try book.leaveChallenge(challengeID: second.id, clientID: "c2", today: Self.today, now: Self.monday) == nil)
        #expect(throws: RecordError.challengeOver) {
            _ = try book.checkTask(challengeID: second.id, clientID: "c2", day: 1, done: true, today: Self.today,
                                   dayOf: { $0 / Self.day }, now: Self.monday)
        }
        #expect(throws: RecordError.notFound("challenge_id")) {
            _ = try book.leaveChallenge(challengeID: first.id, clientID: "c2", today: Self.today, now: Self.monday)
        }
        #expect(throws: RecordError.notFound("challenge_id")) {
            _ = try book.leaveChallenge(challengeID: "nope", clientID: "c1", today: Self.today, now: Self.monday)
        }
        // Having left, c2 may join again.
        _ = try Self.join(&book, client: "c2")
        #expect(Self.counts(book)! == (2, 0))
        // c1 checks every task over the week: finished, out of the participants, and can no longer leave.
        for day in 1...7 {
            let at = Self.monday + Int64(day - 1) * Self.day + 60
            book.apply(try #require(try book.checkTask(challengeID: first.id, clientID: "c1", day: day, done: true,
                                                       today: at / Self.day, dayOf: { $0 / Self.day }, now: at)))
        }
        let sunday = Self.today + 6
        #expect(Self.counts(book, today: sunday)! == (1, 1))
        #expect(throws: RecordError.challengeOver) {
            _ = try book.leaveChallenge(challengeID: first.id, clientID: "c1", today: sunday, now: Self.monday)
        }
        // After the last day, an unfinished one is over: counted in neither.
        #expect(Self.counts(book, today: sunday + 1)! == (0, 1))
        // A client finishing twice counts once among the finished.
        let again = try Self.join(&book, client: "c1", today: sunday)
        #expect(Self.counts(book, today: sunday)! == (2, 1))
        #expect(again.status == "active")
    }

    @Test func theMainFocusAndItsTies() {
        #expect(CoachDashboard.mainFocus(["training", "nutrition", "nutrition"]) == "nutrition")
        #expect(CoachDashboard.mainFocus(["consistency", "recovery"]) == "recovery")
        #expect(CoachDashboard.mainFocus(["consistency", "training"]) == "training")
        #expect(CoachDashboard.mainFocus(["consistency"]) == "consistency")
        #expect(CoachDashboard.mainFocus([]) == "training")
        #expect(CoachDashboard.mainFocus(["unknown", "\u{7}"]) == "training")
    }
}
