#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// A goal as a plan (seed 004 US3, US5, US7, FR-016, FR-021, FR-022): its timeline, weekly milestones, the daily
// calories and macros, and the training that goes with it. Computed by `GoalPlanner` (SpotterCore) when the goal
// is set; SI units (kg, cm, kcal, g).

/// The expected weight and body fat at the end of week `week` of the plan (`at`: that moment, Unix seconds).
public struct MilestoneView: Codable, Sendable, Equatable {
    public var week: Int
    public var at: Int64
    public var weightKg: Double
    public var bodyFatPercent: Double
    public init(week: Int, at: Int64, weightKg: Double, bodyFatPercent: Double) {
        self.week = week
        self.at = at
        self.weightKg = weightKg
        self.bodyFatPercent = bodyFatPercent
    }
    enum CodingKeys: String, CodingKey {
        case week, at
        case weightKg = "weight_kg"
        case bodyFatPercent = "body_fat_percent"
    }
}

/// Training for the goal's kind (FR-021): strength sessions and cardio minutes a week.
public struct TrainingPlanView: Codable, Sendable, Equatable {
    /// `fat_loss` (cutting) or `muscle_gain` (bulking).
    public var focus: String
    public var strengthSessionsPerWeek: Int
    public var cardioMinutesPerWeek: Int
    public init(focus: String, strengthSessionsPerWeek: Int, cardioMinutesPerWeek: Int) {
        self.focus = focus
        self.strengthSessionsPerWeek = strengthSessionsPerWeek
        self.cardioMinutesPerWeek = cardioMinutesPerWeek
    }
    enum CodingKeys: String, CodingKey {
        case focus
        case strengthSessionsPerWeek = "strength_sessions_per_week"
        case cardioMinutesPerWeek = "cardio_minutes_per_week"
    }
}

/// A goal's plan. `weeks` and `target_date`-like `ends_at` are absent when the goal cannot be reached at the
/// planned rate (e.g. the calorie floor leaves no deficit).
public struct GoalPlanView: Codable, Sendable, Equatable {
    public var weightKg: Double
    public var heightCm: Double
    public var age: Int
    /// `sedentary`, `light`, `moderate`, `active` or `very_active`.
    public var activity: String
    public var bmrKcal: Int
    public var maintenanceKcal: Int
    public var dailyCalories: Int
    /// `daily_calories` minus maintenance: negative for a deficit.
    public var dailyCalorieChange: Int
    public var proteinG: Int
    public var carbsG: Int
    public var fatsG: Int
    public var leanMassKg: Double
    public var targetWeightKg: Double
    public var weeklyChangeKg: Double
    public var weeks: Int?
    public var endsAt: Int64?
    public var milestones: [MilestoneView]
    public var training: TrainingPlanView
    public init(weightKg: Double, heightCm: Double, age: Int, activity: String, bmrKcal: Int, maintenanceKcal: Int,
                dailyCalories: Int, dailyCalorieChange: Int, proteinG: Int, carbsG: Int, fatsG: Int, leanMassKg: Double,
                targetWeightKg: Double, weeklyChangeKg: Double, weeks: Int?, endsAt: Int64?, milestones: [MilestoneView],
                training: TrainingPlanView) {
        self.weightKg = weightKg
        self.heightCm = heightCm
        self.age = age
        self.activity = activity
        self.bmrKcal = bmrKcal
        self.maintenanceKcal = maintenanceKcal
        self.dailyCalories = dailyCalories
        self.dailyCalorieChange = dailyCalorieChange
        self.proteinG = proteinG
        self.carbsG = carbsG
        self.fatsG = fatsG
        self.leanMassKg = leanMassKg
        self.targetWeightKg = targetWeightKg
        self.weeklyChangeKg = weeklyChangeKg
        self.weeks = weeks
        self.endsAt = endsAt
        self.milestones = milestones
        self.training = training
    }
    enum CodingKeys: String, CodingKey {
        case age, activity, weeks, milestones, training
        case weightKg = "weight_kg"
        case heightCm = "height_cm"
        case bmrKcal = "bmr_kcal"
        case maintenanceKcal = "maintenance_kcal"
        case dailyCalories = "daily_calories"
        case dailyCalorieChange = "daily_calorie_change"
        case proteinG = "protein_g"
        case carbsG = "carbs_g"
        case fatsG = "fats_g"
        case leanMassKg = "lean_mass_kg"
        case targetWeightKg = "target_weight_kg"
        case weeklyChangeKg = "weekly_change_kg"
        case endsAt = "ends_at"
    }
}
