import Foundation
import Testing
@testable import SpotterCore
import SpotterProtocol

/// The coaching record through the core: every change is one `record` record on the client's current thread,
/// both participants hear of it, and the coach's dashboard card follows; the wrong side and outsiders are
/// refused and nothing is written.
@Suite("CoachingCore: the coaching record")
struct CoachingCoreRecordTests {
    typealias H = CoreHarness

    static func challenge(thread: String = "t1", days: Int = 3, start: String = "2027-01-15",
                          template: String? = nil) -> ChallengeCreateCommand {
        var command = ChallengeCreateCommand()
        command.threadId = thread
        command.name = "Hydration"
        command.startDate = start
        command.templateId = template
        command.tasks = (1...days).map { day in
            var task = ChallengeTaskView(day: 0, name: "Day \(day)", description: nil, focus: "training",
                                         intensity: "moderate", doneAt: nil)
            task.day = nil
            return task
        }
        return command
    }

    static func check(_ challenge: String, day: Int, done: Bool = true) -> ChallengeCheckCommand {
        var command = ChallengeCheckCommand()
        command.challengeId = challenge
        command.day = day
        command.done = done
        return command
    }

    static func checkIn(thread: String = "t1", weight: Double = 80, front: String? = nil) -> CheckInSubmitCommand {
        var command = CheckInSubmitCommand()
        command.threadId = thread
        command.weight = weight
        command.photos = front.map { CheckInPhotos(front: $0, side: nil, back: nil) }
        return command
    }

    static func comment(_ checkIn: String, _ text: String = "Nice work") -> CheckInCommentCommand {
        var command = CheckInCommentCommand()
        command.checkInId = checkIn
        command.comment = text
        return command
    }

    static func measurement(thread: String = "t1") -> MeasurementAddCommand {
        var command = MeasurementAddCommand()
        command.threadId = thread
        command.method = "navy"
        command.sex = "male"
        command.heightCm = 180
        command.neckCm = 38
        command.waistCm = 90
        return command
    }

    static func goal(thread: String = "t1", target: Double = 15, replace: Bool? = nil) -> GoalSetCommand {
        var command = GoalSetCommand()
        command.replace = replace
        command.threadId = thread
        command.kind = "cutting"
        command.targetPercent = target
        return command
    }

    /// One record of `change` on t1, made by `side`, about `ref`; both hear of it, the coach gets the card.
    @discardableResult
    func expectOneRecord(_ committed: CoreHarness.Committed, _ h: CoreHarness, change: String, side: Side, ref: String?,
                         sourceLocation: SourceLocation = #_sourceLocation) throws -> ClientCardView {
        #expect(committed.records.count == 1, sourceLocation: sourceLocation)
        let record = try #require(committed.records.first, sourceLocation: sourceLocation)
        #expect(record.kind == .record && record.threadNo == 1 && record.side == side && record.content.coaching?.itemID == ref,
                sourceLocation: sourceLocation)
        #expect(record.seq == h.thread("t1").lastSeq, sourceLocation: sourceLocation)  // not a message: no seq of its own
        #expect(try decode(RecordBody.self, record.content.coaching?.json ?? "").change == change, sourceLocation: sourceLocation)
        #expect(try decode(RecordBody.self, committed.reply).change == change, sourceLocation: sourceLocation)
        #expect(committed.applied.loggedTypes == ["k:record", "a:record"], sourceLocation: sourceLocation)
        #expect(committed.applied.ephemeralTypes == ["k:client_card"], sourceLocation: sourceLocation)
        let frame = try #require(committed.applied.ephemeral.first?.frame, sourceLocation: sourceLocation)
        let card = try decode(ClientCardEvent.self, frame).card
        #expect(card.clientId == "a" && card.threadId == "t1", sourceLocation: sourceLocation)
        return card
    }

    @Test func everyChangeIsOneRecordAndACardForTheCoach() throws {
        let h = CoreHarness()
        try h.commit(.text("a", "m1"))

        let created = try h.commit(.record(userID: "k", .createChallenge(Self.challenge())))
        var card = try expectOneRecord(created, h, change: "challenge.created", side: .coach, ref: "id-1")
        #expect(card.activeChallenges.count == 1 && card.unread == 1)
        #expect(h.core.coaching.challenges["id-1"]?.clientId == "a")

        let checked = try h.commit(.record(userID: "a", .checkTask(Self.check("id-1", day: 1))))
        try expectOneRecord(checked, h, change: "challenge.task_checked", side: .client, ref: "id-1")
        #expect(h.core.coaching.challenges["id-1"]?.tasks[0].doneAt == H.start)
        // Checked again (a retry): the challenge as it stands, nothing written, no card.
        let again = try h.commit(.record(userID: "a", .checkTask(Self.check("id-1", day: 1))))
        #expect(again.records.isEmpty && again.applied.ephemeral.isEmpty)
        #expect(try decode(RecordBody.self, again.reply).change == "challenge.unchanged")
        // Tomorrow's task is not yet.
        #expect(h.refusal(.record(userID: "a", .checkTask(Self.check("id-1", day: 2)))) == APIError(.taskNotAllowed, field: "day"))

        let submitted = try h.commit(.record(userID: "a", .submitCheckIn(Self.checkIn(front: "img-1"), images: ["img-1"])))
        card = try expectOneRecord(submitted, h, change: "check_in.created", side: .client, ref: "id-2")
        #expect(card.latestWeightKg == 80 && card.lastCheckInAt == H.start)
        #expect(h.refusal(.record(userID: "a", .submitCheckIn(Self.checkIn(front: "img-9"), images: ["img-1"])))
            == APIError(.recordNotFound, field: "photos.front"))

        let commented = try h.commit(.record(userID: "k", .comment(Self.comment("id-2"))))
        try expectOneRecord(commented, h, change: "check_in.commented", side: .coach, ref: "id-2")
        #expect(h.core.coaching.checkIns["id-2"]?.coachComment == "Nice work")

        let measured = try h.commit(.record(userID: "a", .addMeasurement(Self.measurement())))
        let fat = try #require(try decode(RecordBody.self, measured.reply).measurement?.bodyFatPercent)
        try expectOneRecord(measured, h, change: "measurement.created", side: .client, ref: "id-4")
        #expect(fat > 15 && fat < 25)

        let goal = try h.commit(.record(userID: "a", .setGoal(Self.goal())))
        card = try expectOneRecord(goal, h, change: "goal.created", side: .client, ref: "id-5")
        #expect(card.goal?.targetPercent == 15 && card.goal?.status == "active")
        // A second active goal is refused unless it says to replace the first (seed 004 US3 #4).
        #expect(h.refusal(.record(userID: "a", .setGoal(Self.goal(target: 12)))) == APIError(.goalActive, field: "replace"))
        // Replacing: two items changed, two records, one card.
        let replaced = try h.commit(.record(userID: "a", .setGoal(Self.goal(target: 12, replace: true))))
        #expect(replaced.records.map(\.content.coaching?.itemID) == ["id-5", "id-7"])  // id-6 went to the refused goal
        #expect(try replaced.records.map { try decode(RecordBody.self, $0.content.coaching?.json ?? "").change } == ["goal.replaced", "goal.created"])
        #expect(replaced.applied.ephemeralTypes == ["k:client_card"])

        // id-3 went to the refused check-in (ids are taken before the rules run); nothing else was written.
        #expect(h.log.records.map(\.kind) == [.message] + Array(repeating: .record, count: 8))
        #expect(h.thread("t1").lastSeq == 1)
    }

    @Test func theWrongSideAndOutsidersAreRefusedAndNothingIsWritten() throws {
        let h = CoreHarness()
        let created = try h.commit(.record(userID: "k", .createChallenge(Self.challenge())))
        let challenge = try #require(created.records.first?.content.coaching?.itemID)
        let checkIn = try #require(try h.commit(.record(userID: "a", .submitCheckIn(Self.checkIn(), images: []))).records.first?.content.coaching?.itemID)
        let written = h.log.records.count

        let forbidden = APIError(.forbidden, field: "thread_id")
        #expect(h.refusal(.record(userID: "a", .createChallenge(Self.challenge()))) == forbidden)  // the client's side
        #expect(h.refusal(.record(userID: "x", .createChallenge(Self.challenge()))) == forbidden)  // no part in t1
        #expect(h.refusal(.record(userID: "k0", .createChallenge(Self.challenge(thread: "t3"))))
            == APIError(.threadInactive, field: "thread_id"))
        #expect(h.refusal(.record(userID: "k", .submitCheckIn(Self.checkIn(), images: []))) == forbidden)
        #expect(h.refusal(.record(userID: "k", .addMeasurement(Self.measurement()))) == forbidden)
        #expect(h.refusal(.record(userID: "b", .setGoal(Self.goal()))) == forbidden)
        #expect(h.refusal(.record(userID: "c", .submitCheckIn(Self.checkIn(thread: "t3"), images: [])))
            == APIError(.threadInactive, field: "thread_id"))
        // Another client's challenge, the coach checking it, a client with no coach.
        let notFound = APIError(.recordNotFound, field: "challenge_id")
        #expect(h.refusal(.record(userID: "b", .checkTask(Self.check(challenge, day: 1)))) == notFound)
        #expect(h.refusal(.record(userID: "k", .checkTask(Self.check(challenge, day: 1)))) == notFound)
        #expect(h.refusal(.record(userID: "c", .checkTask(Self.check(challenge, day: 1)))) == notFound)
        // A comment by a coach who is not the client's current coach.
        #expect(h.refusal(.record(userID: "x", .comment(Self.comment(checkIn)))) == APIError(.recordNotFound, field: "check_in_id"))
        #expect(h.refusal(.record(userID: "a", .comment(Self.comment(checkIn)))) == APIError(.recordNotFound, field: "check_in_id"))
        #expect(h.log.records.count == written)
        #expect(h.core.coaching.challenges.count == 1 && h.core.coaching.checkIns[checkIn]?.coachComment == nil)
    }

    @Test func theRecordPageDashboardAndTemplateCountReadWhatWasDecided() throws {
        let h = CoreHarness()
        try h.commit(.record(userID: "k", .createChallenge(Self.challenge(days: 7, template: "hydration"))))
        try h.commit(.record(userID: "a", .submitCheckIn(Self.checkIn(weight: 81.5), images: [])))
        var command = RecordCommand()
        command.threadId = "t1"
        let page = try decode(RecordResult.self, h.core.recordPage(command, by: "a", h.context, budget: 1 << 20).get())
        #expect(page.clientId == "a" && page.challenges.map(\.id) == ["id-1"] && page.checkIns.map(\.weightKg) == [81.5])
        #expect(page.latestWeightKg == 81.5)
        #expect(throws: APIError(.forbidden, field: "thread_id")) {
            try h.core.recordPage(command, by: "x", h.context, budget: 1 << 20).get()
        }
        var template = ChallengeTemplateCommand()
        template.templateId = "hydration"
        #expect(try h.core.template(template, by: "k", h.context).get() == #"{"template_id":"hydration","participants":1}"#)
        #expect(throws: APIError(.forbidden, field: "type")) { try h.core.template(template, by: "a", h.context).get() }
        let dashboard = try decode(DashboardResult.self, h.core.dashboard(DashboardCommand(), by: "k", h.context).get())
        #expect(dashboard.clients.map(\.clientId).sorted() == ["a", "b"])
        #expect(throws: APIError(.forbidden, field: "type")) { try h.core.dashboard(DashboardCommand(), by: "a", h.context).get() }
    }
}
