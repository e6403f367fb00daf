import SpotterProtocol

/// Where a client trains (seed 000 step 4 "First Intake", question 3).
public enum WorkoutLocation: String, Sendable, Codable, CaseIterable { case home, gym }

/// The onboarding fields of seed 000 steps 4–7 beyond the first version of onboarding: the workout location,
/// the workout frequency, the injuries, and the fitness score they give.
///
/// All three answers are optional (the second intake is optional in the seed, and apps older than these fields
/// must still onboard): an absent location or frequency stays nil, absent injuries mean none.
public enum FitnessProfile {
    /// Days of training a week (seed 000 step 7, question 5), inclusive.
    public static let frequencyRange = 2...6
    /// At most this many injuries, each 1…`maxInjuryCharacters` characters after trimming.
    public static let maxInjuries = 20
    public static let maxInjuryCharacters = 100

    /// Parses a location: trimmed, case-insensitive, "home" or "gym". nil (absent or blank) stays nil; anything
    /// else throws `.badRequest` (field "workout_location").
    public static func location(_ raw: String?) throws(APIError) -> WorkoutLocation? {
        guard let text = raw?.spotterTrimmed(), !text.isEmpty else { return nil }
        guard let location = WorkoutLocation(rawValue: text.lowercased()) else {
            throw APIError(.badRequest, field: "workout_location")
        }
        return location
    }

    /// Checks a frequency: nil stays nil; outside 2…6 throws `.outOfRange` (field "workout_frequency").
    public static func frequency(_ raw: Int?) throws(APIError) -> Int? {
        guard let days = raw else { return nil }
        guard frequencyRange.contains(days) else { throw APIError(.outOfRange, field: "workout_frequency") }
        return days
    }

    /// Cleans the injury list: entries trimmed, blank ones and "none" (any case, the seed's "no injury" answer)
    /// dropped, repeats (ignoring case) kept once, first spelling wins. An entry with a control character throws
    /// `.badRequest`; more than 20 entries (counted before cleaning, so a huge list is refused whatever it holds)
    /// or an entry over 100 characters throws `.outOfRange`; both with field "injuries".
    public static func injuries(_ raw: [String]?) throws(APIError) -> [String] {
        let entries = raw ?? []
        guard entries.count <= maxInjuries else { throw APIError(.outOfRange, field: "injuries") }
        var cleaned: [String] = []
        var seen: Set<String> = []
        for entry in entries {
            guard !entry.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
                throw APIError(.badRequest, field: "injuries")
            }
            let text = entry.spotterTrimmed()
            guard TextBounds.fits(text, maxCharacters: maxInjuryCharacters) else { throw APIError(.outOfRange, field: "injuries") }
            let key = text.lowercased()
            if text.isEmpty || key == "none" || seen.contains(key) { continue }
            seen.insert(key)
            cleaned.append(text)
        }
        return cleaned
    }

    /// Points for the experience level, the base of the score.
    public static func experiencePoints(_ level: ExperienceLevel) -> Int {
        switch level {
        case .beginner: return 50
        case .intermediate: return 60
        case .advanced: return 70
        }
    }

    /// Points for each training day a week.
    public static let pointsPerWeeklyDay = 5
    /// Points taken off for each injury, and the most taken off for injuries in all.
    public static let pointsPerInjury = 5
    public static let maxInjuryPenalty = 25

    /// The fitness score, 0…100 (seed 000 FR-PROGRESS-06): from the experience level, the workout frequency and
    /// an injury adjustment, the three factors the seed names.
    ///
    /// The seed gives the factors and one worked example (beginner, 3 days a week, no injuries → 65) but no
    /// formula; this one meets the example: experience (beginner 50, intermediate 60, advanced 70) + 5 per
    /// weekly day − 5 per injury (at most 25 off), clamped to 0…100. So the range is 35 (beginner, 2 days,
    /// five or more injuries) … 100 (advanced, 6 days, none). Age, height and weight do not count (the seed
    /// does not name them as factors). nil without a frequency: the second intake was not answered.
    public static func score(experience: ExperienceLevel, frequency: Int?, injuryCount: Int) -> Int? {
        // A stored frequency is read back as it was saved (2…6 when it entered); clamped so no number in a row can
        // overflow the sum.
        guard let frequency else { return nil }
        let days = min(max(frequency, -1_000_000), 1_000_000)
        let penalty = min(min(max(injuryCount, 0), 1_000) * pointsPerInjury, maxInjuryPenalty)
        let raw = experiencePoints(experience) + days * pointsPerWeeklyDay - penalty
        return min(max(raw, 0), 100)
    }
}
