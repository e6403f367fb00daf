import Foundation
import Testing
import SpotterServer
import TestSupport

/// The server-to-server API: an admin makes a key, a service posts system messages into a thread with it
/// (durable, live to both sides, idempotent), and a revoked or unknown key is refused.
@Suite("Server-to-server system messages", .serialized)
struct SystemMessagesTests {
    static func post(_ server: TestServer, _ thread: String, key: String?, _ fields: [String: Any]) throws -> APIResponse {
        try APIClient(port: server.port).call("POST", "/v1/threads/\(thread)/system-messages", fields, token: key)
    }

    @Test func aServicePostsIdempotentSystemMessagesWithItsKey() throws {
        let chat = try ChatFixture { $0.tiers = true }
        defer { chat.server.stop() }
        let api = chat.fixture.api
        #expect(try api.call("POST", "/v1/admin/api-keys", ["name": "Planner"], token: chat.fixture.coachX.access).status == 403)
        let made = try api.call("POST", "/v1/admin/api-keys", ["name": "Workout planner"], token: chat.fixture.admin.access)
        #expect(made.status == 201 && made.string("name") == "Workout planner")
        let key = try #require(made.string("key"))
        #expect(key.hasPrefix("spk_") && key.count > 40)
        // The list never shows a key again.
        let listed = try #require(try api.call("GET", "/v1/admin/api-keys", token: chat.fixture.admin.access).json["keys"] as? [[String: Any]])
        #expect(listed.count == 1 && listed[0]["key"] == nil && listed[0]["id"] as? String == made.string("id"))

        let coach = try chat.socket(chat.fixture.coachX.access)
        let client = try chat.socket(chat.fixture.clientA.access)
        let posted = try Self.post(chat.server, chat.thread, key: key, ["client_message_id": "plan-1", "text": "Workout plan generated"])
        #expect(posted.status == 200 && posted.string("kind") == "system" && posted.json["seq"] as? Int == 1)
        // Both sides get it; on the client's side (the default), so it is unread for the coach.
        let atCoach = try coach.next("message")
        #expect((atCoach["message"] as? [String: Any])?["text"] as? String == "Workout plan generated" && atCoach["unread"] as? Int == 1)
        #expect((try client.next("message")["message"] as? [String: Any])?["kind"] as? String == "system")
        // A retry answers the original; the same id with other text is a conflict; nothing new is written.
        #expect(try Self.post(chat.server, chat.thread, key: key, ["client_message_id": "plan-1", "text": "Workout plan generated"])
            .json["seq"] as? Int == 1)
        #expect(try Self.post(chat.server, chat.thread, key: key, ["client_message_id": "plan-1", "text": "Other"]).errorCode == "idempotency_conflict")
        let history = try client.result("history", ["thread_id": chat.thread])
        #expect((history["messages"] as? [[String: Any]])?.count == 1)
        // Not charged to the Freemium client's 20 messages.
        #expect(try api.call("GET", "/v1/admin/users/\(chat.fixture.clientA.id)/usage", token: chat.fixture.admin.access)
            .object("quota").flatMap { $0["messages"] as? [String: Any] }?["used"] as? Int == 0)
        // On the coach's side: the client gets it unread.
        _ = try Self.post(chat.server, chat.thread, key: key, ["client_message_id": "done-1", "text": "Workout completed", "side": "coach"])
        #expect(try client.next("message")["unread"] as? Int == 1)

        // Bad calls: no key, a user's token, an unknown key, an unknown thread, bad input.
        #expect(try Self.post(chat.server, chat.thread, key: nil, ["client_message_id": "x", "text": "t"]).status == 401)
        #expect(try Self.post(chat.server, chat.thread, key: chat.fixture.admin.access, ["client_message_id": "x", "text": "t"]).status == 401)
        #expect(try Self.post(chat.server, chat.thread, key: "spk_" + String(repeating: "A", count: 43), ["client_message_id": "x", "text": "t"]).status == 401)
        #expect(try Self.post(chat.server, "no-such-thread", key: key, ["client_message_id": "x", "text": "t"]).status == 404)
        #expect(try Self.post(chat.server, chat.thread, key: key, ["client_message_id": "x", "text": " "]).errorCode == "invalid_message")
        #expect(try Self.post(chat.server, chat.thread, key: key, ["client_message_id": "x", "text": "t", "side": "admin"]).errorCode == "bad_request")

        // Revoked: refused from then on.
        let id = try #require(made.string("id"))
        #expect(try api.call("DELETE", "/v1/admin/api-keys/\(id)", token: chat.fixture.admin.access).status == 204)
        #expect(try api.call("DELETE", "/v1/admin/api-keys/nope", token: chat.fixture.admin.access).status == 404)
        #expect(try Self.post(chat.server, chat.thread, key: key, ["client_message_id": "plan-2", "text": "Again"]).status == 401)
        let after = try #require(try api.call("GET", "/v1/admin/api-keys", token: chat.fixture.admin.access).json["keys"] as? [[String: Any]])
        #expect(after.first?["revoked_at"] is Int)
    }
}
