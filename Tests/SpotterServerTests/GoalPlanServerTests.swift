import Foundation
import Testing
import SpotterCore
import SpotterServer
import SpotterPorts
import TestSupport

/// Goals as plans over real sockets (seed 004 US3 #2 and #4, US5 #4, US7 #2, FR-016, FR-021, FR-022): one active
/// goal unless the request says to replace it, the plan in the goal, and a behind-schedule change when a
/// measurement falls off the plan.
@Suite("Goals as plans on the live socket", .serialized)
struct GoalPlanServerTests {
    static let week: Int64 = 7 * 86_400

    @Test func oneActiveGoalAPlanAndBehindSchedule() throws {
        let clock = TestClock()
        let chat = try ChatFixture {
            $0.clock = clock
            $0.accessTokenLifetimeSeconds = 60 * 86_400
        }
        defer { chat.server.stop() }
        let client = try chat.socket(chat.fixture.clientA.access)
        let coach = try chat.socket(chat.fixture.coachX.access)
        // A man 177.8 cm, waist 91.44, neck 40.64: 19.3 % body fat.
        let navy: [String: Any] = ["thread_id": chat.thread, "method": "navy", "sex": "male", "height_cm": 177.8,
                                   "neck_cm": 40.64, "waist_cm": 91.44]
        _ = try client.result("measurement.add", navy)
        var goal: [String: Any] = ["thread_id": chat.thread, "kind": "cutting", "target_percent": 15, "weight_kg": 80,
                                   "age": 30, "activity": "moderate"]
        let made = try #require(try client.result("goal.set", goal)["goal"] as? [String: Any])
        let plan = try #require(made["plan"] as? [String: Any])
        // Lean mass 80 × 0.807 = 64.56 kg; 64.56 / 0.85 = 75.95 kg; 4.05 kg at 0.4545 kg a week: 9 weeks.
        // BMR 800 + 1111.25 − 150 + 5 = 1,766.25; × 1.55 = 2,738; − 500 = 2,238 kcal.
        #expect(plan["weeks"] as? Int == 9 && plan["bmr_kcal"] as? Int == 1_766 && plan["maintenance_kcal"] as? Int == 2_738)
        #expect(plan["daily_calories"] as? Int == 2_238 && plan["protein_g"] as? Int == 160 && plan["height_cm"] as? Double == 177.8)
        #expect((plan["milestones"] as? [[String: Any]])?.count == 9 && (plan["training"] as? [String: Any])?["focus"] as? String == "fat_loss")
        #expect(try coach.next("record")["change"] as? String == "measurement.created")
        let created = try coach.next("record")
        #expect(created["change"] as? String == "goal.created" && (created["goal"] as? [String: Any])?["plan"] is [String: Any])

        // A second goal is refused while one is active (US3 #4), unless it says `replace`.
        goal["target_percent"] = 16
        let refused = try client.command("goal.set", goal)
        #expect(errorCode(refused) == "goal_active" && (refused["error"] as? [String: Any])?["field"] as? String == "replace")
        goal["replace"] = false
        #expect(errorCode(try client.command("goal.set", goal)) == "goal_active")
        goal["replace"] = true
        let replacing = try client.result("goal.set", goal)
        #expect(replacing["change"] as? String == "goal.replaced" && (replacing["goal"] as? [String: Any])?["target_percent"] as? Int == 16)
        #expect(try coach.next("record")["change"] as? String == "goal.replaced")
        #expect(try coach.next("record")["change"] as? String == "goal.created")
        let record = try coach.result("record", ["thread_id": chat.thread])
        #expect((record["goal"] as? [String: Any])?["target_percent"] as? Int == 16 && (record["goal"] as? [String: Any])?["status"] as? String == "active")

        // Plan inputs out of their ranges, and an unknown activity.
        for (field, value) in [("weight_kg", 19.9), ("weight_kg", 1e300), ("height_cm", 99.0), ("age", 12.0), ("age", 101.0)] as [(String, Double)] {
            var bad = goal
            bad[field] = field == "age" ? Int(value) as Any : value as Any
            #expect(errorCode(try client.command("goal.set", bad)) == "out_of_range", "\(field) \(value)")
        }
        var lazy = goal
        lazy["activity"] = "couch"
        #expect(errorCode(try client.command("goal.set", lazy)) == "bad_request")

        // Four weeks later the same 19.3 %: the plan expected about 17.4 % (16 % goal: 19.3 − 3.3 × 4/weeks).
        clock.advance(by: 4 * Self.week)
        let measured = try client.result("measurement.add", navy)
        #expect(measured["change"] as? String == "measurement.created")
        #expect(try coach.next("record")["change"] as? String == "measurement.created")
        let behind = try coach.next("record")
        let behindGoal = try #require(behind["goal"] as? [String: Any])
        #expect(behind["change"] as? String == "goal.behind_schedule" && (behindGoal["behind_by_percent"] as? Double ?? 0) > 1)
        #expect(behindGoal["status"] as? String == "active")
        // The client's dashboard card shows it to the coach too.
        let cards = coach.drain(for: 0.3).filter { $0["type"] as? String == "client_card" }
        let card = try #require(cards.last?["card"] as? [String: Any])
        #expect(((card["goal"] as? [String: Any])?["behind_by_percent"] as? Double ?? 0) > 1)
        // A week later, on plan again (waist 88 cm reads about 16.8 %, the plan expects 16.9 %): back on track.
        clock.advance(by: Self.week)
        var slimmer = navy
        slimmer["waist_cm"] = 88.0
        _ = try client.result("measurement.add", slimmer)
        #expect(try coach.next("record")["change"] as? String == "measurement.created")
        let back = try coach.next("record")
        #expect(back["change"] as? String == "goal.on_track" && (back["goal"] as? [String: Any])?["behind_by_percent"] == nil)
    }

    @Test func aGoalWithoutWeightOrAgeHasNoPlan() throws {
        let chat = try ChatFixture()
        defer { chat.server.stop() }
        let client = try chat.socket(chat.fixture.clientA.access)
        _ = try client.result("measurement.add", ["thread_id": chat.thread, "method": "navy", "sex": "male", "height_cm": 177.8,
                                                  "neck_cm": 40.64, "waist_cm": 91.44])
        // No check-in weight and no age: the goal is set, without a plan.
        let goal = try #require(try client.result("goal.set", ["thread_id": chat.thread, "kind": "cutting", "target_percent": 15])["goal"] as? [String: Any])
        #expect(goal["plan"] == nil && goal["status"] as? String == "active")
        // The newest check-in's weight fills in the weight.
        _ = try client.result("check_in.submit", ["thread_id": chat.thread, "weight": 80])
        let planned = try #require(try client.result("goal.set", ["thread_id": chat.thread, "kind": "cutting", "target_percent": 15,
                                                                  "age": 30, "replace": true])["goal"] as? [String: Any])
        #expect((planned["plan"] as? [String: Any])?["weight_kg"] as? Int == 80)
        #expect((planned["plan"] as? [String: Any])?["activity"] as? String == "light")
    }

    /// The preferred body-fat method and units (seed 004 US2, US8 #4, FR-027): saved in the accounts store, and
    /// used as the defaults of `measurement.add` and `check_in.submit`; the record stays in SI units.
    @Test func preferencesAreSavedAndUsed() throws {
        let chat = try ChatFixture()
        defer { chat.server.stop() }
        let api = chat.fixture.api, token = chat.fixture.clientA.access
        let defaults = try api.call("GET", "/v1/me/goal-preferences", token: token)
        #expect(defaults.status == 200 && defaults.trimmedText == #"{"body_fat_method":null,"units":"metric"}"#)
        for bad in [["units": "furlongs"], ["body_fat_method": "calipers"], ["body_fat_method": 3], ["colour": "red"]] as [[String: Any]] {
            let refused = try api.call("PUT", "/v1/me/goal-preferences", bad, token: token)
            #expect(refused.status == 400, "\(bad) \(refused.text)")
        }
        #expect(try api.call("PUT", "/v1/me/goal-preferences", ["colour": "red"], token: token).errorCode == "unknown_field")
        let saved = try api.call("PUT", "/v1/me/goal-preferences", ["body_fat_method": "navy", "units": "imperial"], token: token)
        #expect(saved.status == 200 && saved.trimmedText == #"{"body_fat_method":"navy","units":"imperial"}"#)
        // Only the fields sent change.
        let unitsOnly = try api.call("PUT", "/v1/me/goal-preferences", ["units": "imperial"], token: token)
        #expect(unitsOnly.trimmedText == #"{"body_fat_method":"navy","units":"imperial"}"#)
        #expect(try api.call("GET", "/v1/me/goal-preferences", token: chat.fixture.clientB.access).text.contains("metric"))
        #expect(try api.call("GET", "/v1/me/goal-preferences").status == 401)

        // Used: a weight without a unit is read in pounds (stored in kg); a measurement without a method is Navy.
        let client = try chat.socket(token)
        let checkIn = try client.result("check_in.submit", ["thread_id": chat.thread, "weight": 176.37])
        #expect((checkIn["check_in"] as? [String: Any])?["weight_kg"] as? Double == 80)
        let explicit = try client.result("check_in.submit", ["thread_id": chat.thread, "weight": 80, "unit": "kg"])
        #expect((explicit["check_in"] as? [String: Any])?["weight_kg"] as? Double == 80)
        let measured = try client.result("measurement.add", ["thread_id": chat.thread, "sex": "male", "height_cm": 177.8,
                                                             "neck_cm": 40.64, "waist_cm": 91.44])
        #expect((measured["measurement"] as? [String: Any])?["method"] as? String == "navy")
        // No method chosen and none sent: missing, as before.
        _ = try api.call("PUT", "/v1/me/goal-preferences", ["body_fat_method": NSNull()], token: token)
        #expect(try api.call("GET", "/v1/me/goal-preferences", token: token).trimmedText == #"{"body_fat_method":null,"units":"imperial"}"#)
        #expect(errorCode(try client.command("measurement.add", ["thread_id": chat.thread, "sex": "male", "height_cm": 177.8,
                                                                 "neck_cm": 40.64, "waist_cm": 91.44])) == "missing_field")
        // A coach's socket is refused as before, preferences or not.
        let coach = try chat.socket(chat.fixture.coachX.access)
        #expect(errorCode(try coach.command("check_in.submit", ["thread_id": chat.thread, "weight": 80])) == "forbidden")
    }
}

extension APIResponse {
    /// The body without its final newline.
    var trimmedText: String { text.trimmingCharacters(in: .whitespacesAndNewlines) }
}
