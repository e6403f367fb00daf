import FoundationEssentials
import SpotterProtocol

/// Goals as plans: who the plan is for (`GoalPlanner.Person`) from the command and the record, and the
/// behind-schedule change a measurement makes.
extension CoachingBook {
    public static let planWeightsKg = 20.0...400.0
    public static let planHeightsCm = 100.0...250.0
    public static let planAges = 13...100

    /// The person a goal's plan is for: the command's weight, height and age, else the newest check-in's weight and
    /// the newest measurement's height and age. Nil when one of them is not known (the goal has no plan).
    func planPerson(_ command: GoalSetCommand, clientID: String, sex: BodyComposition.Sex) throws(RecordError) -> GoalPlanner.Person? {
        if let weight = command.weightKg, !(weight.isFinite && Self.planWeightsKg.contains(weight)) { throw .outOfRange("weight_kg") }
        if let height = command.heightCm, !(height.isFinite && Self.planHeightsCm.contains(height)) { throw .outOfRange("height_cm") }
        if let age = command.age, !Self.planAges.contains(age) { throw .outOfRange("age") }
        let activity = command.activity ?? GoalPlanner.defaultActivity
        guard GoalPlanner.activityFactors[activity] != nil else { throw .badValue("activity") }
        let measurements = measurements(of: clientID)
        guard let weight = command.weightKg ?? latestWeight(of: clientID),
              let height = command.heightCm ?? measurements.lazy.compactMap(\.heightCm).first,
              let age = command.age ?? measurements.lazy.compactMap(\.age).first else { return nil }
        return GoalPlanner.Person(sex: sex, weightKg: weight, heightCm: height, age: age, activity: activity)
    }

    /// After a measurement that leaves an active goal's status as it was: `goal.behind_schedule` when it is more than
    /// a point behind the plan, `goal.on_track` when it was behind and is no longer; nil when nothing changes.
    static func schedule(of goal: GoalView, measuredPercent: Double, now: Int64) -> RecordBody? {
        let behind = GoalPlanner.behind(goal: goal, measuredPercent: measuredPercent, now: now)
        guard behind != goal.behindByPercent else { return nil }
        var changed = goal
        changed.behindByPercent = behind
        if behind == nil && goal.behindByPercent == nil { return nil }
        return RecordBody(change: behind == nil ? "goal.on_track" : "goal.behind_schedule", goal: changed)
    }
}
