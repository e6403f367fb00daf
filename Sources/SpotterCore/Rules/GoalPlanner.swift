import FoundationEssentials
import SpotterProtocol

/// A body-fat goal as a plan (seed 004 US3 "estimated timeline, weekly milestones, and recommended daily calories
/// with deficit", US7 and FR-021/022 "daily calorie target and macronutrient breakdown", US5 "behind schedule").
/// The seed names what to show, not how to compute it; Spotter's formulas (Protocol/README "Goals as plans"):
///
/// - BMR by Mifflin–St Jeor (1990): 10 × kg + 6.25 × cm − 5 × years + 5 (men) or − 161 (women);
/// - maintenance = BMR × the activity factor (1.2 sedentary, 1.375 light, 1.55 moderate, 1.725 active, 1.9 very
///   active — the Harris–Benedict multipliers);
/// - cutting: 500 kcal a day under maintenance, never under 1,500 kcal (men) or 1,200 kcal (women); bulking: 250
///   kcal a day over it;
/// - 7,700 kcal per kg of body weight (the 3,500 kcal per pound rule): a 500 kcal daily deficit is
///   500 × 7 / 7,700 ≈ 0.45 kg a week;
/// - cutting keeps the lean mass: the target weight is lean mass / (1 − target %); bulking gains half fat, half lean
///   (a lean bulk), so the ceiling is reached at weight W + x with (fat + x/2) / (W + x) = ceiling;
/// - macros: protein 2.0 g per kg of body weight, fat 25 % of the calories (9 kcal/g), carbohydrates the rest
///   (4 kcal/g);
/// - training: cutting 3 strength sessions and 150 cardio minutes a week (the WHO's weekly minimum of moderate
///   activity), bulking 4 strength sessions and 60 cardio minutes;
/// - behind schedule: a measurement more than 1 body-fat point short of where the plan expected it by then
///   (linear from the start to the target over the plan's weeks).
public enum GoalPlanner {
    public static let activityFactors: [String: Double] = [
        "sedentary": 1.2, "light": 1.375, "moderate": 1.55, "active": 1.725, "very_active": 1.9,
    ]
    public static let defaultActivity = "light"
    public static let kcalPerKg = 7_700.0
    public static let cuttingDeficit = 500.0
    public static let bulkingSurplus = 250.0
    public static let proteinPerKg = 2.0
    public static let fatShare = 0.25
    public static let bulkFatShare = 0.5
    public static let behindThreshold = 1.0
    /// A plan lists at most this many weekly milestones (three years).
    public static let maxWeeks = 156
    public static let week: Int64 = 7 * 86_400

    public static func calorieFloor(_ sex: BodyComposition.Sex) -> Double { sex == .male ? 1_500 : 1_200 }

    /// Mifflin–St Jeor basal metabolic rate, kcal a day.
    public static func bmr(sex: BodyComposition.Sex, weightKg: Double, heightCm: Double, age: Int) -> Double {
        10 * weightKg + 6.25 * heightCm - 5 * Double(age) + (sex == .male ? 5 : -161)
    }

    /// Kilograms a week from a daily calorie difference.
    public static func weeklyChange(dailyKcal: Double) -> Double { dailyKcal * 7 / kcalPerKg }

    public struct Person: Sendable, Equatable {
        public var sex: BodyComposition.Sex
        public var weightKg: Double
        public var heightCm: Double
        public var age: Int
        public var activity: String
        public init(sex: BodyComposition.Sex, weightKg: Double, heightCm: Double, age: Int, activity: String) {
            self.sex = sex
            self.weightKg = weightKg
            self.heightCm = heightCm
            self.age = age
            self.activity = activity
        }
    }

    /// The plan of a goal set at `start` for `person` at `currentPercent` body fat. Nil for an unknown activity.
    public static func plan(kind: BodyComposition.GoalKind, person: Person, currentPercent: Double, targetPercent: Double,
                            start: Int64) -> GoalPlanView? {
        guard let factor = activityFactors[person.activity] else { return nil }
        let weight = person.weightKg
        let basal = bmr(sex: person.sex, weightKg: weight, heightCm: person.heightCm, age: person.age)
        let maintenance = basal * factor
        let lean = weight * (1 - currentPercent / 100)
        let fat = weight - lean
        let calories: Double, targetWeight: Double
        switch kind {
        case .cutting:
            calories = max(maintenance - cuttingDeficit, calorieFloor(person.sex))
            targetWeight = lean / (1 - targetPercent / 100)
        case .bulking:
            calories = maintenance + bulkingSurplus
            let ceiling = targetPercent / 100
            targetWeight = ceiling < bulkFatShare ? weight + (ceiling * weight - fat) / (bulkFatShare - ceiling) : weight
        }
        let rate = weeklyChange(dailyKcal: calories - maintenance)  // kg a week, negative when losing
        let change = targetWeight - weight
        var weeks: Int?
        if rate != 0, change != 0, (rate < 0) == (change < 0) {
            let needed = (change / rate).rounded(.up)
            if needed.isFinite, needed <= Double(maxWeeks) { weeks = max(1, Int(needed)) }
        }
        var milestones: [MilestoneView] = []
        for index in 0..<(weeks ?? 0) {
            let number = index + 1
            let last = number == weeks
            let weightThen = last ? targetWeight : weight + rate * Double(number)
            let fatThen: Double
            switch kind {
            case .cutting: fatThen = last ? targetPercent : (weightThen - lean) / weightThen * 100
            case .bulking: fatThen = last ? targetPercent : (fat + (weightThen - weight) * bulkFatShare) / weightThen * 100
            }
            milestones.append(MilestoneView(week: number, at: start + Int64(number) * week, weightKg: round(weightThen, 1),
                                            bodyFatPercent: round(fatThen, 1)))
        }
        let protein = proteinPerKg * weight
        let fats = calories * fatShare / 9
        let carbs = max(0, (calories - protein * 4 - fats * 9) / 4)
        let training = kind == .cutting
            ? TrainingPlanView(focus: "fat_loss", strengthSessionsPerWeek: 3, cardioMinutesPerWeek: 150)
            : TrainingPlanView(focus: "muscle_gain", strengthSessionsPerWeek: 4, cardioMinutesPerWeek: 60)
        return GoalPlanView(
            weightKg: round(weight, 1), heightCm: round(person.heightCm, 1), age: person.age, activity: person.activity,
            bmrKcal: Int(basal.rounded()), maintenanceKcal: Int(maintenance.rounded()), dailyCalories: Int(calories.rounded()),
            dailyCalorieChange: Int(calories.rounded()) - Int(maintenance.rounded()),
            proteinG: Int(protein.rounded()), carbsG: Int(carbs.rounded()), fatsG: Int(fats.rounded()),
            leanMassKg: round(lean, 1), targetWeightKg: round(targetWeight, 1), weeklyChangeKg: round(rate, 2),
            weeks: weeks, endsAt: weeks.map { start + Int64($0) * week }, milestones: milestones, training: training)
    }

    /// Where the plan expected the body fat at `now`: linear from `startPercent` to the target over its weeks
    /// (nil without a timeline).
    public static func expected(goal: GoalView, now: Int64) -> Double? {
        guard let plan = goal.plan, let weeks = plan.weeks, weeks > 0 else { return nil }
        let elapsed = Double(max(0, now - goal.createdAt)) / Double(week)
        let share = min(1, elapsed / Double(weeks))
        return goal.startPercent + (goal.targetPercent - goal.startPercent) * share
    }

    /// Body-fat points behind the plan (in the goal's direction) when more than `behindThreshold`, else nil.
    public static func behind(goal: GoalView, measuredPercent: Double, now: Int64) -> Double? {
        guard let expected = expected(goal: goal, now: now) else { return nil }
        let gap = goal.kind == BodyComposition.GoalKind.cutting.rawValue ? measuredPercent - expected : expected - measuredPercent
        return gap > behindThreshold ? round(gap, 1) : nil
    }

    static func round(_ value: Double, _ places: Int) -> Double {
        let scale = places == 1 ? 10.0 : 100.0
        return (value * scale).rounded() / scale
    }
}
