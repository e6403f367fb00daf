import Foundation
import SpotterCore
import Testing
import TestSupport

@Suite("Onboarding, coaches and coach changes", .serialized)
struct CoachingAPITests {
    @Test func onboardingIsValidatedAndMarksTheClient() throws {
        let fixture = try CoachingFixture()
        defer { fixture.server.stop() }
        let api = fixture.api
        var bad = CoachingFixture.onboarding
        bad["height_cm"] = 251
        let refused = try api.call("PUT", "/v1/me/onboarding", bad, token: fixture.clientC.access)
        #expect(refused.status == 400)
        #expect(refused.errorCode == "out_of_range")
        #expect(refused.errorField == "height_cm")
        #expect(try api.call("GET", "/v1/me", token: fixture.clientC.access)["onboarding_completed"] as? Bool == false)

        let saved = try api.call("PUT", "/v1/me/onboarding", CoachingFixture.onboarding, token: fixture.clientC.access)
        #expect(saved.status == 200)
        #expect(saved["height_cm"] as? Double == 165)
        #expect(saved["age"] as? Int ?? 0 >= 30)
        #expect(try api.call("GET", "/v1/me", token: fixture.clientC.access)["onboarding_completed"] as? Bool == true)
    }

    @Test func coachesAreListedAndAClientPicksOneOnce() throws {
        let fixture = try CoachingFixture()
        defer { fixture.server.stop() }
        let api = fixture.api
        let coaches = try api.call("GET", "/v1/coaches", token: fixture.clientC.access)
        #expect(coaches.status == 200)
        #expect(coaches.array.map { $0["full_name"] as? String } == ["Xavier Coach", "Yara Coach"])
        #expect(coaches.array.map { $0["client_count"] as? Int } == [1, 1])

        let picked = try api.call("POST", "/v1/me/coach", ["coach_id": fixture.coachY.id], token: fixture.clientC.access)
        #expect(picked.status == 201)
        #expect(picked.string("coach_id") == fixture.coachY.id)
        #expect(picked.string("thread_id")?.isEmpty == false)
        #expect(try api.call("GET", "/v1/me/coach", token: fixture.clientC.access).string("thread_id") == picked.string("thread_id"))

        let again = try api.call("POST", "/v1/me/coach", ["coach_id": fixture.coachX.id], token: fixture.clientC.access)
        #expect(again.status == 409)
        #expect(again.errorCode == "coach_already_assigned")
        let notACoach = try api.call("POST", "/v1/me/coach", ["coach_id": fixture.clientA.id], token: fixture.clientC.access)
        #expect(notACoach.status == 409 || notACoach.errorCode == "coach_not_found")
    }

    @Test func aCoachSeesOnlyTheirClientsWithAgeAndLatestWeight() throws {
        let fixture = try CoachingFixture()
        defer { fixture.server.stop() }
        let list = try fixture.api.call("GET", "/v1/coach/clients", token: fixture.coachX.access)
        #expect(list.status == 200)
        #expect(list.array.count == 1)
        let row = try #require(list.array.first)
        #expect(row["client_id"] as? String == fixture.clientA.id)
        #expect(row["full_name"] as? String == "Amal Client")
        #expect(row["goal"] as? String == "Lose 10kg")
        #expect(row["experience_level"] as? String == "beginner")
        #expect(row["latest_weight_kg"] as? Double == 70.5)
        #expect(row["age"] as? Int ?? 0 >= 30)
        #expect(row["thread_id"] as? String != nil)
    }

    @Test func coachChangeWaitsForAnAdmin() throws {
        let fixture = try CoachingFixture()
        defer { fixture.server.stop() }
        let api = fixture.api
        let before = try api.call("GET", "/v1/me/coach", token: fixture.clientA.access)
        let requested = try api.call(
            "POST", "/v1/me/coach-change-requests", ["coach_id": fixture.coachY.id, "reason": "schedule"], token: fixture.clientA.access)
        #expect(requested.status == 201)
        #expect(requested.string("status") == "pending")
        #expect(requested.string("from_coach_id") == fixture.coachX.id)
        let twice = try api.call("POST", "/v1/me/coach-change-requests", ["coach_id": fixture.coachY.id], token: fixture.clientA.access)
        #expect(twice.errorCode == "coach_change_pending")
        // Nothing changes until an admin decides.
        #expect(try api.call("GET", "/v1/me/coach", token: fixture.clientA.access).string("coach_id") == fixture.coachX.id)

        let pending = try api.call("GET", "/v1/admin/coach-change-requests?status=pending", token: fixture.admin.access)
        #expect(pending.array.map { $0["id"] as? String } == [requested.string("id")])
        let id = try #require(requested.string("id"))
        let approved = try api.call("POST", "/v1/admin/coach-change-requests/\(id)/approve", token: fixture.admin.access)
        #expect(approved.status == 200)
        #expect(approved.string("status") == "approved")
        let after = try api.call("GET", "/v1/me/coach", token: fixture.clientA.access)
        #expect(after.string("coach_id") == fixture.coachY.id)
        #expect(after.string("thread_id") != before.string("thread_id"))
        #expect(try api.call("POST", "/v1/admin/coach-change-requests/\(id)/reject", token: fixture.admin.access).errorCode == "request_not_pending")
        #expect(try api.call("GET", "/v1/coach/clients", token: fixture.coachX.access).array.isEmpty)
    }

    @Test func aClientWithoutACoachCannotRequestAChange() throws {
        let fixture = try CoachingFixture()
        defer { fixture.server.stop() }
        let response = try fixture.api.call(
            "POST", "/v1/me/coach-change-requests", ["coach_id": fixture.coachX.id], token: fixture.clientC.access)
        #expect(response.status == 409)
        #expect(response.errorCode == "no_coach_assigned")
    }

    /// Ages are counted to today on the server's clock (UTC): a birthday passes at midnight UTC, for the age
    /// shown and for the age limit of onboarding (13).
    @Test func agesFollowTheClockPastMidnight() throws {
        let clock = TestClock(now: 1_749_945_590)  // 2025-06-14 23:59:50 UTC; the fixture's client A was born 1995-06-15
        let fixture = try CoachingFixture { $0.clock = clock }
        defer { fixture.server.stop() }
        let api = fixture.api
        func ages() throws -> [Int?] {
            let row = try api.call("GET", "/v1/coach/clients", token: fixture.coachX.access).array.first
            let profile = try api.call("GET", "/v1/clients/\(fixture.clientA.id)/profile", token: fixture.coachX.access)
            return [row?["age"] as? Int, profile["age"] as? Int]
        }
        var young = CoachingFixture.onboarding
        young["date_of_birth"] = "2012-06-15"
        let refused = try api.call("PUT", "/v1/me/onboarding", young, token: fixture.clientC.access)
        #expect(refused.errorCode == "out_of_range" && refused.errorField == "date_of_birth")
        #expect(try ages() == [29, 29])

        clock.advance(by: 10)  // 2025-06-15 00:00:00 UTC
        #expect(try ages() == [30, 30])
        let saved = try api.call("PUT", "/v1/me/onboarding", young, token: fixture.clientC.access)
        #expect(saved.status == 200 && saved["age"] as? Int == 13)
    }
}
