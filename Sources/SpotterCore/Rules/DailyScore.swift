/// The daily check-in's overall score (seed 001 "Overall Score System": the user's answers aggregated into one
/// daily score). The seed gives no formula; Spotter's (Protocol/README "The daily check-in"):
///
/// - each answer on its 1–5 scale becomes 0–4 "good" points: mood − 1, 5 − soreness, 5 − stress;
/// - the score is their sum out of 12, in percent, rounded half up: 100 is a great mood with no soreness and no
///   stress, 0 the opposite, 50 every answer in the middle;
/// - a sick (or skipping) day halves it, rounded down: a bad day is shown as one whatever the other answers.
///
/// Apple Health figures (HRV, sleep) are the app's to add on the device; the server scores what it is told.
public enum DailyScore {
    public static let scale = 1...5

    /// The score 0–100, or nil when an answer is off its scale.
    public static func overall(mood: Int, soreness: Int, stress: Int, sick: Bool) -> Int? {
        guard scale.contains(mood), scale.contains(soreness), scale.contains(stress) else { return nil }
        let points = (mood - 1) + (5 - soreness) + (5 - stress)  // 0…12
        let percent = (points * 100 + 6) / 12                    // rounded half up
        return sick ? percent / 2 : percent
    }
}
