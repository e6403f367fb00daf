import Foundation
import Testing
import SpotterProtocol
@testable import SpotterCore

/// Valid answers with one or more overridden (`$0.goal = nil`); `today` is 2025-06-15.
@dynamicMemberLookup
struct Answers {
    var request = OnboardingRequest(dateOfBirth: "1990-04-20", gender: "female", heightCm: 165, weightKg: 60.5,
                                    goal: "Lose 10kg", experienceLevel: "beginner", dietaryRestrictions: ["Vegetarian"],
                                    medicalConditions: [])
    var today = "2025-06-15"

    subscript<Value>(dynamicMember field: WritableKeyPath<OnboardingRequest, Value>) -> Value {
        get { request[keyPath: field] }
        set { request[keyPath: field] = newValue }
    }

    func validate() throws(APIError) -> Onboarding { try Onboarding.validate(request, today: today) }

    func error() -> APIError? { thrownAPIError { () throws(APIError) in try validate() } }

    func with(_ change: (inout Answers) -> Void) -> Answers {
        var copy = self
        change(&copy)
        return copy
    }
}

@Suite("Onboarding")
struct RulesOnboardingTests {
    let base = Answers()

    @Test("valid answers produce the cleaned value")
    func valid() throws {
        let answers = base.with {
            $0.gender = " Male "
            $0.goal = "  Build muscle \n"
            $0.experienceLevel = "ADVANCED"
            $0.dietaryRestrictions = ["  Gluten-free ", "", "   ", "No dairy"]
            $0.medicalConditions = nil
        }
        let onboarding = try answers.validate()
        #expect(onboarding == Onboarding(dateOfBirth: "1990-04-20", gender: .male, heightCm: 165, weightKg: 60.5,
                                         goal: "Build muscle", experienceLevel: .advanced,
                                         dietaryRestrictions: ["Gluten-free", "No dairy"], medicalConditions: []))
    }

    @Test("height bounds", arguments: [(99.9, false), (100, true), (250, true), (250.1, false), (-1, false),
                                       (Double.nan, false), (Double.infinity, false)])
    func height(_ value: Double, _ ok: Bool) {
        let error = base.with { $0.heightCm = value }.error()
        #expect(error == (ok ? nil : APIError(.outOfRange, field: "height_cm")), "\(value)")
    }

    @Test("weight bounds", arguments: [(29.9, false), (30, true), (300, true), (300.1, false), (0, false),
                                       (Double.nan, false)])
    func weight(_ value: Double, _ ok: Bool) {
        let error = base.with { $0.weightKg = value }.error()
        #expect(error == (ok ? nil : APIError(.outOfRange, field: "weight_kg")), "\(value)")
    }

    @Test("age bounds on exact birthdays", arguments: [
        ("2012-06-15", true),    // 13 today
        ("2012-06-16", false),   // 13 tomorrow: still 12
        ("1905-06-15", true),    // 120 today
        ("1904-06-15", false),   // 121 today
        ("1904-06-16", true),    // 121 tomorrow: still 120
        ("2025-06-15", false),   // born today
        ("2030-01-01", false),   // in the future
    ])
    func ageBounds(_ birth: String, _ ok: Bool) {
        let error = base.with { $0.dateOfBirth = birth }.error()
        #expect(error == (ok ? nil : APIError(.outOfRange, field: "date_of_birth")), "\(birth)")
    }

    @Test("impossible or malformed dates are bad requests", arguments: [
        "2023-02-30", "2023-02-29", "2000-13-01", "2000-00-10", "2000-04-31", "2000-01-00", "0000-01-01",
        "1990-4-20", "20-04-1990", "1990/04/20", "1990-04-20T00:00", " 1990-04-20", "", "abcd-ef-gh", "١٩٩٠-٠٤-٢٠",
        "+990-04-20",
    ])
    func badDates(_ birth: String) {
        #expect(base.with { $0.dateOfBirth = birth }.error() == APIError(.badRequest, field: "date_of_birth"), "\(birth)")
    }

    @Test("29 February in a leap year is a real date")
    func leapDay() throws {
        #expect(try base.with { $0.dateOfBirth = "2000-02-29" }.validate().dateOfBirth == "2000-02-29")
        #expect(base.with { $0.dateOfBirth = "1900-02-29" }.error() == APIError(.badRequest, field: "date_of_birth"))
    }

    @Test("missing fields name the field, in form order")
    func missing() {
        #expect(base.with { $0.dateOfBirth = nil }.error() == APIError(.missingField, field: "date_of_birth"))
        #expect(base.with { $0.gender = nil }.error() == APIError(.missingField, field: "gender"))
        #expect(base.with { $0.gender = "  " }.error() == APIError(.missingField, field: "gender"))
        #expect(base.with { $0.heightCm = nil }.error() == APIError(.missingField, field: "height_cm"))
        #expect(base.with { $0.weightKg = nil }.error() == APIError(.missingField, field: "weight_kg"))
        #expect(base.with { $0.goal = nil }.error() == APIError(.missingField, field: "goal"))
        #expect(base.with { $0.goal = " \n " }.error() == APIError(.missingField, field: "goal"))
        #expect(base.with { $0.experienceLevel = nil }.error() == APIError(.missingField, field: "experience_level"))
        let allMissing = Answers(request: OnboardingRequest(dateOfBirth: nil, gender: nil, heightCm: nil, weightKg: nil,
                                                            goal: nil, experienceLevel: nil, dietaryRestrictions: nil,
                                                            medicalConditions: nil))
        #expect(allMissing.error() == APIError(.missingField, field: "date_of_birth"))
        #expect(allMissing.with { $0.dateOfBirth = "1990-01-01" }.error() == APIError(.missingField, field: "gender"))
    }

    @Test("lists are optional")
    func optionalLists() throws {
        let onboarding = try base.with { $0.dietaryRestrictions = nil; $0.medicalConditions = nil }.validate()
        #expect(onboarding.dietaryRestrictions.isEmpty)
        #expect(onboarding.medicalConditions.isEmpty)
    }

    @Test("unknown enum values are bad requests")
    func unknownEnums() {
        #expect(base.with { $0.gender = "unknown" }.error() == APIError(.badRequest, field: "gender"))
        #expect(base.with { $0.experienceLevel = "expert" }.error() == APIError(.badRequest, field: "experience_level"))
        for gender in Gender.allCases {
            #expect(base.with { $0.gender = gender.rawValue }.error() == nil)
        }
        for level in ExperienceLevel.allCases {
            #expect(base.with { $0.experienceLevel = level.rawValue }.error() == nil)
        }
    }

    @Test("goal length: 200 characters ok, 201 out of range")
    func goalLength() throws {
        let goal200 = String(repeating: "ه", count: 200)
        #expect(try base.with { $0.goal = " " + goal200 + " " }.validate().goal == goal200)
        #expect(base.with { $0.goal = goal200 + "x" }.error() == APIError(.outOfRange, field: "goal"))
    }

    @Test("list limits: 20 entries and 100 characters each, after dropping blanks")
    func listLimits() throws {
        let twenty = (1...20).map { "item \($0)" }
        let padded = twenty + ["", "  ", "\n"]
        let onboarding = try base.with { $0.dietaryRestrictions = padded; $0.medicalConditions = twenty }.validate()
        #expect(onboarding.dietaryRestrictions == twenty)
        #expect(onboarding.medicalConditions == twenty)
        #expect(base.with { $0.dietaryRestrictions = twenty + ["x"] }.error()
                == APIError(.outOfRange, field: "dietary_restrictions"))
        #expect(base.with { $0.medicalConditions = twenty + ["x"] }.error()
                == APIError(.outOfRange, field: "medical_conditions"))
        let entry100 = String(repeating: "a", count: 100)
        #expect(try base.with { $0.medicalConditions = [" \(entry100) "] }.validate().medicalConditions == [entry100])
        #expect(base.with { $0.medicalConditions = [entry100 + "a"] }.error()
                == APIError(.outOfRange, field: "medical_conditions"))
        #expect(base.with { $0.dietaryRestrictions = [entry100 + "a"] }.error()
                == APIError(.outOfRange, field: "dietary_restrictions"))
    }

    @Test("an unparseable today is a server error")
    func badToday() {
        #expect(base.with { $0.today = "yesterday" }.error() == APIError(.internalError))
    }

    @Test("age counts whole years across birthdays", arguments: [
        ("2000-06-15", "2025-06-14", 24), ("2000-06-15", "2025-06-15", 25), ("2000-06-15", "2025-06-16", 25),
        ("2000-12-31", "2001-01-01", 0), ("2000-01-01", "2000-12-31", 0), ("2000-01-01", "2001-01-01", 1),
        ("2000-02-29", "2001-02-28", 0), ("2000-02-29", "2001-03-01", 1), ("2000-02-29", "2004-02-28", 3),
        ("2000-02-29", "2004-02-29", 4), ("1999-03-01", "2000-02-29", 0), ("1999-02-28", "2000-02-29", 1),
        ("2025-06-16", "2025-06-15", -1), ("1905-06-15", "2025-06-15", 120),
    ])
    func age(_ birth: String, _ today: String, _ expected: Int) {
        #expect(Onboarding.age(dateOfBirth: birth, today: today) == expected, "\(birth) → \(today)")
    }

    @Test("age is nil for non-dates")
    func ageNil() {
        #expect(Onboarding.age(dateOfBirth: "2023-02-30", today: "2025-01-01") == nil)
        #expect(Onboarding.age(dateOfBirth: "2000-01-01", today: "2025-02-29") == nil)
        #expect(Onboarding.age(dateOfBirth: "", today: "") == nil)
    }

    @Test("wire spellings of the enums")
    func enumSpellings() {
        #expect(Gender.allCases.map(\.rawValue) == ["male", "female", "other"])
        #expect(ExperienceLevel.allCases.map(\.rawValue) == ["beginner", "intermediate", "advanced"])
    }

    @Test("round-trips through Codable")
    func codable() throws {
        let onboarding = try base.validate()
        let data = try JSONEncoder().encode(onboarding)
        #expect(try JSONDecoder().decode(Onboarding.self, from: data) == onboarding)
    }
}
