import Foundation
import Testing
import SpotterServer
import TestSupport

/// InBody scans over real sockets (issue 30 item 9, seed 000 FR-PROGRESS-03 "InBody Tracking (Premium+ Only)", §4
/// "Freemium ❌ Upgrade prompt"): a measurement with `method: "inbody"` and the scan's figures, checked against
/// their ranges; refused `plan_upgrade_required` for Freemium under `--tiers`, like the rest of the tier gates.
@Suite("InBody scans", .serialized)
struct InBodyTests {
    /// Seed 000 scenario 2: 87 kg, 18.5 % body fat, 68 kg muscle, visceral fat 8, body water 60 %, and 7 more.
    static func scan(_ thread: String, _ changes: [String: Any] = [:]) -> [String: Any] {
        var figures: [String: Any] = [
            "weight_kg": 87, "body_fat_percent": 18.5, "skeletal_muscle_mass_kg": 40.2, "visceral_fat_level": 8,
            "body_water_percent": 60, "body_fat_mass_kg": 16.1, "lean_body_mass_kg": 68, "total_body_water_l": 52.2,
            "protein_kg": 14.1, "minerals_kg": 4.9, "basal_metabolic_rate_kcal": 1838, "bmi": 26.9, "inbody_score": 82,
        ]
        for (key, value) in changes { figures[key] = value }
        return ["thread_id": thread, "method": "inbody", "sex": "male", "inbody": figures]
    }

    static func setTier(_ chat: ChatFixture, _ tier: String) throws {
        #expect(try chat.fixture.api.call("PUT", "/v1/admin/users/\(chat.fixture.clientA.id)/tier", ["tier": tier],
                                          token: chat.fixture.admin.access).status == 200)
    }

    @Test func freemiumIsOfferedPremiumAndPremiumRecordsTheScan() throws {
        let chat = try ChatFixture { $0.tiers = true }
        defer { chat.server.stop() }
        let client = try chat.socket(chat.fixture.clientA.access, headers: [("Accept-Language", "ar")])
        let coach = try chat.socket(chat.fixture.coachX.access)
        let refused = try client.command("measurement.add", Self.scan(chat.thread))
        let error = try #require(refused["error"] as? [String: Any])
        #expect(error["code"] as? String == "plan_upgrade_required" && error["field"] as? String == "method")
        #expect(error["upgrade_to"] as? String == "premium")
        #expect((error["message"] as? String)?.contains("InBody") == true
                && (error["message"] as? String)?.unicodeScalars.contains { (0x0621...0x064A).contains($0.value) } == true)
        // The gate comes before the figures: a Freemium client learns of the upgrade, not of a bad figure.
        #expect(errorCode(try client.command("measurement.add", Self.scan(chat.thread, ["weight_kg": -1]))) == "plan_upgrade_required")

        try Self.setTier(chat, "premium")
        let made = try client.result("measurement.add", Self.scan(chat.thread))
        let measurement = try #require(made["measurement"] as? [String: Any])
        #expect(measurement["method"] as? String == "inbody" && measurement["body_fat_percent"] as? Double == 18.5)
        let inbody = try #require(measurement["inbody"] as? [String: Any])
        #expect(inbody.count == 13 && inbody["visceral_fat_level"] as? Int == 8 && inbody["skeletal_muscle_mass_kg"] as? Double == 40.2)
        let event = try coach.next("record")
        #expect(event["change"] as? String == "measurement.created")
        #expect(((event["measurement"] as? [String: Any])?["inbody"] as? [String: Any])?["weight_kg"] as? Double == 87)
        let record = try coach.result("record", ["thread_id": chat.thread])
        #expect(((record["measurements"] as? [[String: Any]])?.first?["inbody"] as? [String: Any])?["bmi"] as? Double == 26.9)
        // A scan is a measurement: the next one a week on.
        #expect(errorCode(try client.command("measurement.add", Self.scan(chat.thread))) == "measurement_too_soon")
    }

    @Test func figuresOutsideTheirRangesAreRefusedByName() throws {
        let chat = try ChatFixture()  // without --tiers nobody is limited: Freemium may record a scan
        defer { chat.server.stop() }
        let client = try chat.socket(chat.fixture.clientA.access)
        func refusal(_ command: [String: Any]) throws -> (String?, String?) {
            let error = try client.command("measurement.add", command)["error"] as? [String: Any]
            return (error?["code"] as? String, error?["field"] as? String)
        }
        let thread = chat.thread
        #expect(try refusal(["thread_id": thread, "method": "inbody", "sex": "male"]) == ("missing_field", "inbody"))
        for required in ["weight_kg", "body_fat_percent", "skeletal_muscle_mass_kg", "visceral_fat_level", "body_water_percent"] {
            var command = Self.scan(thread)
            var figures = command["inbody"] as! [String: Any]
            figures[required] = nil
            command["inbody"] = figures
            #expect(try refusal(command) == ("missing_field", "inbody." + required))
        }
        let outside: [(String, Any)] = [
            ("weight_kg", 0), ("weight_kg", -87), ("weight_kg", 401), ("weight_kg", 1e308), ("body_fat_percent", 2.9),
            ("body_fat_percent", 70), ("skeletal_muscle_mass_kg", 87), ("visceral_fat_level", 0), ("visceral_fat_level", 31),
            ("visceral_fat_level", Int64.max), ("visceral_fat_level", Int64.min), ("body_water_percent", 81),
            ("body_fat_mass_kg", 90), ("lean_body_mass_kg", 87), ("total_body_water_l", 0), ("protein_kg", 51),
            ("minerals_kg", 0.1), ("basal_metabolic_rate_kcal", 100_000), ("bmi", 7), ("inbody_score", 101), ("inbody_score", -1),
        ]
        for (field, value) in outside {
            #expect(try refusal(Self.scan(thread, [field: value])) == ("out_of_range", "inbody." + field), "\(field) = \(value)")
        }
        #expect(try refusal(Self.scan(thread, ["visceral_fat_level": 8.5])).0 == "bad_request")
        #expect(try refusal(Self.scan(thread, ["weight_kg": "87"])).0 == "bad_request")
        #expect(try refusal(Self.scan(thread, ["colour\u{7}": 1])) == ("unknown_field", "inbody.colour\u{7}"))
        var withFolds = Self.scan(thread)
        withFolds["skinfolds_mm"] = ["chest": 10]
        #expect(try refusal(withFolds) == ("bad_request", "skinfolds_mm"))
        // The scan's figures belong to the InBody method only.
        var navy: [String: Any] = ["thread_id": thread, "method": "navy", "sex": "male", "height_cm": 177.8, "neck_cm": 40.64, "waist_cm": 91.44]
        navy["inbody"] = (Self.scan(thread)["inbody"] as! [String: Any])
        #expect(try refusal(navy) == ("bad_request", "inbody"))
        // Only optional figures left out: accepted.
        var minimal = Self.scan(thread)
        minimal["inbody"] = ["weight_kg": 87, "body_fat_percent": 18.5, "skeletal_muscle_mass_kg": 40.2, "visceral_fat_level": 8,
                             "body_water_percent": 60]
        let made = try client.result("measurement.add", minimal)
        #expect(((made["measurement"] as? [String: Any])?["inbody"] as? [String: Any])?.count == 5)
        // Outsiders: the coach cannot add one for the client, a stranger cannot add one in the thread.
        let coach = try chat.socket(chat.fixture.coachX.access)
        #expect(errorCode(try coach.command("measurement.add", Self.scan(thread))) == "forbidden")
        let stranger = try chat.socket(chat.fixture.clientB.access)
        #expect(errorCode(try stranger.command("measurement.add", Self.scan(thread))) == "forbidden")
        #expect(errorCode(try stranger.command("measurement.add", Self.scan("no-such-thread"))) == "forbidden")
    }

    /// The scan is in the log like any change of the record: after a restart it reads back whole, and the 7-day rule
    /// goes on from it.
    @Test func aScanSurvivesARestart() throws {
        let directory = NSTemporaryDirectory() + "spotter-inbody-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var clientToken = "", thread = ""
        do {
            let server = try TestServer(dataDirectory: directory)
            let pair = try CoachingFixture.linkedPair(on: server)
            (clientToken, thread) = (pair.client.access, pair.thread)
            let client = try SpotterSocket(port: server.port, token: clientToken)
            _ = try client.result("measurement.add", Self.scan(thread))
            _ = server.stop()
        }
        let server = try TestServer(dataDirectory: directory)
        defer { server.stop() }
        let client = try SpotterSocket(port: server.port, token: clientToken)
        let record = try client.result("record", ["thread_id": thread])
        let scan = try #require((record["measurements"] as? [[String: Any]])?.first)
        #expect(scan["method"] as? String == "inbody" && scan["body_fat_percent"] as? Double == 18.5)
        #expect((scan["inbody"] as? [String: Any])?["basal_metabolic_rate_kcal"] as? Int == 1838)
        #expect(errorCode(try client.command("measurement.add", Self.scan(thread))) == "measurement_too_soon")
    }
}
