import Testing
import SpotterProtocol
@testable import SpotterCore

/// Seed 000 steps 4–7: location, frequency, injuries, and the fitness score.
@Suite("Onboarding fields and fitness score")
struct RulesFitnessProfileTests {
    let base = Answers()

    @Test("the seed's worked example: beginner, 3 days a week, no injuries → 65")
    func seedExample() throws {
        let answers = try base.with {
            $0.workoutFrequency = 3
            $0.injuries = ["none"]
        }.validate()
        #expect(answers.experienceLevel == .beginner)
        #expect(answers.injuries == [])
        #expect(answers.fitnessScore == 65)
        #expect(FitnessProfile.score(experience: .beginner, frequency: 3, injuryCount: 0) == 65)
    }

    @Test("the score's edges: 35 at the lowest, 100 at the highest, the injury penalty capped at 25")
    func scoreEdges() {
        #expect(FitnessProfile.score(experience: .beginner, frequency: 2, injuryCount: 5) == 35)
        #expect(FitnessProfile.score(experience: .beginner, frequency: 2, injuryCount: 20) == 35)
        #expect(FitnessProfile.score(experience: .advanced, frequency: 6, injuryCount: 0) == 100)
        #expect(FitnessProfile.score(experience: .intermediate, frequency: 4, injuryCount: 1) == 75)
        #expect(FitnessProfile.score(experience: .advanced, frequency: 6, injuryCount: 2) == 90)
        #expect(FitnessProfile.score(experience: .advanced, frequency: nil, injuryCount: 0) == nil)
        // Never outside 0…100, whatever a caller passes.
        #expect(FitnessProfile.score(experience: .advanced, frequency: 1_000, injuryCount: 0) == 100)
        #expect(FitnessProfile.score(experience: .beginner, frequency: -1_000, injuryCount: 0) == 0)
        #expect(FitnessProfile.score(experience: .beginner, frequency: 2, injuryCount: -3) == 60)
    }

    @Test("older apps: no new fields still onboard, with no location, frequency, injuries or score")
    func absentFields() throws {
        let answers = try base.validate()
        #expect(answers.workoutLocation == nil)
        #expect(answers.workoutFrequency == nil)
        #expect(answers.injuries == [])
        #expect(answers.fitnessScore == nil)
        #expect(try base.with { $0.workoutLocation = "  " }.validate().workoutLocation == nil)
    }

    @Test("location: home or gym, any case, trimmed; anything else is a bad request")
    func location() throws {
        #expect(try base.with { $0.workoutLocation = " GYM " }.validate().workoutLocation == .gym)
        #expect(try base.with { $0.workoutLocation = "home" }.validate().workoutLocation == .home)
        for bad in ["park", "home gym", "gym\u{0}", "بيت"] {
            let error = base.with { $0.workoutLocation = bad }.error()
            #expect(error?.code == .badRequest)
            #expect(error?.field == "workout_location")
        }
    }

    @Test("frequency: 2 and 6 accepted, 1 and 7 out of range")
    func frequency() throws {
        #expect(try base.with { $0.workoutFrequency = 2 }.validate().workoutFrequency == 2)
        #expect(try base.with { $0.workoutFrequency = 6 }.validate().workoutFrequency == 6)
        for bad in [1, 7, 0, -1, Int.max, Int.min] {
            let error = base.with { $0.workoutFrequency = bad }.error()
            #expect(error?.code == .outOfRange)
            #expect(error?.field == "workout_frequency")
        }
    }

    @Test("injuries: trimmed, blanks, 'none' and repeats dropped; 20 of 100 characters accepted, one more refused")
    func injuries() throws {
        let cleaned = try base.with { $0.injuries = [" Knee ", "", "NONE", "knee", "Lower back", "كتف"] }.validate()
        #expect(cleaned.injuries == ["Knee", "Lower back", "كتف"])
        let most = (0..<20).map { "\($0)" + String(repeating: "x", count: 98) }
        #expect(try base.with { $0.injuries = most }.validate().injuries.count == 20)

        let tooMany = base.with { $0.injuries = most + ["ankle"] }.error()
        #expect(tooMany?.code == .outOfRange)
        #expect(tooMany?.field == "injuries")
        let tooLong = base.with { $0.injuries = [String(repeating: "x", count: 101)] }.error()
        #expect(tooLong?.code == .outOfRange)
        #expect(tooLong?.field == "injuries")
        for control in ["knee\nneck", "knee\u{0}", "\u{7}", "ankle\u{1B}[31m"] {
            let error = base.with { $0.injuries = [control] }.error()
            #expect(error?.code == .badRequest)
            #expect(error?.field == "injuries")
        }
    }

    @Test("injuries lower the score, 5 each")
    func injuriesCount() throws {
        let answers = try base.with {
            $0.experienceLevel = "advanced"
            $0.workoutFrequency = 5
            $0.injuries = ["shoulder", "knee", "Knee"]
        }.validate()
        #expect(answers.fitnessScore == 85)
    }

    /// A frequency read back from a row at the edge of Int: clamped, no overflow.
    @Test func aStoredFrequencyAtTheEdgeOfIntIsClamped() {
        #expect(FitnessProfile.score(experience: .advanced, frequency: .max, injuryCount: 0) == 100)
        #expect(FitnessProfile.score(experience: .beginner, frequency: .min, injuryCount: .max) == 0)
    }
}
