import Foundation
import Testing
import SpotterCore
import SpotterServer
import SpotterPorts
import TestSupport

/// Group challenges over real sockets (seed 003: 7, 14 or 30 days, the participant count visible to clients):
/// the length rule, joining and leaving with their typed refusals, the live `challenge_participants` event to
/// the coach and every client in it (counts only, no one's name), the groups list, and the dashboard's
/// engagement and challenge types.
@Suite("Group challenges on the live socket", .serialized)
struct GroupChallengeSocketTests {
    static func challenge(_ thread: String, days: Int, template: String? = "steps") -> [String: Any] {
        var fields: [String: Any] = [
            "thread_id": thread, "name": "10k steps", "start_date": RecordTests.today,
            "tasks": (1...days).map { ["name": "Walk 10,000 steps, day \($0)", "focus": $0 % 2 == 0 ? "nutrition" : "training",
                                       "intensity": "moderate"] },
        ]
        if let template { fields["template_id"] = template }
        return fields
    }

    static func counts(_ object: [String: Any]?) -> [Int]? {
        guard let object, let participants = object["participants"] as? Int, let finished = object["finished"] as? Int else { return nil }
        return [participants, finished]
    }

    /// The `challenge_participants` events the socket got (others dropped).
    static func participantEvents(_ socket: SpotterSocket) -> [[String: Any]] {
        socket.drain(for: 0.3).filter { $0["type"] as? String == "challenge_participants" }
    }

    @Test func joiningAndLeavingMoveTheCountEveryoneInItSees() throws {
        let chat = try ChatFixture()
        defer { chat.server.stop() }
        let f = chat.fixture
        // Client C picks coach X too: X has two clients, A and C; B is coach Y's.
        #expect(try f.api.call("POST", "/v1/me/coach", ["coach_id": f.coachX.id], token: f.clientC.access).status == 201)
        let coach = try chat.socket(f.coachX.access)
        let amal = try chat.socket(f.clientA.access)
        let chadi = try chat.socket(f.clientC.access)
        let badr = try chat.socket(f.clientB.access)

        // Only 7, 14 or 30 days for a group challenge; a personal one keeps 3–14.
        for days in [3, 6, 8, 15, 29, 31] {
            let reply = try coach.command("challenge.create", Self.challenge(chat.thread, days: days))
            #expect(errorCode(reply) == "challenge_length", "\(days) days")
        }
        #expect(errorCode(try coach.command("challenge.create", Self.challenge(chat.thread, days: 30, template: nil))) == "out_of_range")
        let made = try coach.result("challenge.create", Self.challenge(chat.thread, days: 7))
        #expect((made["challenge"] as? [String: Any])?["days"] as? Int == 7 && made["change"] as? String == "challenge.created")
        #expect(Self.counts(made["participation"] as? [String: Any]) == [1, 0])
        #expect(errorCode(try coach.command("challenge.create", Self.challenge(chat.thread, days: 14))) == "challenge_already_joined")
        // The coach and A (in it) hear of the count.
        #expect(Self.counts(try coach.next("challenge_participants")["participation"] as? [String: Any]) == [1, 0])
        #expect(Self.counts(try amal.next("challenge_participants")["participation"] as? [String: Any]) == [1, 0])

        // C sees the group with its count (not who is in it), and joins.
        let groups = try #require(try chadi.result("challenge.groups")["groups"] as? [[String: Any]])
        #expect(groups.count == 1 && groups[0]["challenge_id"] == nil)
        let group = try #require(groups[0]["participation"] as? [String: Any])
        #expect(group["template_id"] as? String == "steps" && group["days"] as? Int == 7 && group["name"] as? String == "10k steps")
        #expect(Self.counts(group) == [1, 0])
        let joined = try chadi.result("challenge.join", ["template_id": "steps"])
        let mine = try #require(joined["challenge"] as? [String: Any])
        let mineID = try #require(mine["id"] as? String)
        #expect(joined["change"] as? String == "challenge.joined" && mine["client_id"] as? String == f.clientC.id)
        #expect(mine["start_date"] as? String == RecordTests.today && (mine["tasks"] as? [[String: Any]])?.count == 7)
        #expect(Self.counts(joined["participation"] as? [String: Any]) == [2, 0])
        // Everyone in it and the coach get the new count; C's join is a `record` on C's thread only.
        for socket in [coach, amal, chadi] {
            let event = try socket.next("challenge_participants")
            #expect(Self.counts(event["participation"] as? [String: Any]) == [2, 0])
            let text = String(decoding: try JSONSerialization.data(withJSONObject: event), as: UTF8.self)
            #expect(!text.contains(f.clientA.id) && !text.contains(f.clientC.id) && !text.contains("Amal") && !text.contains("Chadi"))
        }
        #expect(try chadi.next("record")["change"] as? String == "challenge.joined")
        #expect(Self.participantEvents(badr).isEmpty)
        let listed = try #require(try chadi.result("challenge.groups")["groups"] as? [[String: Any]])
        #expect(listed.first?["challenge_id"] as? String == mineID)

        // Refusals: joined already, another coach's client, a coach, an unknown or missing template, a past start.
        #expect(errorCode(try chadi.command("challenge.join", ["template_id": "steps"])) == "challenge_already_joined")
        #expect(errorCode(try badr.command("challenge.join", ["template_id": "steps"])) == "record_not_found")
        #expect(errorCode(try coach.command("challenge.join", ["template_id": "steps"])) == "forbidden")
        #expect(errorCode(try chadi.command("challenge.join", ["template_id": "nope"])) == "record_not_found")
        #expect(errorCode(try chadi.command("challenge.join", [:])) == "missing_field")
        #expect(errorCode(try chadi.command("challenge.join", ["template_id": "steps", "start_date": "2001-01-01"])) == "out_of_range")
        #expect(errorCode(try chadi.command("challenge.join", ["template_id": "steps", "extra": 1])) == "unknown_field")
        #expect(errorCode(try chadi.command("challenge.join", ["template_id": 7])) == "bad_request")
        #expect((try badr.result("challenge.groups")["groups"] as? [[String: Any]])?.isEmpty == true)
        #expect(errorCode(try chat.socket(f.admin.access).command("challenge.groups")) == "forbidden")

        // C leaves: the count drops for everyone; leaving again changes nothing; a left challenge can't be checked.
        let left = try chadi.result("challenge.leave", ["challenge_id": mineID])
        #expect(left["change"] as? String == "challenge.left" && (left["challenge"] as? [String: Any])?["status"] as? String == "left")
        #expect(Self.counts(left["participation"] as? [String: Any]) == [1, 0])
        for socket in [coach, amal, chadi] {
            #expect(Self.counts(try socket.next("challenge_participants")["participation"] as? [String: Any]) == [1, 0])
        }
        #expect(try chadi.result("challenge.leave", ["challenge_id": mineID])["change"] as? String == "challenge.unchanged")
        #expect(errorCode(try chadi.command("challenge.check", ["challenge_id": mineID, "day": 1, "done": true])) == "challenge_over")
        #expect(errorCode(try amal.command("challenge.leave", ["challenge_id": mineID])) == "record_not_found")
        #expect(errorCode(try coach.command("challenge.leave", ["challenge_id": mineID])) == "record_not_found")
        #expect(errorCode(try badr.command("challenge.leave", ["challenge_id": "no-such-id"])) == "record_not_found")
        #expect(errorCode(try chadi.command("challenge.leave", [:])) == "missing_field")
        #expect(try coach.result("challenge.template", ["template_id": "steps"])["participants"] as? Int == 1)
        let coachGroups = try #require(try coach.result("challenge.groups")["groups"] as? [[String: Any]])
        #expect(Self.counts(coachGroups.first?["participation"] as? [String: Any]) == [1, 0])

        // The dashboard over today: A checked today's task (engaged), C did nothing (0): 50 %. Both challenges ran
        // today, C's left one too; their main focus is training (4 of 7 days).
        let amalID = try #require((made["challenge"] as? [String: Any])?["id"] as? String)
        _ = try amal.result("challenge.check", ["challenge_id": amalID, "day": 1, "done": true])
        let now = Int(Date().timeIntervalSince1970)
        let dashboard = try coach.result("dashboard", ["from": now - now % 86_400, "to": now + 1])
        let analytics = try #require(dashboard["analytics"] as? [String: Any])
        #expect(analytics["engagement_percent"] as? Int == 50)
        let types = try #require(analytics["popular_challenge_types"] as? [[String: Any]])
        #expect(types.count == 1 && types[0]["type"] as? String == "training" && types[0]["challenges"] as? Int == 2)
    }

    /// Checking the last task finishes the challenge: the client moves from `participants` to `finished`, and
    /// everyone in it hears so. Six days pass on the server's clock (a task is checked on or after its day).
    @Test func finishingMovesTheClientToFinished() throws {
        let clock = TestClock()
        let chat = try ChatFixture { $0.clock = clock }
        defer { chat.server.stop() }
        let f = chat.fixture
        var fields = Self.challenge(chat.thread, days: 7)
        fields["start_date"] = LocalDay.format(LocalDay.of(clock.now, in: TimeZone(identifier: "UTC")!))
        let made = try chat.socket(f.coachX.access).result("challenge.create", fields)
        let id = try #require((made["challenge"] as? [String: Any])?["id"] as? String)
        clock.advance(by: 6 * 86_400)
        func signIn(_ email: String) throws -> SpotterSocket {
            let response = try f.api.call("POST", "/v1/auth/signin", ["email": email, "password": "secret1"])
            return try chat.socket(try #require(response.string("access_token")))
        }
        let coach = try signIn("x@coach.test")
        let amal = try signIn("a@client.test")
        for day in 1...6 {
            let checked = try amal.result("challenge.check", ["challenge_id": id, "day": day, "done": true])
            #expect(Self.counts(checked["participation"] as? [String: Any]) == [1, 0], "day \(day)")
        }
        let last = try amal.result("challenge.check", ["challenge_id": id, "day": 7, "done": true])
        #expect((last["challenge"] as? [String: Any])?["status"] as? String == "completed")
        #expect(Self.counts(last["participation"] as? [String: Any]) == [0, 1])
        #expect(Self.counts(try coach.next("challenge_participants")["participation"] as? [String: Any]) == [0, 1])
        #expect(Self.counts(try amal.next("challenge_participants")["participation"] as? [String: Any]) == [0, 1])
        // Unchecking the last task today un-finishes it: back among the participants.
        let unchecked = try amal.result("challenge.check", ["challenge_id": id, "day": 7, "done": false])
        #expect(Self.counts(unchecked["participation"] as? [String: Any]) == [1, 0])
        #expect(Self.counts(try coach.next("challenge_participants")["participation"] as? [String: Any]) == [1, 0])
        _ = try amal.result("challenge.check", ["challenge_id": id, "day": 7, "done": true])
        #expect(errorCode(try amal.command("challenge.leave", ["challenge_id": id])) == "challenge_over")
        let groups = try #require(try amal.result("challenge.groups")["groups"] as? [[String: Any]])
        #expect(Self.counts(groups.first?["participation"] as? [String: Any]) == [0, 1] && groups.first?["challenge_id"] == nil)
        // Finished, the client may join it again: one in it, one finished (the same client, counted once in each).
        let again = try amal.result("challenge.join", ["template_id": "steps"])
        #expect(Self.counts(again["participation"] as? [String: Any]) == [1, 1])
    }
}
