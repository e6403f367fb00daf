import Foundation
import Testing
import TestSupport

/// Seed 000 steps 4–7 over a real server: the workout location, the frequency, the injuries and the fitness
/// score, saved, read back by the client and their coach, and refused at each edge.
@Suite("Onboarding fields (location, frequency, injuries, fitness score)", .serialized)
struct OnboardingFieldsTests {
    /// The fixture's answers plus the new fields, the seed's worked example (beginner, 3 a week, none → 65).
    static func answers(_ change: (inout [String: Any]) -> Void = { _ in }) -> [String: Any] {
        var body = CoachingFixture.onboarding
        body["workout_location"] = "gym"
        body["workout_frequency"] = 3
        body["injuries"] = ["none"]
        change(&body)
        return body
    }

    @Test func theFieldsAreSavedAndReadBackByTheClientAndTheirCoachOnly() throws {
        let fixture = try CoachingFixture()
        defer { fixture.server.stop() }
        let api = fixture.api
        let saved = try api.call("PUT", "/v1/me/onboarding", Self.answers(), token: fixture.clientA.access)
        #expect(saved.status == 200)
        #expect(saved.string("workout_location") == "gym")
        #expect(saved["workout_frequency"] as? Int == 3)
        #expect(saved["injuries"] as? [String] == [])
        #expect(saved["fitness_score"] as? Int == 65)

        let injured = Self.answers {
            $0["workout_location"] = " Home "
            $0["workout_frequency"] = 6
            $0["experience_level"] = "advanced"
            $0["injuries"] = [" Knee ", "knee", "Lower back"]
        }
        #expect(try api.call("PUT", "/v1/me/onboarding", injured, token: fixture.clientA.access).status == 200)
        // The coach of the client reads the stored answers and the score computed from them.
        let seen = try api.call("GET", "/v1/clients/\(fixture.clientA.id)/profile", token: fixture.coachX.access)
        #expect(seen.status == 200)
        #expect(seen.string("workout_location") == "home")
        #expect(seen["workout_frequency"] as? Int == 6)
        #expect(seen["injuries"] as? [String] == ["Knee", "Lower back"])
        #expect(seen["fitness_score"] as? Int == 90)
        // So does the client.
        let own = try api.call("GET", "/v1/clients/\(fixture.clientA.id)/profile", token: fixture.clientA.access)
        #expect(own["fitness_score"] as? Int == 90)
        // Another coach sees nothing of it.
        let other = try api.call("GET", "/v1/clients/\(fixture.clientA.id)/profile", token: fixture.coachY.access)
        #expect(other.status == 403)
        #expect(other["fitness_score"] == nil)
        #expect(other["injuries"] == nil)
    }

    @Test func anOlderAppWithoutTheFieldsStillOnboardsAndResavingClearsThem() throws {
        let fixture = try CoachingFixture()
        defer { fixture.server.stop() }
        let api = fixture.api
        #expect(try api.call("PUT", "/v1/me/onboarding", Self.answers(), token: fixture.clientC.access).status == 200)
        let older = try api.call("PUT", "/v1/me/onboarding", CoachingFixture.onboarding, token: fixture.clientC.access)
        #expect(older.status == 200)
        #expect(older["workout_location"] == nil)
        #expect(older["workout_frequency"] == nil)
        #expect(older["fitness_score"] == nil)
        #expect(older["injuries"] as? [String] == [])
        let read = try api.call("GET", "/v1/clients/\(fixture.clientC.id)/profile", token: fixture.clientC.access)
        #expect(read.status == 200)
        #expect(read["workout_frequency"] == nil)
        #expect(read["fitness_score"] == nil)
    }

    @Test func eachFieldIsRefusedAtItsEdgeAndNothingIsSaved() throws {
        let fixture = try CoachingFixture()
        defer { fixture.server.stop() }
        let api = fixture.api
        let most = (0..<20).map { "\($0)" + String(repeating: "x", count: 98) }
        let refusals: [(change: (inout [String: Any]) -> Void, code: String, field: String)] = [
            ({ $0["workout_frequency"] = 1 }, "out_of_range", "workout_frequency"),
            ({ $0["workout_frequency"] = 7 }, "out_of_range", "workout_frequency"),
            ({ $0["workout_location"] = "park" }, "bad_request", "workout_location"),
            ({ $0["injuries"] = most + ["ankle"] }, "out_of_range", "injuries"),
            ({ $0["injuries"] = [String(repeating: "k", count: 101)] }, "out_of_range", "injuries"),
            ({ $0["injuries"] = ["knee\nneck"] }, "bad_request", "injuries"),
            ({ $0["injuries"] = ["\u{0}"] }, "bad_request", "injuries"),
        ]
        for refusal in refusals {
            let response = try api.call("PUT", "/v1/me/onboarding", Self.answers(refusal.change), token: fixture.clientC.access,
                                        headers: [("Accept-Language", "ar")])
            #expect(response.status == 400, "\(refusal.field)")
            #expect(response.errorCode == refusal.code, "\(refusal.field)")
            #expect(response.errorField == refusal.field)
            // The message is in the asked language (Arabic letters).
            #expect(response.errorMessage?.unicodeScalars.contains { (0x0600...0x06FF).contains($0.value) } == true)
        }
        #expect(try api.call("GET", "/v1/me", token: fixture.clientC.access)["onboarding_completed"] as? Bool == false)

        // The edges themselves are accepted: 2 and 6 a week, 20 injuries of 100 characters.
        for (days, score) in [(2, 60), (6, 80)] {
            let accepted = try api.call("PUT", "/v1/me/onboarding", Self.answers { $0["workout_frequency"] = days },
                                        token: fixture.clientC.access)
            #expect(accepted.status == 200)
            #expect(accepted["fitness_score"] as? Int == score)
        }
        let full = try api.call("PUT", "/v1/me/onboarding", Self.answers { $0["injuries"] = most },
                                token: fixture.clientC.access)
        #expect(full.status == 200)
        #expect((full["injuries"] as? [String])?.count == 20)
        #expect(full["fitness_score"] as? Int == 40)
    }
}
