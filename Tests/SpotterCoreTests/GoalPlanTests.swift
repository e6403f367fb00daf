import Foundation
import Testing
import SpotterProtocol
@testable import SpotterCore

/// Goals as plans (seed 004 US3, US5, US7, FR-016, FR-021, FR-022) and the daily check-in's score (seed 001),
/// against published worked examples where there are some, and Spotter's documented decisions where the seed is
/// silent (Protocol/README "Goals as plans", "The daily check-in").
@Suite("GoalPlanner and DailyScore")
struct GoalPlanTests {
    static let start: Int64 = 1_790_000_000

    @Test("Mifflin–St Jeor: a 30-year-old man, 70 kg, 175 cm burns 1,648.75 kcal a day at rest")
    func mifflinStJeorMan() {
        // Worked example: calculatorlib.com, "Mifflin-St Jeor BMR Calculator" (700 + 1093.75 − 150 + 5).
        #expect(GoalPlanner.bmr(sex: .male, weightKg: 70, heightCm: 175, age: 30) == 1_648.75)
    }

    @Test("Mifflin–St Jeor: a 28-year-old woman, 65 kg, 165 cm: 1,380.25 kcal (the −161 constant)")
    func mifflinStJeorWoman() {
        // Example profile of qaicalculator.com's calorie calculator ("Active Female": 10×65 + 6.25×165 − 5×28 − 161).
        #expect(GoalPlanner.bmr(sex: .female, weightKg: 65, heightCm: 165, age: 28) == 1_380.25)
        // Everything else equal, the two constants are 166 kcal apart.
        #expect(GoalPlanner.bmr(sex: .male, weightKg: 65, heightCm: 165, age: 28) - 1_380.25 == 166)
    }

    @Test("A 500 kcal daily deficit is about 0.45 kg a week (3,500 kcal a pound, 7,700 a kilogram)")
    func deficitRate() {
        // The rule as NIH/Mayo Clinic state it: cutting 500 kcal a day loses about 1 lb (0.45 kg) a week.
        #expect(abs(GoalPlanner.weeklyChange(dailyKcal: -500) + 0.4545) < 0.001)
        #expect(abs(GoalPlanner.weeklyChange(dailyKcal: 250) - 0.2273) < 0.001)
    }

    @Test("The activity multipliers are the published ones: 1.2, 1.375, 1.55, 1.725, 1.9")
    func activityMultipliers() throws {
        // calculatorlib.com's table (Sedentary 1.2, Lightly active 1.375, …): the 70 kg man above, lightly active,
        // needs 1,648.75 × 1.375 ≈ 2,267 kcal to keep his weight.
        #expect(GoalPlanner.activityFactors == ["sedentary": 1.2, "light": 1.375, "moderate": 1.55, "active": 1.725, "very_active": 1.9])
        let person = GoalPlanner.Person(sex: .male, weightKg: 70, heightCm: 175, age: 30, activity: "light")
        let plan = try #require(GoalPlanner.plan(kind: .cutting, person: person, currentPercent: 20, targetPercent: 15, start: Self.start))
        #expect(plan.bmrKcal == 1_649 && plan.maintenanceKcal == 2_267)
        #expect(GoalPlanner.plan(kind: .cutting, person: Self.with(person, activity: "couch"), currentPercent: 20, targetPercent: 15, start: 0) == nil)
    }

    static func with(_ person: GoalPlanner.Person, activity: String) -> GoalPlanner.Person {
        var changed = person
        changed.activity = activity
        return changed
    }

    @Test("Cutting 25 % → 15 % (US3 #1): lean mass kept, timeline at 0.45 kg a week, weekly milestones to the target")
    func cuttingPlan() throws {
        let person = GoalPlanner.Person(sex: .male, weightKg: 90, heightCm: 180, age: 35, activity: "moderate")
        let plan = try #require(GoalPlanner.plan(kind: .cutting, person: person, currentPercent: 25, targetPercent: 15, start: Self.start))
        // Lean mass 67.5 kg; at 15 % it weighs 67.5 / 0.85 = 79.41 kg: 10.59 kg to lose, 0.4545 kg a week → 24 weeks.
        #expect(plan.leanMassKg == 67.5 && plan.targetWeightKg == 79.4 && plan.weeks == 24)
        #expect(plan.endsAt == Self.start + 24 * 7 * 86_400 && plan.weeklyChangeKg == -0.45)
        // BMR 900 + 1125 − 175 + 5 = 1,855; × 1.55 = 2,875.25; − 500 = 2,375 kcal.
        #expect(plan.bmrKcal == 1_855 && plan.maintenanceKcal == 2_875 && plan.dailyCalories == 2_375 && plan.dailyCalorieChange == -500)
        // Macros: protein 2 g/kg = 180 g; fat 25 % = 593.8 kcal = 66 g; carbs (2375.25 − 720 − 593.8) / 4 = 265 g.
        #expect(plan.proteinG == 180 && plan.fatsG == 66 && plan.carbsG == 265)
        #expect(plan.proteinG * 4 + plan.carbsG * 4 + plan.fatsG * 9 - plan.dailyCalories < 10)
        #expect(plan.milestones.count == 24 && plan.milestones.map(\.week) == Array(1...24))
        #expect(plan.milestones.first?.weightKg == 89.5 && plan.milestones.first?.at == Self.start + 7 * 86_400)
        #expect(plan.milestones.last?.bodyFatPercent == 15 && plan.milestones.last?.weightKg == 79.4)
        // Body fat falls every week.
        #expect(zip(plan.milestones, plan.milestones.dropFirst()).allSatisfy { $0.bodyFatPercent > $1.bodyFatPercent })
        #expect(plan.training == TrainingPlanView(focus: "fat_loss", strengthSessionsPerWeek: 3, cardioMinutesPerWeek: 150))
    }

    @Test("The calorie floor: a small sedentary woman is never told to eat under 1,200 kcal")
    func calorieFloor() throws {
        let person = GoalPlanner.Person(sex: .female, weightKg: 50, heightCm: 150, age: 60, activity: "sedentary")
        let plan = try #require(GoalPlanner.plan(kind: .cutting, person: person, currentPercent: 30, targetPercent: 25, start: Self.start))
        // BMR 500 + 937.5 − 300 − 161 = 976.5; × 1.2 = 1,171.8: under the floor already, so no deficit and no timeline.
        #expect(plan.dailyCalories == 1_200 && plan.weeks == nil && plan.milestones.isEmpty && plan.endsAt == nil)
    }

    @Test("Bulking 12 % → 18 % (US6 #1): a 250 kcal surplus, half of the gain fat")
    func bulkingPlan() throws {
        let person = GoalPlanner.Person(sex: .male, weightKg: 70, heightCm: 175, age: 30, activity: "active")
        let plan = try #require(GoalPlanner.plan(kind: .bulking, person: person, currentPercent: 12, targetPercent: 18, start: Self.start))
        // Fat 8.4 kg; (8.4 + x/2) / (70 + x) = 0.18 → x = (12.6 − 8.4) / 0.32 = 13.125 kg; at 0.2273 kg a week, 58 weeks.
        #expect(plan.targetWeightKg == 83.1 && plan.weeks == 58 && plan.dailyCalorieChange == 250)
        #expect(plan.milestones.last?.bodyFatPercent == 18)
        #expect(plan.training.focus == "muscle_gain" && plan.training.strengthSessionsPerWeek == 4)
        // A ceiling at half the body or above is never reached by a half-fat gain: no timeline.
        let silly = try #require(GoalPlanner.plan(kind: .bulking, person: person, currentPercent: 40, targetPercent: 55, start: 0))
        #expect(silly.weeks == nil)
    }

    @Test("A far goal is capped at three years of milestones, past that no timeline")
    func longPlansAreBounded() throws {
        let person = GoalPlanner.Person(sex: .male, weightKg: 300, heightCm: 200, age: 40, activity: "sedentary")
        let plan = try #require(GoalPlanner.plan(kind: .cutting, person: person, currentPercent: 60, targetPercent: 10, start: Self.start))
        #expect(plan.weeks == nil && plan.milestones.isEmpty)
    }

    @Test("Behind schedule (US5 #4): more than 1 point short of the linear plan at the measurement's time")
    func behindSchedule() throws {
        let person = GoalPlanner.Person(sex: .male, weightKg: 90, heightCm: 180, age: 35, activity: "moderate")
        let plan = GoalPlanner.plan(kind: .cutting, person: person, currentPercent: 25, targetPercent: 15, start: Self.start)
        let goal = GoalView(id: "g", clientId: "c", kind: "cutting", sex: "male", targetPercent: 15, startPercent: 25,
                            status: "active", createdAt: Self.start, completedAt: nil, plan: plan)
        let week = Int64(7 * 86_400)
        // After 12 of 24 weeks the plan expects 20 %: 21.0 is exactly 1 point behind (not more), 21.5 is behind by 1.5.
        #expect(GoalPlanner.expected(goal: goal, now: Self.start + 12 * week) == 20)
        #expect(GoalPlanner.behind(goal: goal, measuredPercent: 21.0, now: Self.start + 12 * week) == nil)
        #expect(GoalPlanner.behind(goal: goal, measuredPercent: 21.5, now: Self.start + 12 * week) == 1.5)
        #expect(GoalPlanner.behind(goal: goal, measuredPercent: 18, now: Self.start + 12 * week) == nil)  // ahead
        // Past the end the target is expected; before the start, the start.
        #expect(GoalPlanner.expected(goal: goal, now: Self.start + 100 * week) == 15)
        #expect(GoalPlanner.expected(goal: goal, now: 0) == 25)
        var planless = goal
        planless.plan = nil
        #expect(GoalPlanner.behind(goal: planless, measuredPercent: 40, now: Self.start + 12 * week) == nil)
    }

    @Test("The daily score: answers to 0–4 points each, out of 12, in percent; sick halves it")
    func dailyScore() {
        #expect(DailyScore.overall(mood: 5, soreness: 1, stress: 1, sick: false) == 100)
        #expect(DailyScore.overall(mood: 1, soreness: 5, stress: 5, sick: false) == 0)
        #expect(DailyScore.overall(mood: 3, soreness: 3, stress: 3, sick: false) == 50)
        // 3 + 3 + 2 = 8 of 12 = 66.67 → 67; sick: 33.
        #expect(DailyScore.overall(mood: 4, soreness: 2, stress: 3, sick: false) == 67)
        #expect(DailyScore.overall(mood: 4, soreness: 2, stress: 3, sick: true) == 33)
        #expect(DailyScore.overall(mood: 5, soreness: 1, stress: 1, sick: true) == 50)
        // 1 of 12 = 8.33 → 8; 11 of 12 = 91.67 → 92.
        #expect(DailyScore.overall(mood: 2, soreness: 5, stress: 5, sick: false) == 8)
        #expect(DailyScore.overall(mood: 5, soreness: 2, stress: 1, sick: false) == 92)
        for (mood, soreness, stress) in [(0, 3, 3), (6, 3, 3), (3, 0, 3), (3, 3, 6), (Int.min, 3, 3), (3, Int.max, 3)] {
            #expect(DailyScore.overall(mood: mood, soreness: soreness, stress: stress, sick: false) == nil)
        }
    }

    @Test("Daily check-ins stay in day order: a day again replaces it, an earlier day (a change of zone) goes in its place")
    func dailyCheckInLogKeepsDayOrder() {
        func view(_ id: String, _ day: String, score: Int = 50) -> DailyCheckInView {
            DailyCheckInView(id: id, clientId: "c", day: day, mood: 3, soreness: 3, stress: 3, sick: false, notes: nil,
                             overallScore: score, createdAt: 0, updatedAt: 0)
        }
        var log = DailyCheckInLog()
        for (id, day) in [("a", "2027-03-13"), ("b", "2027-03-15"), ("c", "2027-03-14"), ("d", "2027-03-16")] { log.apply(view(id, day)) }
        log.apply(view("b", "2027-03-15", score: 90))  // the same day again, not the newest
        log.apply(view("d", "2027-03-16", score: 10))  // the newest again
        let page = log.page(of: "c", before: nil, limit: 10)
        #expect(page.items.map(\.id) == ["d", "b", "c", "a"] && !page.more)
        #expect(page.items.map(\.overallScore) == [10, 90, 50, 50])
        #expect(log.latest(of: "c")?.id == "d" && log.checkIn(of: "c", day: "2027-03-14")?.id == "c")
        let older = log.page(of: "c", before: "2027-03-15", limit: 1)
        #expect(older.items.map(\.id) == ["c"] && older.more)
        #expect(log.page(of: "nobody", before: nil, limit: 5).items.isEmpty)
        log.forget(clientID: "c")
        #expect(log.latest(of: "c") == nil)
    }

    @Test("A daily check-in's hand-written JSON is JSONEncoder's, notes or not, Arabic and control characters too")
    func dailyCheckInJSONText() {
        for notes in [nil, "Head cold", "صداع خفيف \"quoted\" \u{1} tab\t"] as [String?] {
            let view = DailyCheckInView(id: "id-1", clientId: "c", day: "2027-03-14", mood: 5, soreness: 1, stress: 2, sick: true,
                                        notes: notes, overallScore: 46, createdAt: 1_805_000_460, updatedAt: Int64(Int32.max) * 4)
            #expect(view.jsonText == JSONText.encoder.encodeToString(view))
        }
    }
}
