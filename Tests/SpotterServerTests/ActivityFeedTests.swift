import Foundation
import Testing
import SpotterServer
import SpotterPorts
import TestSupport

/// The coach's combined activity feed over real sockets (seed 002 coach §8): what the coach's current clients did
/// — their messages and meal logs, check-ins, challenge progress — newest first, paged by cursor; the coach's own
/// doings, a deleted message and other coaches' clients are not in it.
@Suite("The coach's activity feed", .serialized)
struct ActivityFeedTests {
    @Test func theFeedIsTheClientsDoingsNewestFirstAPageAtATime() throws {
        let chat = try ChatFixture()
        defer { chat.server.stop() }
        let f = chat.fixture
        let coach = try chat.socket(f.coachX.access)
        let amal = try chat.socket(f.clientA.access)
        let badr = try chat.socket(f.clientB.access)
        let badrThread = try #require(try f.api.call("GET", "/v1/me/coach", token: f.clientB.access).string("thread_id"))

        _ = try amal.result("message.send", ["thread_id": chat.thread, "client_message_id": "m1", "text": "Morning!"])
        _ = try amal.result("message.send", ["thread_id": chat.thread, "client_message_id": "m2", "text": "oops"])
        _ = try amal.result("message.delete", ["thread_id": chat.thread, "seq": 2])
        _ = try coach.result("message.send", ["thread_id": chat.thread, "client_message_id": "k1", "text": "Hi Amal"])
        _ = try amal.result("message.send", ["thread_id": chat.thread, "client_message_id": "m3", "kind": "meal_log",
                                              "meal": ["name": "Oats", "ingredients": ["oats"], "calories": 350, "protein_g": 12,
                                                       "carbs_g": 60, "fats_g": 6, "meal_type": "breakfast"]])
        let made = try coach.result("challenge.create", RecordTests.challenge(chat.thread))
        let challengeID = try #require((made["challenge"] as? [String: Any])?["id"] as? String)
        _ = try amal.result("check_in.submit", ["thread_id": chat.thread, "weight": 70.5])
        _ = try amal.result("challenge.check", ["challenge_id": challengeID, "day": 1, "done": true])
        _ = try badr.result("message.send", ["thread_id": badrThread, "client_message_id": "b1", "text": "Not X's"])

        let feed = try coach.result("activity")
        let items = try #require(feed["items"] as? [[String: Any]])
        #expect(items.map { $0["kind"] as? String } == ["challenge", "check_in", "meal_log", "message"])
        #expect(items.map { $0["change"] as? String } == ["challenge.task_checked", "check_in.created", nil, nil])
        #expect(feed["has_more"] as? Bool == false)
        #expect(items.allSatisfy { $0["thread_id"] as? String == chat.thread && $0["client_id"] as? String == f.clientA.id })
        #expect((items[3]["message"] as? [String: Any])?["text"] as? String == "Morning!")
        #expect(((items[1]["record"] as? [String: Any])?["check_in"] as? [String: Any])?["weight_kg"] as? Double == 70.5)
        let cursors = items.compactMap { $0["cursor"] as? Int }
        #expect(cursors.count == 4 && cursors == cursors.sorted(by: >))

        // Paging: two, then the rest before the second's cursor.
        let first = try coach.result("activity", ["limit": 2])
        let firstItems = try #require(first["items"] as? [[String: Any]])
        #expect(firstItems.count == 2 && first["has_more"] as? Bool == true)
        let rest = try coach.result("activity", ["limit": 2, "before": cursors[1]])
        #expect((rest["items"] as? [[String: Any]])?.compactMap { $0["cursor"] as? Int } == Array(cursors[2...]))
        #expect(rest["has_more"] as? Bool == false)
        #expect((try coach.result("activity", ["before": cursors[3]])["items"] as? [[String: Any]])?.isEmpty == true)
        #expect((try coach.result("activity", ["thread_id": chat.thread, "limit": 1])["items"] as? [[String: Any]])?.count == 1)

        // Refusals: a client, another coach's thread, an unknown thread, limits and cursors out of range.
        #expect(errorCode(try amal.command("activity")) == "forbidden")
        #expect(errorCode(try coach.command("activity", ["thread_id": badrThread])) == "forbidden")
        #expect(errorCode(try coach.command("activity", ["thread_id": "nope"])) == "forbidden")
        for limit in [0, 101, -1] { #expect(errorCode(try coach.command("activity", ["limit": limit])) == "out_of_range") }
        #expect(errorCode(try coach.command("activity", ["before": -1])) == "out_of_range")
        #expect(errorCode(try coach.command("activity", ["limit": "2"])) == "bad_request")
        // Coach Y sees Badr's message alone.
        let yara = try chat.socket(f.coachY.access)
        let theirs = try #require(try yara.result("activity")["items"] as? [[String: Any]])
        #expect(theirs.count == 1 && (theirs[0]["message"] as? [String: Any])?["text"] as? String == "Not X's")
    }
}
