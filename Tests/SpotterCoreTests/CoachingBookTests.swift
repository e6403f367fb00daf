import Foundation
import Testing
import SpotterCore
import SpotterProtocol

/// The coaching record's rules without sockets: challenges and their days, check-ins, the 7-day measurement
/// rule and body-fat goals (seed 002 client §5/§7, seed 003, seed 004).
@Suite("Coaching record rules")
struct CoachingBookTests {
    static let day: Int64 = 86_400
    /// 2026-11-23 00:00 UTC.
    static let monday: Int64 = 1_795_392_000

    static func task(_ name: String, focus: String = "training", intensity: String = "moderate") -> ChallengeTaskView {
        var task = ChallengeTaskView(day: 0, name: name, description: nil, focus: focus, intensity: intensity, doneAt: nil)
        task.day = nil
        return task
    }

    static func command(days: Int, start: String = "2026-11-23", template: String? = nil) -> ChallengeCreateCommand {
        var command = ChallengeCreateCommand()
        command.threadId = "t"
        command.name = "  Hydration week "
        command.startDate = start
        command.tasks = (1...max(days, 1)).map { task("Day \($0)") }.prefix(days).map { $0 }
        command.templateId = template
        return command
    }

    static func create(_ book: inout CoachingBook, days: Int = 7, start: String = "2026-11-23", today: Int64 = monday / day,
                       client: String = "c1", template: String? = nil) throws -> ChallengeView {
        let body = try book.createChallenge(CoachingBook.NewChallenge(
            id: UUID().uuidString, clientID: client, coachID: "k", command: command(days: days, start: start, template: template),
            today: today, now: monday))
        book.apply(body)
        return try #require(body.challenge)
    }

    @Test func daysAreCalendarDatesInTheClientsZone() throws {
        #expect(LocalDay.parse("1970-01-01") == 0)
        #expect(LocalDay.parse("2026-11-23") == Self.monday / Self.day)
        #expect(LocalDay.format(Self.monday / Self.day) == "2026-11-23")
        #expect(LocalDay.parse("2024-02-29") != nil && LocalDay.parse("2026-02-29") == nil && LocalDay.parse("2026-13-01") == nil)
        #expect(LocalDay.parse("2026-1-01") == nil && LocalDay.parse("yesterday") == nil)
        for day in stride(from: Int64(-800), through: 30_000, by: 97) { #expect(LocalDay.parse(LocalDay.format(day)) == day) }
        // 22:30 UTC on the 22nd is already the 23rd in Riyadh (UTC+3), still the 22nd in New York.
        let late = Self.monday - 5_400
        #expect(LocalDay.of(late, in: TimeZone(identifier: "Asia/Riyadh")!) == Self.monday / Self.day)
        #expect(LocalDay.of(late, in: TimeZone(identifier: "America/New_York")!) == Self.monday / Self.day - 1)
        #expect(LocalDay.of(-1, in: TimeZone(identifier: "UTC")!) == -1)
    }

    @Test func aChallengeHasThreeToFourteenDaysFromTodayOn() throws {
        var book = CoachingBook()
        let made = try Self.create(&book, days: 3)
        #expect(made.name == "Hydration week" && made.days == 3 && made.tasks.map(\.day) == [1, 2, 3])
        #expect(made.status == "active" && made.percent == 0 && made.createdBy == "coach")
        #expect(try Self.create(&book, days: 14).days == 14)
        for days in [2, 15] {
            #expect(throws: RecordError.outOfRange("tasks")) { _ = try Self.create(&book, days: days) }
        }
        #expect(throws: RecordError.outOfRange("start_date")) { _ = try Self.create(&book, start: "2026-11-22") }
        #expect(throws: RecordError.badValue("start_date")) { _ = try Self.create(&book, start: "2026-11-31") }
        #expect(try Self.create(&book, start: "2026-11-30").status == "pending")
        var bad = Self.command(days: 3)
        bad.tasks![1].focus = "cardio"
        #expect(throws: RecordError.badValue("tasks[1].focus")) {
            _ = try book.createChallenge(.init(id: "x", clientID: "c1", coachID: "k", command: bad, today: Self.monday / Self.day, now: 0))
        }
        bad = Self.command(days: 3)
        bad.createdBy = "robot"
        #expect(throws: RecordError.badValue("created_by")) {
            _ = try book.createChallenge(.init(id: "x", clientID: "c1", coachID: "k", command: bad, today: Self.monday / Self.day, now: 0))
        }
    }

    @Test func tasksAreCheckedFromTheirDayAndUncheckedOnlyTheSameDay() throws {
        var book = CoachingBook()
        let challenge = try Self.create(&book, days: 3)
        let today = Self.monday / Self.day
        let dayOf = { (time: Int64) in time / Self.day }
        func check(_ day: Int, _ done: Bool, today: Int64, at now: Int64) throws -> ChallengeView? {
            let body = try book.checkTask(challengeID: challenge.id, clientID: "c1", day: day, done: done, today: today,
                                          dayOf: dayOf, now: now)
            if let body { book.apply(body) }
            return body?.challenge
        }
        #expect(throws: RecordError.taskNotAllowed) { _ = try check(2, true, today: today, at: Self.monday + 60) }
        let first = try #require(try check(1, true, today: today, at: Self.monday + 60))
        #expect(first.done == 1 && first.percent == 33 && first.tasks[0].doneAt == Self.monday + 60)
        #expect(try check(1, true, today: today, at: Self.monday + 90) == nil)  // a retry changes nothing
        #expect(try check(1, false, today: today, at: Self.monday + 120)?.done == 0)  // same day: allowed
        _ = try check(1, true, today: today, at: Self.monday + 180)
        // The next day, day 1 can no longer be unchecked; day 2 can be checked.
        #expect(throws: RecordError.taskNotAllowed) { _ = try check(1, false, today: today + 1, at: Self.monday + Self.day) }
        #expect(try check(2, true, today: today + 1, at: Self.monday + Self.day)?.status == "active")
        #expect(throws: RecordError.outOfRange("day")) { _ = try check(4, true, today: today + 5, at: Self.monday) }
        #expect(throws: RecordError.notFound("challenge_id")) {
            _ = try book.checkTask(challengeID: challenge.id, clientID: "c2", day: 1, done: true, today: today, dayOf: dayOf, now: 0)
        }
        // Day 3 left open: after the last day the challenge has ended; with it done, it is completed.
        #expect(CoachingBook.status(book.challenges[challenge.id]!, today: today + 3) == "ended")
        #expect(CoachingBook.status(book.challenges[challenge.id]!, today: today + 2) == "active")
        #expect(try check(3, true, today: today + 2, at: Self.monday + 2 * Self.day)?.status == "completed")
        #expect(book.challenges(of: "c1", today: today + 9).first?.percent == 100)
    }

    @Test func aTemplateCountsItsLiveParticipants() throws {
        var book = CoachingBook()
        let today = Self.monday / Self.day
        _ = try Self.create(&book, days: 7, client: "c1", template: "hydration")
        _ = try Self.create(&book, days: 7, start: "2026-11-25", client: "c2", template: "hydration")
        _ = try Self.create(&book, days: 7, client: "c3", template: "other")
        #expect(book.participants(coach: "k", template: "hydration", today: { _ in today }) == 2)
        // Seven days later the first has ended; the second (from the 25th) is still on.
        #expect(book.participants(coach: "k", template: "hydration", today: { _ in today + 7 }) == 1)
        #expect(book.participants(coach: "k", template: "none", today: { _ in today }) == 0)
        // Another coach's template of the same name is theirs alone.
        #expect(book.participants(coach: "other", template: "hydration", today: { _ in today }) == 0)
    }

    @Test func checkInsConvertPoundsAndNeedTheirPhotos() throws {
        var book = CoachingBook()
        var command = CheckInSubmitCommand()
        command.weight = 176.37
        command.unit = "lbs"
        command.photos = CheckInPhotos(front: "f", side: nil, back: "b")
        let body = try book.submitCheckIn(id: "ci1", clientID: "c1", command: command, photoExists: { ["f", "b"].contains($0) }, now: 10)
        #expect(body.checkIn?.weightKg == 80)
        book.apply(body)
        #expect(book.latestWeight(of: "c1") == 80)
        #expect(throws: RecordError.notFound("photos.back")) {
            _ = try book.submitCheckIn(id: "x", clientID: "c1", command: command, photoExists: { $0 == "f" }, now: 10)
        }
        command.unit = "stone"
        #expect(throws: RecordError.badValue("unit")) { _ = try book.submitCheckIn(id: "x", clientID: "c1", command: command, photoExists: { _ in true }, now: 10) }
        command.unit = nil
        command.weight = 19.9
        #expect(throws: RecordError.outOfRange("weight")) { _ = try book.submitCheckIn(id: "x", clientID: "c1", command: command, photoExists: { _ in true }, now: 10) }
        command.weight = nil
        #expect(throws: RecordError.missing("weight")) { _ = try book.submitCheckIn(id: "x", clientID: "c1", command: command, photoExists: { _ in true }, now: 10) }
        // The coach's comment: only on a check-in of their client.
        #expect(try book.comment(checkInID: "ci1", clientID: { $0 == "c1" }, comment: " Good week ", now: 20).checkIn?.coachComment == "Good week")
        #expect(throws: RecordError.notFound("check_in_id")) { _ = try book.comment(checkInID: "ci1", clientID: { $0 == "c2" }, comment: "x", now: 20) }
        #expect(throws: RecordError.missing("comment")) { _ = try book.comment(checkInID: "ci1", clientID: { _ in true }, comment: " ", now: 20) }
    }

    static func navy(waist: Double, neck: Double = 38.1) -> MeasurementAddCommand {
        var command = MeasurementAddCommand()
        command.method = "navy"
        command.sex = "male"
        command.heightCm = 177.8
        command.neckCm = neck
        command.waistCm = waist
        return command
    }

    @Test func measurementsAreSevenDaysApartAndMoveTheGoal() throws {
        var book = CoachingBook()
        var bodies = try book.addMeasurement(id: "m1", clientID: "c1", command: Self.navy(waist: 91.44, neck: 40.64), now: Self.monday)
        // Height 70 in, waist 36 in, neck 16 in → 19.5 % (the published worked example, in cm).
        let first = try #require(bodies[0].measurement?.bodyFatPercent)
        #expect(bodies.map(\.change) == ["measurement.created"] && abs(first - 19.5) < 0.25)
        // Stored to a tenth of a point, as the formula gives it.
        #expect(first == (BodyComposition.navy(sex: .male, heightCm: 177.8, neckCm: 40.64, waistCm: 91.44, hipCm: nil)! * 10).rounded() / 10)
        bodies.forEach { book.apply($0) }
        let week = 7 * Self.day
        #expect(throws: RecordError.tooSoon(nextAllowed: Self.monday + week, now: Self.monday + week - 1)) {
            _ = try book.addMeasurement(id: "m2", clientID: "c1", command: Self.navy(waist: 86.36), now: Self.monday + week - 1)
        }
        #expect(book.nextMeasurementAllowed(of: "c1") == Self.monday + week)
        // Goals: below 8 % for a man is refused, 8 % is allowed; a cutting target must be below today's value.
        var goal = GoalSetCommand()
        goal.kind = "cutting"
        goal.targetPercent = 7.9
        #expect(throws: RecordError.unsafeGoal) { _ = try book.setGoal(id: "g0", clientID: "c1", command: goal, now: 1) }
        goal.targetPercent = 20
        #expect(throws: RecordError.outOfRange("target_percent")) { _ = try book.setGoal(id: "g0", clientID: "c1", command: goal, now: 1) }
        #expect(throws: RecordError.noMeasurement) { _ = try book.setGoal(id: "g0", clientID: "c2", command: goal, now: 1) }
        goal.targetPercent = 8
        try book.setGoal(id: "g1", clientID: "c1", command: goal, now: 1).forEach { book.apply($0) }
        goal.targetPercent = 18
        // One active goal (seed 004 US3 #4): a second is refused unless it says to replace the first.
        #expect(throws: RecordError.goalActive) { _ = try book.setGoal(id: "g2", clientID: "c1", command: goal, now: 2) }
        goal.replace = false
        #expect(throws: RecordError.goalActive) { _ = try book.setGoal(id: "g2", clientID: "c1", command: goal, now: 2) }
        goal.replace = true
        let replaced = try book.setGoal(id: "g2", clientID: "c1", command: goal, now: 2)
        #expect(replaced.map(\.change) == ["goal.replaced", "goal.created"] && replaced[0].goal?.id == "g1")
        replaced.forEach { book.apply($0) }
        #expect(book.goal(of: "c1")?.id == "g2" && book.goal(of: "c1")?.startPercent == first)
        // Exactly 7 days later: allowed; 70 in, waist 34 in, neck 15 in → 17.5 %, which reaches the 18 % goal.
        bodies = try book.addMeasurement(id: "m2", clientID: "c1", command: Self.navy(waist: 86.36), now: Self.monday + week)
        #expect(bodies.map(\.change) == ["measurement.created", "goal.completed"])
        #expect(abs(bodies[0].measurement!.bodyFatPercent - 17.5) < 0.15 && bodies[1].goal?.completedAt == Self.monday + week)
        bodies.forEach { book.apply($0) }
        #expect(book.measurements(of: "c1").map(\.id) == ["m2", "m1"] && book.goal(of: "c1")?.status == "completed")
    }

    @Test func skinfoldsNeedTheMethodsSitesAndAge() throws {
        let book = CoachingBook()
        var command = MeasurementAddCommand()
        command.method = "skinfold3"
        command.sex = "male"
        command.age = 30
        command.skinfoldsMm = ["chest": 15, "abdomen": 20, "thigh": 18]
        // Jackson–Pollock 3-site, man of 30 with 53 mm in all: 15.95 % → 16.0.
        #expect(try book.addMeasurement(id: "s", clientID: "c", command: command, now: 0)[0].measurement?.bodyFatPercent == 16.0)
        command.skinfoldsMm = ["chest": 15, "abdomen": 20, "triceps": 18]
        #expect(throws: RecordError.badValue("skinfolds_mm.triceps")) { _ = try book.addMeasurement(id: "s", clientID: "c", command: command, now: 0) }
        command.skinfoldsMm = ["chest": 15, "abdomen": 20]
        #expect(throws: RecordError.missing("skinfolds_mm.thigh")) { _ = try book.addMeasurement(id: "s", clientID: "c", command: command, now: 0) }
        command.age = nil
        #expect(throws: RecordError.missing("age")) { _ = try book.addMeasurement(id: "s", clientID: "c", command: command, now: 0) }
        command.method = "bioimpedance"
        #expect(throws: RecordError.badValue("method")) { _ = try book.addMeasurement(id: "s", clientID: "c", command: command, now: 0) }
        var navy = Self.navy(waist: 91.44)
        navy.sex = "female"
        #expect(throws: RecordError.missing("hip_cm")) { _ = try book.addMeasurement(id: "s", clientID: "c", command: navy, now: 0) }
    }

    @Test func aStartRebuildsTheBookFromTheStoredBodies() throws {
        var book = CoachingBook()
        let challenge = try Self.create(&book, days: 3)
        let checked = try #require(try book.checkTask(challengeID: challenge.id, clientID: "c1", day: 1, done: true,
                                                      today: Self.monday / Self.day, dayOf: { $0 / Self.day }, now: Self.monday + 5))
        book.apply(checked)
        // Stored bodies go through JSON; applying them in order gives the same book.
        let stored = [RecordBody(change: "challenge.created", challenge: challenge), checked].map {
            try! JSONDecoder().decode(RecordBody.self, from: JSONEncoder().encode($0))
        }
        var rebuilt = CoachingBook()
        stored.forEach { rebuilt.apply($0) }
        #expect(rebuilt.challenges(of: "c1", today: Self.monday / Self.day) == book.challenges(of: "c1", today: Self.monday / Self.day))
        #expect(rebuilt.challenges[challenge.id]?.tasks[0].doneAt == Self.monday + 5)
    }
}
