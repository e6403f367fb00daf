import Foundation
import Testing
import SpotterServer
import SpotterPorts
import TestSupport

/// The coaching record over real sockets: every change is acknowledged once durable, reaches both participants
/// at once as a `record` event, is replayed by `resume`, and survives a restart; only the client and their
/// current coach see it.
@Suite("Coaching record on the live socket", .serialized)
struct RecordTests {
    /// Today in UTC (the fixture's users' zone), as challenges name days.
    static var today: String {
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy-MM-dd"
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.locale = Locale(identifier: "en_US_POSIX")
        return formatter.string(from: Date())
    }

    static func challenge(_ thread: String, days: Int = 3, start: String = today) -> [String: Any] {
        ["thread_id": thread, "name": "Hydration week", "start_date": start, "created_by": "ai",
         "tasks": (1...days).map { ["name": "Drink 2 L, day \($0)", "focus": "nutrition", "intensity": "light"] }]
    }

    static func records(_ socket: SpotterSocket) -> [[String: Any]] {
        socket.drain(for: 0.3).filter { $0["type"] as? String == "record" }
    }

    @Test func aChallengeAndItsCheckmarksReachTheOtherSideAtOnce() throws {
        let chat = try ChatFixture()
        defer { chat.server.stop() }
        let client = try chat.socket(chat.fixture.clientA.access)
        let coach = try chat.socket(chat.fixture.coachX.access)
        let made = try #require(try coach.result("challenge.create", Self.challenge(chat.thread))["challenge"] as? [String: Any])
        let id = try #require(made["id"] as? String)
        #expect(made["status"] as? String == "active" && made["days"] as? Int == 3 && made["created_by"] as? String == "ai")
        #expect(made["client_id"] as? String == chat.fixture.clientA.id && made["start_date"] as? String == Self.today)
        // Every device of both participants gets each change, the one that made it too.
        #expect(try coach.next("record")["change"] as? String == "challenge.created")
        let created = try client.next("record")
        #expect(created["change"] as? String == "challenge.created" && created["thread_id"] as? String == chat.thread)
        #expect((created["challenge"] as? [String: Any])?["id"] as? String == id && created["cursor"] is Int)

        // The client checks day 1 off: the coach sees 1/3 at once. Day 2 is tomorrow's.
        let checked = try client.result("challenge.check", ["challenge_id": id, "day": 1, "done": true])
        #expect((checked["challenge"] as? [String: Any])?["done"] as? Int == 1)
        #expect(try client.next("record")["change"] as? String == "challenge.task_checked")
        let atCoach = try coach.next("record")
        let live = try #require(atCoach["challenge"] as? [String: Any])
        #expect(atCoach["change"] as? String == "challenge.task_checked" && live["done"] as? Int == 1 && live["percent"] as? Int == 33)
        #expect(errorCode(try client.command("challenge.check", ["challenge_id": id, "day": 2, "done": true])) == "task_not_allowed")
        // Unchecking on the same day is allowed; a second uncheck changes nothing and writes nothing.
        _ = try client.result("challenge.check", ["challenge_id": id, "day": 1, "done": false])
        #expect(try coach.next("record")["change"] as? String == "challenge.task_unchecked")
        #expect(try client.next("record")["change"] as? String == "challenge.task_unchecked")
        let again = try client.result("challenge.check", ["challenge_id": id, "day": 1, "done": false])
        #expect(again["change"] as? String == "challenge.unchanged")
        #expect(Self.records(coach).isEmpty && Self.records(client).isEmpty)

        // Who may do what.
        #expect(errorCode(try client.command("challenge.create", Self.challenge(chat.thread))) == "forbidden")
        let otherCoach = try chat.socket(chat.fixture.coachY.access)
        #expect(errorCode(try otherCoach.command("challenge.create", Self.challenge(chat.thread))) == "forbidden")
        #expect(errorCode(try coach.command("challenge.check", ["challenge_id": id, "day": 1, "done": true])) == "record_not_found")
        #expect(errorCode(try coach.command("challenge.create", Self.challenge(chat.thread, days: 15))) == "out_of_range")
        #expect(errorCode(try coach.command("challenge.create", Self.challenge(chat.thread, start: "2020-01-01"))) == "out_of_range")
        var typo = Self.challenge(chat.thread)
        typo["tasks"] = [["name": "x", "focus": "training", "intensity": "light", "colour": "red"]]
        #expect((try coach.command("challenge.create", typo)["error"] as? [String: Any])?["field"] as? String == "tasks.colour")

        // The record lists it for both; `resume` replays the changes in order.
        let record = try coach.result("record", ["thread_id": chat.thread])
        #expect((record["challenges"] as? [[String: Any]])?.first?["done"] as? Int == 0)
        #expect(errorCode(try otherCoach.command("record", ["thread_id": chat.thread])) == "forbidden")
        let replay = try chat.socket(chat.fixture.clientA.access)
        _ = try replay.result("resume", ["cursor": 0])
        #expect(Self.records(replay).map { $0["change"] as? String } == ["challenge.created", "challenge.task_checked", "challenge.task_unchecked"])
    }

    @Test func checkInsWithPhotosAndTheCoachsComment() throws {
        let chat = try ChatFixture()
        defer { chat.server.stop() }
        let client = try chat.socket(chat.fixture.clientA.access)
        let coach = try chat.socket(chat.fixture.coachX.access)
        let upload = try AttachmentsTests.upload(chat.server, chat.thread, chat.fixture.clientA.access, AttachmentsTests.png)
        let photo = try #require(AttachmentsTests.json(upload)["id"] as? String)
        let pdf = try #require(AttachmentsTests.json(try AttachmentsTests.upload(chat.server, chat.thread, chat.fixture.clientA.access,
                                                                                    AttachmentsTests.pdf))["id"] as? String)
        let made = try client.result("check_in.submit", ["thread_id": chat.thread, "weight": 176.37, "unit": "lbs",
                                                         "photos": ["front": photo], "notes": "Slept better"])
        let checkIn = try #require(made["check_in"] as? [String: Any])
        #expect(checkIn["weight_kg"] as? Double == 80 && (checkIn["photos"] as? [String: Any])?["front"] as? String == photo)
        #expect(try coach.next("record")["change"] as? String == "check_in.created")
        #expect(try client.next("record")["change"] as? String == "check_in.created")
        // A photo must be an image of this thread.
        #expect(errorCode(try client.command("check_in.submit", ["thread_id": chat.thread, "weight": 80, "photos": ["side": pdf]])) == "record_not_found")
        #expect(errorCode(try client.command("check_in.submit", ["thread_id": chat.thread, "weight": 80,
                                                                 "photos": ["side": String(repeating: "a", count: 64)]])) == "record_not_found")
        #expect(errorCode(try client.command("check_in.submit", ["thread_id": chat.thread, "weight": 80, "photos": ["top": photo]])) == "unknown_field")
        #expect(errorCode(try coach.command("check_in.submit", ["thread_id": chat.thread, "weight": 80])) == "forbidden")

        let id = try #require(checkIn["id"] as? String)
        let commented = try coach.result("check_in.comment", ["check_in_id": id, "comment": "Great progress"])
        #expect((commented["check_in"] as? [String: Any])?["coach_comment"] as? String == "Great progress")
        #expect(try client.next("record")["change"] as? String == "check_in.commented")
        let otherCoach = try chat.socket(chat.fixture.coachY.access)
        #expect(errorCode(try otherCoach.command("check_in.comment", ["check_in_id": id, "comment": "Hi"])) == "record_not_found")
        let record = try client.result("record", ["thread_id": chat.thread])
        #expect(record["latest_weight_kg"] as? Double == 80)
        #expect((record["check_ins"] as? [[String: Any]])?.first?["coach_comment"] as? String == "Great progress")

        // The photo itself: the client and their coach download it; another coach, another client and an admin
        // may not (the authorization matrix of progress photos).
        let path = "/v1/threads/\(chat.thread)/attachments/\(photo)"
        for (token, status) in [(chat.fixture.clientA.access, 200), (chat.fixture.coachX.access, 200),
                                (chat.fixture.coachY.access, 403), (chat.fixture.clientB.access, 403), (chat.fixture.admin.access, 403)] {
            #expect(try HTTPTestClient(port: chat.server.port).request("GET", path, headers: [("Authorization", "Bearer \(token)")]).status == status)
        }
    }

    @Test func measurementsAreAWeekApartAndGoalsAreSafe() throws {
        let chat = try ChatFixture()
        defer { chat.server.stop() }
        let client = try chat.socket(chat.fixture.clientA.access, headers: [("Accept-Language", "ar")])
        let coach = try chat.socket(chat.fixture.coachX.access)
        let navy: [String: Any] = ["thread_id": chat.thread, "method": "navy", "sex": "male", "height_cm": 177.8,
                                   "neck_cm": 40.64, "waist_cm": 91.44]
        let made = try client.result("measurement.add", navy)
        let fat = try #require((made["measurement"] as? [String: Any])?["body_fat_percent"] as? Double)
        #expect(abs(fat - 19.5) < 0.25)
        #expect(try coach.next("record")["change"] as? String == "measurement.created")
        let tooSoon = try client.command("measurement.add", navy)
        let error = try #require(tooSoon["error"] as? [String: Any])
        #expect(error["code"] as? String == "measurement_too_soon")
        #expect((error["retry_after"] as? Int ?? 0) > 6 * 86_400)
        #expect((error["message"] as? String)?.contains("7") == true && (error["message"] as? String)?.unicodeScalars.contains { (0x0621...0x064A).contains($0.value) } == true)

        #expect(errorCode(try client.command("goal.set", ["thread_id": chat.thread, "kind": "cutting", "target_percent": 7.5])) == "unsafe_goal")
        #expect(errorCode(try client.command("goal.set", ["thread_id": chat.thread, "kind": "cutting", "target_percent": 25])) == "out_of_range")
        let goal = try client.result("goal.set", ["thread_id": chat.thread, "kind": "cutting", "target_percent": 15])
        #expect((goal["goal"] as? [String: Any])?["status"] as? String == "active")
        #expect((goal["goal"] as? [String: Any])?["start_percent"] as? Double == fat)
        #expect(try coach.next("record")["change"] as? String == "goal.created")
        #expect(errorCode(try coach.command("measurement.add", navy)) == "forbidden")
        let record = try coach.result("record", ["thread_id": chat.thread])
        #expect((record["measurements"] as? [[String: Any]])?.count == 1 && (record["next_measurement_at"] as? Int ?? 0) > 0)
    }

    @Test func theRecordSurvivesARestart() throws {
        let directory = NSTemporaryDirectory() + "spotter-record-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var clientToken = "", coachToken = "", thread = "", id = ""
        do {
            let server = try TestServer(dataDirectory: directory)
            let pair = try CoachingFixture.linkedPair(on: server)
            (clientToken, coachToken, thread) = (pair.client.access, pair.coach.access, pair.thread)
            let coach = try SpotterSocket(port: server.port, token: coachToken)
            id = try #require((try coach.result("challenge.create", Self.challenge(thread))["challenge"] as? [String: Any])?["id"] as? String)
            let client = try SpotterSocket(port: server.port, token: clientToken)
            _ = try client.result("challenge.check", ["challenge_id": id, "day": 1, "done": true])
            _ = try client.result("check_in.submit", ["thread_id": thread, "weight": 72.5])
            _ = server.stop()
        }
        let server = try TestServer(dataDirectory: directory)
        defer { server.stop() }
        let coach = try SpotterSocket(port: server.port, token: coachToken)
        let record = try coach.result("record", ["thread_id": thread])
        let challenge = try #require((record["challenges"] as? [[String: Any]])?.first)
        #expect(challenge["id"] as? String == id && challenge["done"] as? Int == 1)
        #expect(record["latest_weight_kg"] as? Double == 72.5)
        // And the rules go on from there: day 1 is done already, so checking it again writes nothing.
        let client = try SpotterSocket(port: server.port, token: clientToken)
        #expect(try client.result("challenge.check", ["challenge_id": id, "day": 1, "done": true])["change"] as? String == "challenge.unchanged")
    }

    @Test func theDashboardShowsEachClientAndUpdatesLive() throws {
        let chat = try ChatFixture()
        defer { chat.server.stop() }
        let client = try chat.socket(chat.fixture.clientA.access)
        let coach = try chat.socket(chat.fixture.coachX.access)
        _ = try client.result("message.send", ["thread_id": chat.thread, "client_message_id": "m1", "text": "Morning!"])
        _ = try client.result("message.send", ["thread_id": chat.thread, "client_message_id": "m2", "kind": "meal_log",
                                                "meal": ["name": "Oats", "ingredients": ["oats"], "calories": 350, "protein_g": 12,
                                                         "carbs_g": 60, "fats_g": 6, "meal_type": "breakfast"]])
        var challenge = Self.challenge(chat.thread, days: 7)  // a group challenge: 7, 14 or 30 days
        challenge["template_id"] = "hydration"
        let id = try #require((try coach.result("challenge.create", challenge)["challenge"] as? [String: Any])?["id"] as? String)
        // The change of the record brings the coach the client's fresh card.
        let pushed = try #require(try coach.next("client_card")["card"] as? [String: Any])
        #expect(pushed["client_id"] as? String == chat.fixture.clientA.id && (pushed["active_challenges"] as? [[String: Any]])?.count == 1)
        _ = try client.result("challenge.check", ["challenge_id": id, "day": 1, "done": true])
        let afterCheck = try #require(try coach.next("client_card")["card"] as? [String: Any])
        #expect((afterCheck["active_challenges"] as? [[String: Any]])?.first?["percent"] as? Int == 14)
        _ = try client.result("check_in.submit", ["thread_id": chat.thread, "weight": 70.5])
        #expect((try coach.next("client_card")["card"] as? [String: Any])?["latest_weight_kg"] as? Double == 70.5)
        #expect(client.drain(for: 0.2).allSatisfy { $0["type"] as? String != "client_card" })  // the coach's alone

        let dashboard = try coach.result("dashboard")
        let cards = try #require(dashboard["clients"] as? [[String: Any]])
        let card = try #require(cards.first { $0["client_id"] as? String == chat.fixture.clientA.id })
        #expect(card["unread"] as? Int == 2 && card["thread_id"] as? String == chat.thread && card["latest_weight_kg"] as? Double == 70.5)
        #expect((card["active_challenges"] as? [[String: Any]])?.first?["done"] as? Int == 1)
        let analytics = try #require(dashboard["analytics"] as? [String: Any])
        #expect(analytics["clients"] as? Int == cards.count && analytics["challenge_completion_percent"] as? Int == 100)
        #expect((analytics["meal_log_days_percent"] as? Int ?? 0) > 0)
        #expect(try coach.result("challenge.template", ["template_id": "hydration"])["participants"] as? Int == 1)
        #expect(try coach.result("challenge.template", ["template_id": "other"])["participants"] as? Int == 0)
        #expect(errorCode(try client.command("dashboard")) == "forbidden")
        #expect(errorCode(try coach.command("dashboard", ["from": 100, "to": 50])) == "out_of_range")
        #expect(errorCode(try coach.command("dashboard", ["from": 0, "to": 400 * 86_400])) == "out_of_range")
    }

    static func meal(_ socket: SpotterSocket, _ thread: String, _ id: String, _ name: String) throws {
        _ = try socket.result("message.send", ["thread_id": thread, "client_message_id": id, "kind": "meal_log",
                                               "meal": ["name": name, "ingredients": ["x"], "calories": 300, "protein_g": 20,
                                                        "carbs_g": 30, "fats_g": 10, "meal_type": "lunch"]])
    }

    @Test func mealHistoryAndTheCoachsFeed() throws {
        let chat = try ChatFixture()
        defer { chat.server.stop() }
        let clientA = try chat.socket(chat.fixture.clientA.access)
        let clientB = try chat.socket(chat.fixture.clientB.access)
        let threadB = try #require(try chat.fixture.api.call("GET", "/v1/me/coach", token: chat.fixture.clientB.access).string("thread_id"))
        try Self.meal(clientA, chat.thread, "a1", "Oats")
        _ = try clientA.result("message.send", ["thread_id": chat.thread, "client_message_id": "t1", "text": "not a meal"])
        try Self.meal(clientB, threadB, "b1", "Rice")  // coach Y's client
        try Self.meal(clientA, chat.thread, "a2", "Salad")
        try Self.meal(clientA, chat.thread, "a3", "Soup")

        let coach = try chat.socket(chat.fixture.coachX.access)
        let feed = try coach.result("meals", ["limit": 2])
        let first = try #require(feed["meals"] as? [[String: Any]])
        #expect(first.compactMap { ($0["meal"] as? [String: Any])?["name"] as? String } == ["Soup", "Salad"])
        #expect(feed["has_more"] as? Bool == true && first[0]["client_id"] as? String == chat.fixture.clientA.id)
        let next = try coach.result("meals", ["limit": 2, "before": try #require(first.last?["cursor"] as? Int)])
        #expect((next["meals"] as? [[String: Any]])?.compactMap { ($0["meal"] as? [String: Any])?["name"] as? String } == ["Oats"])
        #expect(next["has_more"] as? Bool == false)
        // The client's own history; another coach's client is in neither.
        let history = try clientA.result("meals")
        #expect((history["meals"] as? [[String: Any]])?.map { $0["client_message_id"] as? String } == ["a3", "a2", "a1"])
        #expect((try clientB.result("meals")["meals"] as? [[String: Any]])?.count == 1)
        #expect(errorCode(try coach.command("meals", ["thread_id": threadB])) == "forbidden")
        #expect(errorCode(try coach.command("meals", ["limit": 0])) == "out_of_range")
        let admin = try chat.socket(chat.fixture.admin.access)
        #expect(errorCode(try admin.command("meals")) == "forbidden")
    }
}
