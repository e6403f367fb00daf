import SpotterProtocol

/// A client's gender, as asked during onboarding (seed 000 "First Intake").
public enum Gender: String, Sendable, Codable, CaseIterable { case male, female, other }

/// Training experience, as asked during onboarding.
public enum ExperienceLevel: String, Sendable, Codable, CaseIterable { case beginner, intermediate, advanced }

/// A client's onboarding answers, validated.
///
/// Ranges (seed 000 §2 "Second Intake"): age 13…120 from the date of birth, height 100…250 cm,
/// weight 30…300 kg (bounds inclusive); goal 1…200 characters after trimming; at most 20 dietary
/// restrictions and 20 medical conditions, each 1…100 characters after trimming (empty entries dropped).
/// A value of this type only ever comes out of `validate`, so it always satisfies these ranges.
public struct Onboarding: Sendable, Equatable, Codable {
    public static let ageRange = 13...120
    public static let heightRangeCm = 100.0...250.0
    public static let weightRangeKg = 30.0...300.0
    public static let maxGoalCharacters = 200
    public static let maxListEntries = 20
    public static let maxListEntryCharacters = 100

    /// "YYYY-MM-DD", a real calendar date.
    public var dateOfBirth: String
    public var gender: Gender
    public var heightCm: Double
    public var weightKg: Double
    /// Trimmed, 1…200 characters.
    public var goal: String
    public var experienceLevel: ExperienceLevel
    /// Trimmed entries, none empty, at most 20.
    public var dietaryRestrictions: [String]
    /// Trimmed entries, none empty, at most 20.
    public var medicalConditions: [String]
    /// Seed 000 steps 4–7 (see `FitnessProfile`): optional, nil when not answered.
    public var workoutLocation: WorkoutLocation? = nil
    /// Days a week, 2…6, nil when not answered.
    public var workoutFrequency: Int? = nil
    /// Cleaned injuries, none when not answered.
    public var injuries: [String] = []

    /// The fitness score of these answers (`FitnessProfile.score`), nil without a frequency.
    public var fitnessScore: Int? {
        FitnessProfile.score(experience: experienceLevel, frequency: workoutFrequency, injuryCount: injuries.count)
    }

    /// Validates the answers as sent; `today` is "YYYY-MM-DD" (the server's current date).
    ///
    /// Fields are checked in this order, and the first problem is thrown with its snake_case field:
    /// - absent (or, for text, blank) required field → `.missingField`: "date_of_birth", "gender",
    ///   "height_cm", "weight_kg", "goal", "experience_level";
    /// - not a real "YYYY-MM-DD" date, or an unknown gender / experience level → `.badRequest`;
    /// - age, height, weight, goal length, list size or entry length outside its range → `.outOfRange`.
    /// `dietaryRestrictions` and `medicalConditions` are optional: nil means none.
    /// Then the optional fields of seed 000 steps 4–7, as `FitnessProfile` checks them: "workout_location",
    /// "workout_frequency", "injuries".
    /// An unparseable `today` is a server bug and throws `.internalError`.
    public static func validate(_ answers: OnboardingRequest, today: String) throws(APIError) -> Onboarding {
        guard let dateOfBirth = answers.dateOfBirth else { throw APIError(.missingField, field: "date_of_birth") }
        guard CalendarDate(dateOfBirth) != nil else { throw APIError(.badRequest, field: "date_of_birth") }
        guard CalendarDate(today) != nil, let age = age(dateOfBirth: dateOfBirth, today: today) else {
            throw APIError(.internalError)
        }
        guard ageRange.contains(age) else { throw APIError(.outOfRange, field: "date_of_birth") }

        guard let genderText = answers.gender?.spotterTrimmed(), !genderText.isEmpty else {
            throw APIError(.missingField, field: "gender")
        }
        guard let parsedGender = Gender(rawValue: genderText.lowercased()) else {
            throw APIError(.badRequest, field: "gender")
        }

        guard let heightCm = answers.heightCm else { throw APIError(.missingField, field: "height_cm") }
        guard heightRangeCm.contains(heightCm) else { throw APIError(.outOfRange, field: "height_cm") }
        guard let weightKg = answers.weightKg else { throw APIError(.missingField, field: "weight_kg") }
        guard weightRangeKg.contains(weightKg) else { throw APIError(.outOfRange, field: "weight_kg") }

        guard let goalText = answers.goal?.spotterTrimmed(), !goalText.isEmpty else {
            throw APIError(.missingField, field: "goal")
        }
        guard TextBounds.fits(goalText, maxCharacters: maxGoalCharacters) else { throw APIError(.outOfRange, field: "goal") }

        guard let levelText = answers.experienceLevel?.spotterTrimmed(), !levelText.isEmpty else {
            throw APIError(.missingField, field: "experience_level")
        }
        guard let level = ExperienceLevel(rawValue: levelText.lowercased()) else {
            throw APIError(.badRequest, field: "experience_level")
        }

        let diet = try cleanList(answers.dietaryRestrictions, field: "dietary_restrictions")
        let medical = try cleanList(answers.medicalConditions, field: "medical_conditions")
        let location = try FitnessProfile.location(answers.workoutLocation)
        let frequency = try FitnessProfile.frequency(answers.workoutFrequency)
        let injuries = try FitnessProfile.injuries(answers.injuries)
        return Onboarding(dateOfBirth: dateOfBirth, gender: parsedGender, heightCm: heightCm, weightKg: weightKg,
                          goal: goalText, experienceLevel: level, dietaryRestrictions: diet,
                          medicalConditions: medical, workoutLocation: location, workoutFrequency: frequency,
                          injuries: injuries)
    }

    /// Whole years between a "YYYY-MM-DD" birth date and `today`: the birthday counts from its day on;
    /// someone born on 29 February turns a year older on 1 March in common years. Negative when the
    /// birth date is after `today`. nil if either is not a real calendar date.
    public static func age(dateOfBirth: String, today: String) -> Int? {
        guard let birth = CalendarDate(dateOfBirth), let now = CalendarDate(today) else { return nil }
        var years = now.year - birth.year
        if (now.month, now.day) < (birth.month, birth.day) { years -= 1 }
        return years
    }

    /// Trims entries, drops empty ones, and enforces the count and length limits.
    private static func cleanList(_ raw: [String]?, field: String) throws(APIError) -> [String] {
        var cleaned: [String] = []
        for entry in raw ?? [] {
            let text = entry.spotterTrimmed()
            if text.isEmpty { continue }
            guard TextBounds.fits(text, maxCharacters: maxListEntryCharacters) else { throw APIError(.outOfRange, field: field) }
            cleaned.append(text)
        }
        guard cleaned.count <= maxListEntries else { throw APIError(.outOfRange, field: field) }
        return cleaned
    }
}

extension ClientProfileView {
    /// The profile that validated answers make for `clientID` (no age: the server adds it as it answers).
    public init(clientID: String, answers: Onboarding) {
        self.init(clientId: clientID, dateOfBirth: answers.dateOfBirth, age: nil, gender: answers.gender.rawValue,
                  heightCm: answers.heightCm, weightKg: answers.weightKg, goal: answers.goal,
                  experienceLevel: answers.experienceLevel.rawValue, dietaryRestrictions: answers.dietaryRestrictions,
                  medicalConditions: answers.medicalConditions, workoutLocation: answers.workoutLocation?.rawValue,
                  workoutFrequency: answers.workoutFrequency, injuries: answers.injuries,
                  fitnessScore: answers.fitnessScore)
    }
}

/// A strictly parsed proleptic Gregorian "YYYY-MM-DD" date (years 0001…9999).
struct CalendarDate: Equatable {
    let year: Int
    let month: Int
    let day: Int

    /// nil unless `text` is exactly ten ASCII characters "YYYY-MM-DD" naming a day that exists.
    init?(_ text: String) {
        let bytes = Array(text.utf8)
        guard bytes.count == 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-") else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for byte in bytes[range] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
              year >= 1, (1...12).contains(month),
              day >= 1, day <= CalendarDate.daysIn(month: month, year: year) else { return nil }
        self.year = year
        self.month = month
        self.day = day
    }

    static func isLeap(_ year: Int) -> Bool {
        (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }
}
