import Foundation
import Testing
import SpotterCore
import SpotterServer
import SpotterPorts
import TestSupport

/// The daily check-in over real sockets (seed 001 "Daily Check-In Screen", issue 30 item 3): one per day of the
/// client's calendar in their zone (a second replaces the first), scored by the server, live to the coach as a
/// `record` event and on their dashboard card, listed a page at a time, replayed by `resume`.
@Suite("Daily check-in on the live socket", .serialized)
struct DailyCheckInTests {
    static func answers(_ thread: String, mood: Any = 4, soreness: Any = 2, stress: Any = 3, sick: Bool? = nil) -> [String: Any] {
        var fields: [String: Any] = ["thread_id": thread, "mood": mood, "soreness": soreness, "stress": stress]
        if let sick { fields["sick"] = sick }
        return fields
    }

    static func view(_ reply: [String: Any]) -> [String: Any]? { reply["daily_check_in"] as? [String: Any] }

    @Test func aCheckInIsScoredAndReachesTheCoachAtOnce() throws {
        let chat = try ChatFixture { $0.clock = TestClock() }  // 2027-01-15 08:00 UTC: the same day throughout
        defer { chat.server.stop() }
        let client = try chat.socket(chat.fixture.clientA.access)
        let coach = try chat.socket(chat.fixture.coachX.access)
        let made = try client.result("daily_check_in.submit", Self.answers(chat.thread))
        let first = try #require(Self.view(made))
        #expect(made["change"] as? String == "daily_check_in.created")
        // 3 + 3 + 2 points of 12: 67.
        #expect(first["overall_score"] as? Int == 67 && first["sick"] as? Bool == false && first["mood"] as? Int == 4)
        #expect(first["client_id"] as? String == chat.fixture.clientA.id && first["day"] as? String == "2027-01-15")
        let live = try coach.next("record")
        #expect(live["change"] as? String == "daily_check_in.created" && live["thread_id"] as? String == chat.thread)
        #expect(Self.view(live)?["id"] as? String == first["id"] as? String)
        let card = try #require(try coach.next("client_card")["card"] as? [String: Any])
        #expect((card["daily_check_in"] as? [String: Any])?["overall_score"] as? Int == 67 && card["checked_in_today"] as? Bool == true)

        // The same day again: the first is replaced (same id and created_at), sick halves the score.
        let again = try client.result("daily_check_in.submit", Self.answers(chat.thread, sick: true))
        #expect(again["change"] as? String == "daily_check_in.updated")
        #expect(Self.view(again)?["id"] as? String == first["id"] as? String && Self.view(again)?["overall_score"] as? Int == 33)
        #expect(Self.view(again)?["created_at"] as? Int == first["created_at"] as? Int)
        #expect(try coach.next("record")["change"] as? String == "daily_check_in.updated")
        let dashboard = try coach.result("dashboard")
        let mine = try #require((dashboard["clients"] as? [[String: Any]])?.first { $0["client_id"] as? String == chat.fixture.clientA.id })
        #expect((mine["daily_check_in"] as? [String: Any])?["sick"] as? Bool == true)

        // Numbers off the 1–5 scales, at the edges of what a number can be, missing answers, unknown fields.
        for (field, value) in [("mood", 0), ("mood", 6), ("soreness", -1), ("stress", Int.max), ("stress", Int.min)] {
            var fields = Self.answers(chat.thread)
            fields[field] = value
            let reply = try client.command("daily_check_in.submit", fields)
            #expect(errorCode(reply) == "out_of_range" && (reply["error"] as? [String: Any])?["field"] as? String == field, "\(field) \(value)")
        }
        var missing = Self.answers(chat.thread)
        missing["stress"] = nil
        #expect(errorCode(try client.command("daily_check_in.submit", missing)) == "missing_field")
        var extra = Self.answers(chat.thread)
        extra["energy"] = 3
        #expect(errorCode(try client.command("daily_check_in.submit", extra)) == "unknown_field")
        var long = Self.answers(chat.thread)
        long["notes"] = String(repeating: "ق", count: 501)
        #expect(errorCode(try client.command("daily_check_in.submit", long)) == "out_of_range")
        #expect(errorCode(try client.command("daily_check_in.submit", Self.answers(chat.thread, mood: "4"))) == "bad_request")

        // Who may: only the client, on their own thread; the coach reads, another coach nothing.
        let otherCoach = try chat.socket(chat.fixture.coachY.access)
        let outsider = try chat.socket(chat.fixture.clientC.access)
        #expect(errorCode(try coach.command("daily_check_in.submit", Self.answers(chat.thread))) == "forbidden")
        #expect(errorCode(try otherCoach.command("daily_check_in.submit", Self.answers(chat.thread))) == "forbidden")
        #expect(errorCode(try outsider.command("daily_check_in.submit", Self.answers(chat.thread))) == "forbidden")
        #expect(errorCode(try client.command("daily_check_in.submit", Self.answers("no-such-thread"))) != nil)
        #expect(errorCode(try otherCoach.command("daily_check_ins", ["thread_id": chat.thread])) == "forbidden")
        #expect(errorCode(try outsider.command("daily_check_ins", ["thread_id": chat.thread])) == "forbidden")
        let seen = try coach.result("daily_check_ins", ["thread_id": chat.thread])
        #expect((seen["check_ins"] as? [[String: Any]])?.count == 1 && seen["next"] is NSNull && seen["today"] as? String == "2027-01-15")

        // `resume` replays both changes in order.
        let replay = try chat.socket(chat.fixture.clientA.access)
        _ = try replay.result("resume", ["cursor": 0])
        #expect(RecordTests.records(replay).map { $0["change"] as? String } == ["daily_check_in.created", "daily_check_in.updated"])
    }

    /// The client's day is their zone's, across midnight and across the spring-forward change of daylight saving time
    /// (America/New_York, 14 March 2027: 02:00 EST becomes 03:00 EDT).
    @Test func oneADayInTheClientsZoneAcrossMidnightAndDST() throws {
        let clock = TestClock(now: 1_805_000_340)  // 2027-03-13 23:59 EST
        let chat = try ChatFixture {
            $0.clock = clock
            $0.accessTokenLifetimeSeconds = 30 * 86_400
        }
        defer { chat.server.stop() }
        let zone = try chat.fixture.api.call("PUT", "/v1/me", ["time_zone": "America/New_York"], token: chat.fixture.clientA.access)
        #expect(zone.status == 200)
        let client = try chat.socket(chat.fixture.clientA.access)
        func submit(_ mood: Int) throws -> [String: Any] {
            try client.result("daily_check_in.submit", Self.answers(chat.thread, mood: mood))
        }
        let saturday = try submit(1)
        #expect(Self.view(saturday)?["day"] as? String == "2027-03-13")
        clock.set(1_805_000_460)  // two minutes later: 00:01 on Sunday in New York (05:01 UTC)
        let sunday = try submit(2)
        #expect(sunday["change"] as? String == "daily_check_in.created" && Self.view(sunday)?["day"] as? String == "2027-03-14")
        #expect(Self.view(sunday)?["id"] as? String != Self.view(saturday)?["id"] as? String)
        clock.set(1_805_009_400)  // 03:30 EDT, after the clocks jumped
        #expect(try submit(3)["change"] as? String == "daily_check_in.updated")
        clock.set(1_805_081_400)  // 23:30 EDT: already Monday in UTC, still Sunday for the client
        let late = try submit(4)
        #expect(late["change"] as? String == "daily_check_in.updated" && Self.view(late)?["id"] as? String == Self.view(sunday)?["id"] as? String)
        clock.set(1_805_085_000)  // 00:30 EDT Monday (23:30 on a clock that kept EST's −5 hours)
        let monday = try submit(5)
        #expect(monday["change"] as? String == "daily_check_in.created" && Self.view(monday)?["day"] as? String == "2027-03-15")

        // The history, newest day first, a page at a time.
        let page = try client.result("daily_check_ins", ["thread_id": chat.thread, "limit": 2])
        let days = (page["check_ins"] as? [[String: Any]])?.map { $0["day"] as? String }
        #expect(days == ["2027-03-15", "2027-03-14"] && page["next"] as? String == "2027-03-14" && page["today"] as? String == "2027-03-15")
        #expect((page["check_ins"] as? [[String: Any]])?.last?["mood"] as? Int == 4)
        let rest = try client.result("daily_check_ins", ["thread_id": chat.thread, "limit": 2, "before": "2027-03-14"])
        #expect((rest["check_ins"] as? [[String: Any]])?.map { $0["day"] as? String } == ["2027-03-13"] && rest["next"] is NSNull)
        let empty = try client.result("daily_check_ins", ["thread_id": chat.thread, "before": "1970-01-01"])
        #expect((empty["check_ins"] as? [[String: Any]])?.isEmpty == true)
        for bad in ["2027-02-30", "", "yesterday", "2027-3-1"] {
            #expect(errorCode(try client.command("daily_check_ins", ["thread_id": chat.thread, "before": bad])) == "bad_request", "\(bad)")
        }
        for limit in [0, 101, Int.max, -1] {
            #expect(errorCode(try client.command("daily_check_ins", ["thread_id": chat.thread, "limit": limit])) == "out_of_range", "\(limit)")
        }
        #expect(errorCode(try client.command("daily_check_ins", [:])) == "missing_field")
    }

    @Test func checkInsSurviveARestart() throws {
        let directory = NSTemporaryDirectory() + "spotter-daily-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var token = "", thread = "", id = ""
        let clock = TestClock()  // both runs on the same day, whenever the test runs
        do {
            let server = try TestServer(dataDirectory: directory) { $0.clock = clock }
            let pair = try CoachingFixture.linkedPair(on: server)
            (token, thread) = (pair.client.access, pair.thread)
            let client = try SpotterSocket(port: server.port, token: token)
            id = try #require(Self.view(try client.result("daily_check_in.submit", Self.answers(thread)))?["id"] as? String)
            _ = server.stop()
        }
        let server = try TestServer(dataDirectory: directory) { $0.clock = clock }
        defer { server.stop() }
        let client = try SpotterSocket(port: server.port, token: token)
        let list = try client.result("daily_check_ins", ["thread_id": thread])
        #expect((list["check_ins"] as? [[String: Any]])?.first?["id"] as? String == id)
        // And the one-a-day rule goes on from there.
        let again = try client.result("daily_check_in.submit", Self.answers(thread, mood: 5))
        #expect(again["change"] as? String == "daily_check_in.updated" && Self.view(again)?["id"] as? String == id)
    }

    /// A page of long check-ins is cut short to stay within the outbound bound (`ReplyPage`), and `next` goes on
    /// from the last one shown: every day is listed once, none skipped.
    @Test func aLargePageIsCutShortAndPagingGoesOn() throws {
        let clock = TestClock()
        let chat = try ChatFixture {
            $0.clock = clock
            $0.accessTokenLifetimeSeconds = 60 * 86_400
            $0.maxOutboundBytes = 64 * 1024  // a reply budget of 16 KiB
        }
        defer { chat.server.stop() }
        let client = try chat.socket(chat.fixture.clientA.access)
        var days: [String] = []
        for index in 0..<30 {
            var fields = Self.answers(chat.thread, mood: 1 + index % 5)
            fields["notes"] = String(repeating: "ت", count: 500)  // 1,000 bytes of UTF-8
            days.append(try #require(Self.view(try client.result("daily_check_in.submit", fields))?["day"] as? String))
            clock.advance(by: 86_400)
        }
        var listed: [String] = [], before: String?, pages = 0
        repeat {
            var fields: [String: Any] = ["thread_id": chat.thread, "limit": 100]
            if let before { fields["before"] = before }
            let page = try client.result("daily_check_ins", fields)
            let items = try #require(page["check_ins"] as? [[String: Any]])
            #expect(!items.isEmpty && items.count < 30)
            listed += items.compactMap { $0["day"] as? String }
            before = page["next"] as? String
            pages += 1
        } while before != nil && pages < 10
        #expect(listed == days.reversed() && pages > 1)
    }
}
