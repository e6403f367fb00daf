import Foundation
import Testing
import SpotterServer
import TestSupport

/// A coach's availability and free slots over real sockets (issue 30 item 1): the coach saves and reads it, the
/// coach and their client see the slots, anyone else is refused; a client's time outside is refused, a coach's
/// flagged; every field is checked at the door.
@Suite("Availability and free slots on the live socket", .serialized)
struct AvailabilityTests {
    /// Midnight UTC `days` days from today.
    static func midnight(in days: Int64) -> Int64 {
        let now = Int64(Date().timeIntervalSince1970)
        return (now / 86_400 + days) * 86_400
    }

    static func date(_ instant: Int64) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd"
        return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(instant)))
    }

    static let allDay = Dictionary(uniqueKeysWithValues: ["sun", "mon", "tue", "wed", "thu", "fri", "sat"].map {
        ($0, [["start": "00:00", "end": "24:00"]])
    })

    /// Every day, all day, in UTC, but the day after tomorrow off (and tomorrow, `D1`, open).
    static func setDayOff(_ coach: SpotterSocket, off: Int64) throws -> [String: Any] {
        try coach.result("availability.set", ["time_zone": "UTC", "weekly": allDay,
                                              "exceptions": [["date": date(off), "hours": []]],
                                              "buffer_before_minutes": 0, "buffer_after_minutes": 0])
    }

    @Test func theCoachSetsHoursAndBothSeeTheSameFreeSlots() throws {
        let chat = try ChatFixture()
        defer { chat.server.stop() }
        let client = try chat.socket(chat.fixture.clientA.access)
        let coach = try chat.socket(chat.fixture.coachX.access)
        let d1 = Self.midnight(in: 1), d2 = Self.midnight(in: 2)
        let ask: [String: Any] = ["thread_id": chat.thread, "duration_minutes": 60, "from": d1, "to": d2 + 86_400, "step_minutes": 60]
        // Nothing saved yet: no slots, and the coach reads null.
        #expect(try coach.result("availability.get")["availability"] is NSNull)
        let none = try client.result("availability.slots", ask)
        #expect(none["availability_set"] as? Bool == false && (none["slots"] as? [Any])?.isEmpty == true)

        let saved = try Self.setDayOff(coach, off: d2)
        let view = try #require(saved["availability"] as? [String: Any])
        #expect(view["time_zone"] as? String == "UTC" && (view["exceptions"] as? [[String: Any]])?.first?["date"] as? String == Self.date(d2))
        let read = try #require(try coach.result("availability.get")["availability"] as? [String: Any])
        #expect(NSDictionary(dictionary: read).isEqual(to: view))

        // Day 1 all day (24 hourly starts), day 2 none; the same for the coach and the client.
        let slots = try client.result("availability.slots", ask)
        let starts = (slots["slots"] as? [[String: Any]] ?? []).compactMap { $0["start"] as? Int }
        #expect(slots["availability_set"] as? Bool == true && slots["coach_time_zone"] as? String == "UTC")
        #expect(starts == (0..<24).map { Int(d1) + $0 * 3600 })
        let coachSlots = try coach.result("availability.slots", ask)
        #expect((coachSlots["slots"] as? [[String: Any]])?.count == 24)
        // Shown in the zone asked for.
        let riyadh = try client.result("availability.slots", ask.merging(["time_zone": "Asia/Riyadh"]) { $1 })
        #expect(riyadh["time_zone"] as? String == "Asia/Riyadh")
        #expect(((riyadh["slots"] as? [[String: Any]])?.first?["local"] as? String)?.hasSuffix("T03:00+03:00") == true)

        // The client's request on the day off is refused (in Arabic too); on day 1 it is taken and holds its hour.
        let refused = try client.command("session.request", ["thread_id": chat.thread, "start": d2 + 12 * 3600,
                                                             "duration_minutes": 30, "purpose": "Form check"])
        #expect(errorCode(refused) == "outside_availability" && (refused["error"] as? [String: Any])?["field"] as? String == "start")
        let request = try client.result("session.request", ["thread_id": chat.thread, "start": d1 + 12 * 3600,
                                                             "duration_minutes": 30, "purpose": "Form check"])
        #expect(request["outside_availability"] == nil)
        let after = (try client.result("availability.slots", ask)["slots"] as? [[String: Any]] ?? []).compactMap { $0["start"] as? Int }
        #expect(after.count == 23 && !after.contains(Int(d1) + 12 * 3600))

        // The coach may invite on the day off: allowed and flagged, for both.
        let invite = try coach.result("session.invite", ["thread_id": chat.thread, "start": d2 + 15 * 3600,
                                                         "duration_minutes": 30, "purpose": "Extra"])
        #expect(invite["outside_availability"] as? Bool == true)
        let sessions = try client.result("sessions", ["from": d1, "to": d2 + 86_400])["sessions"] as? [[String: Any]] ?? []
        #expect(sessions.first { $0["id"] as? String == invite["id"] as? String }?["outside_availability"] as? Bool == true)
        // The client's alternative on the day off is refused; on day 1 it is taken.
        let inviteID = try #require(invite["id"] as? String)
        #expect(errorCode(try client.command("session.act", ["session_id": inviteID, "action": "propose", "start": d2 + 16 * 3600])) == "outside_availability")
        _ = try client.result("session.act", ["session_id": inviteID, "action": "propose", "start": d1 + 16 * 3600])
    }

    @Test func outsidersAndClientsAreRefused() throws {
        let chat = try ChatFixture()
        defer { chat.server.stop() }
        let coach = try chat.socket(chat.fixture.coachX.access)
        _ = try Self.setDayOff(coach, off: Self.midnight(in: 3))
        let ask: [String: Any] = ["thread_id": chat.thread, "duration_minutes": 60, "from": Self.midnight(in: 1), "to": Self.midnight(in: 2)]
        for outsider in [chat.fixture.clientB, chat.fixture.clientC, chat.fixture.coachY] {
            let socket = try chat.socket(outsider.access)
            let reply = try socket.command("availability.slots", ask)
            #expect(errorCode(reply) == "forbidden" && (reply["error"] as? [String: Any])?["field"] as? String == "thread_id")
        }
        let client = try chat.socket(chat.fixture.clientA.access)
        #expect(errorCode(try client.command("availability.set", ["time_zone": "UTC"])) == "forbidden")
        #expect(errorCode(try client.command("availability.get")) == "forbidden")
        #expect(errorCode(try client.command("availability.slots", ask.merging(["thread_id": "no-such-thread"]) { $1 })) == "forbidden")
        // A link that ended: neither side asks for its slots any more.
        let change = try chat.fixture.api.call("POST", "/v1/me/coach-change-requests", ["coach_id": chat.fixture.coachY.id],
                                               token: chat.fixture.clientA.access)
        let changeID = try #require(change.string("id"))
        #expect(try chat.fixture.api.call("POST", "/v1/admin/coach-change-requests/\(changeID)/approve", token: chat.fixture.admin.access).status == 200)
        try waitUntil(5, "the old thread inactive") { (try? client.command("availability.slots", ask)).flatMap(errorCode) == "thread_inactive" }
        #expect(errorCode(try coach.command("availability.slots", ask)) == "thread_inactive")
        // The coach's hours are unchanged by anything refused.
        #expect((try coach.result("availability.get")["availability"] as? [String: Any])?["time_zone"] as? String == "UTC")
    }

    @Test func theSameSettingOverHTTP() throws {
        let chat = try ChatFixture()
        defer { chat.server.stop() }
        let api = chat.fixture.api, coach = chat.fixture.coachX.access, client = chat.fixture.clientA.access
        let empty = try api.call("GET", "/v1/me/availability", token: coach)
        #expect(empty.status == 200 && empty.json["availability"] is NSNull)
        let body: [String: Any] = ["time_zone": "Asia/Riyadh", "weekly": ["sun": [["start": "10:00", "end": "14:00"]]],
                                   "minimum_notice_minutes": 30, "max_sessions_per_day": 3]
        let saved = try api.call("PUT", "/v1/me/availability", body, token: coach)
        let view = try #require(saved.json["availability"] as? [String: Any])
        #expect(saved.status == 200 && view["time_zone"] as? String == "Asia/Riyadh" && view["max_sessions_per_day"] as? Int == 3)
        // The socket reads what HTTP saved.
        let socket = try chat.socket(coach)
        let read = try #require(try socket.result("availability.get")["availability"] as? [String: Any])
        #expect(NSDictionary(dictionary: read).isEqual(to: view))
        // Coaches only; every field checked as on the socket; nothing refused is saved.
        let refused = try api.call("PUT", "/v1/me/availability", body, token: client)
        #expect(refused.status == 403 && refused.errorCode == "forbidden")
        #expect(try api.call("GET", "/v1/me/availability", token: client).status == 403)
        let bad = try api.call("PUT", "/v1/me/availability", ["time_zone": "UTC", "weekly": ["sun": [["start": "14:00", "end": "10:00"]]]], token: coach)
        #expect(bad.status == 400 && bad.errorCode == "bad_request")
        let huge = try api.call("PUT", "/v1/me/availability", ["time_zone": "UTC", "buffer_after_minutes": 9_223_372_036_854_775_807], token: coach)
        #expect(huge.status == 400 && huge.errorCode == "out_of_range")
        #expect(try api.call("PUT", "/v1/me/availability", ["time_zone": "UTC", "hours": []], token: coach).errorCode == "unknown_field")
        #expect((try api.call("GET", "/v1/me/availability", token: coach).json["availability"] as? [String: Any])?["time_zone"] as? String == "Asia/Riyadh")
    }

    @Test func theCoachsExportHoldsTheirAvailability() throws {
        let chat = try ChatFixture()
        defer { chat.server.stop() }
        let coach = try chat.socket(chat.fixture.coachX.access)
        _ = try Self.setDayOff(coach, off: Self.midnight(in: 5))
        let export = try ExportDownload.fetch(port: chat.server.port, token: chat.fixture.coachX.access)
        let saved = try #require(export.json("availability.json")["availability"] as? [String: Any])
        #expect(saved["time_zone"] as? String == "UTC" && (saved["exceptions"] as? [[String: Any]])?.count == 1)
        let clients = try ExportDownload.fetch(port: chat.server.port, token: chat.fixture.clientA.access)
        #expect(clients.json("availability.json")["availability"] is NSNull)
    }

    @Test func everyFieldIsCheckedAtTheDoorInBothLanguages() throws {
        let chat = try ChatFixture()
        defer { chat.server.stop() }
        let coach = try chat.socket(chat.fixture.coachX.access, headers: [("Accept-Language", "ar")])
        let d1 = Self.midnight(in: 1)
        let sets: [([String: Any], String, String)] = [
            ([:], "missing_field", "time_zone"),
            (["time_zone": "EST"], "invalid_time_zone", "time_zone"),
            (["time_zone": "UTC", "weekly": ["mon": [["start": "09:00", "end": "24:01"]]]], "bad_request", "weekly"),
            (["time_zone": "UTC", "weekly": ["mon": [["start": "09:00", "end": "12:00"], ["start": "11:59", "end": "13:00"]]]], "bad_request", "weekly"),
            (["time_zone": "UTC", "weekly": ["funday": []]], "bad_request", "weekly"),
            (["time_zone": "UTC", "weekly": ["mon": [["start": "09:00\u{1B}", "end": "10:00"]]]], "bad_request", "weekly"),
            (["time_zone": "UTC", "exceptions": [["date": "2027-02-30", "hours": []]]], "bad_request", "exceptions"),
            (["time_zone": "UTC", "buffer_before_minutes": 241], "out_of_range", "buffer_before_minutes"),
            (["time_zone": "UTC", "minimum_notice_minutes": 9_223_372_036_854_775_807], "out_of_range", "minimum_notice_minutes"),
            (["time_zone": "UTC", "max_sessions_per_day": -9_223_372_036_854_775_807], "out_of_range", "max_sessions_per_day"),
            (["time_zone": "UTC", "max_sessions_per_day": 0], "out_of_range", "max_sessions_per_day"),
        ]
        for (fields, code, field) in sets {
            let reply = try coach.command("availability.set", fields)
            let error = reply["error"] as? [String: Any]
            #expect(errorCode(reply) == code && error?["field"] as? String == field, "\(fields)")
            #expect((error?["message"] as? String)?.hasArabic == true)
        }
        #expect(errorCode(try coach.command("availability.set", ["time_zone": "UTC", "holidays": []])) == "unknown_field")
        #expect(try coach.result("availability.get")["availability"] is NSNull)  // nothing refused was saved

        _ = try coach.result("availability.set", ["time_zone": "UTC", "weekly": Self.allDay])
        let base: [String: Any] = ["thread_id": chat.thread, "duration_minutes": 60, "from": d1, "to": d1 + 86_400]
        let slots: [([String: Any], String, String)] = [
            (["duration_minutes": 4], "out_of_range", "duration_minutes"),
            (["duration_minutes": 481], "out_of_range", "duration_minutes"),
            (["duration_minutes": 9_223_372_036_854_775_807], "out_of_range", "duration_minutes"),
            (["step_minutes": 4], "out_of_range", "step_minutes"),
            (["to": d1], "bad_request", "to"),
            (["to": d1 + 62 * 86_400 + 1], "out_of_range", "to"),
            (["from": -1], "out_of_range", "from"),
            (["time_zone": "GMT+3"], "invalid_time_zone", "time_zone"),
        ]
        for (change, code, field) in slots {
            let reply = try coach.command("availability.slots", base.merging(change) { $1 })
            #expect(errorCode(reply) == code && (reply["error"] as? [String: Any])?["field"] as? String == field, "\(change)")
        }
        for missing in ["thread_id", "duration_minutes", "from", "to"] {
            var fields = base
            fields[missing] = nil
            #expect(errorCode(try coach.command("availability.slots", fields)) == "missing_field")
        }
        // The edges themselves are accepted: 62 days of 480-minute sessions, once a day.
        let longest = try coach.result("availability.slots", base.merging(["to": d1 + 62 * 86_400, "duration_minutes": 480, "step_minutes": 1_440]) { $1 })
        #expect((longest["slots"] as? [Any])?.count == 62)
    }
}
