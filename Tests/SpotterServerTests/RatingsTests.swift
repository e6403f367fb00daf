import Foundation
import Testing
import SpotterServer
import SpotterPorts
import TestSupport

/// Ratings over real sockets (`--ratings`): a prompt after exactly every 10th message a client sends and after
/// each completed session, logged for the client alone; answers and skips stored per coach for admins.
@Suite("Ratings on the live socket", .serialized)
struct RatingsTests {
    static func send(_ socket: SpotterSocket, _ thread: String, _ id: String) throws {
        _ = try socket.result("message.send", ["thread_id": thread, "client_message_id": id, "text": "message \(id)"])
    }

    static func prompts(_ socket: SpotterSocket) -> [[String: Any]] {
        socket.drain(for: 0.3).filter { $0["type"] as? String == "rating_prompt" }
    }

    @Test func everyTenthMessageAsksAndOnlyTheClient() throws {
        let chat = try ChatFixture { $0.ratings = true }
        defer { chat.server.stop() }
        let client = try chat.socket(chat.fixture.clientA.access)
        let coach = try chat.socket(chat.fixture.coachX.access)
        var seen: [Int] = []
        for n in 1...25 {
            try Self.send(client, chat.thread, "m\(n)")
            if n % 3 == 0 { try Self.send(coach, chat.thread, "c\(n)") }  // the coach's messages do not count
            for prompt in Self.prompts(client) {
                #expect(prompt["reason"] as? String == "messages" && prompt["thread_id"] as? String == chat.thread)
                #expect(prompt["coach_id"] as? String == chat.fixture.coachX.id && prompt["cursor"] is Int)
                seen.append(n)
                #expect(prompt["messages_sent"] as? Int == n)
            }
        }
        #expect(seen == [10, 20])
        #expect(Self.prompts(coach).isEmpty)
        // Logged: a resume from 0 replays both prompts.
        let again = try chat.socket(chat.fixture.clientA.access)
        _ = try again.result("resume", ["cursor": 0])
        #expect(Self.prompts(again).map { $0["messages_sent"] as? Int } == [10, 20])
    }

    @Test func answersAndSkipsAreKeptPerCoach() throws {
        let chat = try ChatFixture { $0.ratings = true }
        defer { chat.server.stop() }
        let client = try chat.socket(chat.fixture.clientA.access)
        let coach = try chat.socket(chat.fixture.coachX.access)
        #expect(errorCode(try client.command("rating.submit", ["thread_id": chat.thread, "stars": 6])) == "out_of_range")
        #expect(errorCode(try client.command("rating.submit", ["thread_id": chat.thread])) == "missing_field")
        #expect(errorCode(try client.command("rating.submit", ["thread_id": chat.thread, "stars": 4,
                                                               "feedback": String(repeating: "é", count: 501)])) == "out_of_range")
        #expect(errorCode(try coach.command("rating.submit", ["thread_id": chat.thread, "stars": 5])) == "forbidden")
        #expect(errorCode(try client.command("rating.submit", ["thread_id": chat.thread, "stars": 5,
                                                               "session_id": "nope"])) == "session_not_found")
        _ = try client.result("rating.submit", ["thread_id": chat.thread, "stars": 4, "feedback": "Clear plans"])
        _ = try client.result("rating.skip", ["thread_id": chat.thread])
        _ = try client.result("rating.submit", ["thread_id": chat.thread, "stars": 5, "feedback": String(repeating: "é", count: 500)])

        let api = chat.fixture.api
        let ratings = try api.call("GET", "/v1/admin/coaches/\(chat.fixture.coachX.id)/ratings", token: chat.fixture.admin.access)
        #expect(ratings.status == 200)
        #expect(ratings.json["average"] as? Double == 4.5 && ratings.json["count"] as? Int == 2 && ratings.json["skipped"] as? Int == 1)
        let recent = try #require(ratings.json["recent"] as? [[String: Any]])
        #expect(recent.count == 3 && recent.last?["feedback"] as? String == "Clear plans" && recent[1]["stars"] == nil)
        #expect(try api.call("GET", "/v1/admin/coaches/\(chat.fixture.coachY.id)/ratings", token: chat.fixture.admin.access)
            .json["count"] as? Int == 0)
        #expect(try api.call("GET", "/v1/admin/coaches/\(chat.fixture.coachX.id)/ratings", token: chat.fixture.coachX.access).status == 403)
        #expect(try api.call("GET", "/v1/admin/coaches/\(chat.fixture.clientA.id)/ratings", token: chat.fixture.admin.access).status == 404)
    }

    @Test func aCompletedSessionAsks() throws {
        let chat = try ChatFixture { $0.ratings = true }
        defer { chat.server.stop() }
        let client = try chat.socket(chat.fixture.clientA.access)
        let coach = try chat.socket(chat.fixture.coachX.access)
        let start = Int(Date().timeIntervalSince1970) + 120  // inside the join window
        let id = try #require(try coach.result("session.invite", ["thread_id": chat.thread, "start": start, "duration_minutes": 15,
                                                                  "purpose": "Form check"])["id"] as? String)
        _ = try client.result("session.act", ["session_id": id, "action": "accept"])
        _ = try coach.result("session.act", ["session_id": id, "action": "join"])
        #expect(Self.prompts(client).isEmpty)
        _ = try coach.result("session.act", ["session_id": id, "action": "complete"])
        let prompts = Self.prompts(client)
        #expect(prompts.count == 1 && prompts.first?["reason"] as? String == "session" && prompts.first?["session_id"] as? String == id)
        _ = try client.result("rating.submit", ["thread_id": chat.thread, "stars": 5, "session_id": id])
    }

    @Test func withoutRatingsNothingAsks() throws {
        let chat = try ChatFixture()
        defer { chat.server.stop() }
        let client = try chat.socket(chat.fixture.clientA.access)
        for n in 1...10 { try Self.send(client, chat.thread, "m\(n)") }
        #expect(Self.prompts(client).isEmpty)
        #expect(errorCode(try client.command("rating.submit", ["thread_id": chat.thread, "stars": 5])) == "forbidden")
    }

    @Test func theCountSurvivesARestart() throws {
        let directory = NSTemporaryDirectory() + "spotter-ratings-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var token = "", thread = ""
        do {
            let server = try TestServer(dataDirectory: directory) { $0.ratings = true }
            let pair = try CoachingFixture.linkedPair(on: server)
            (token, thread) = (pair.client.access, pair.thread)
            let socket = try SpotterSocket(port: server.port, token: token)
            for n in 1...7 { try Self.send(socket, thread, "m\(n)") }
            _ = server.stop()
        }
        let server = try TestServer(dataDirectory: directory) { $0.ratings = true }
        defer { server.stop() }
        let socket = try SpotterSocket(port: server.port, token: token)
        var seen: [Int] = []
        for n in 8...12 {
            try Self.send(socket, thread, "m\(n)")
            if !Self.prompts(socket).isEmpty { seen.append(n) }
        }
        #expect(seen == [10])
    }
}
