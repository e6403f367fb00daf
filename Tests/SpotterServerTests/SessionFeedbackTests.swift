import Foundation
import Testing
import SpotterServer
import TestSupport

/// Feedback from both sides after a video session (seed 002 "After Session: Both can leave feedback"), over real
/// sockets: only the session's coach and client, only once it is completed, once per side; the client's feedback
/// is seen by both, the coach's private notes and rating by the coach alone.
@Suite("Session feedback on the live socket", .serialized)
struct SessionFeedbackTests {
    /// A session of coach X and client A, accepted (not yet completed), with sockets for both.
    static func acceptedSession(_ chat: ChatFixture, coachHeaders: [(String, String)] = [])
        throws -> (coach: SpotterSocket, client: SpotterSocket, id: String) {
        let client = try chat.socket(chat.fixture.clientA.access)
        let coach = try chat.socket(chat.fixture.coachX.access, headers: coachHeaders)
        let start = Int(Date().timeIntervalSince1970) + 120  // inside the join window
        let id = try #require(try coach.result("session.invite", ["thread_id": chat.thread, "start": start,
                                                                  "duration_minutes": 15, "purpose": "Form check"])["id"] as? String)
        _ = try client.result("session.act", ["session_id": id, "action": "accept"])
        return (coach, client, id)
    }

    static func complete(_ coach: SpotterSocket, _ id: String) throws {
        _ = try coach.result("session.act", ["session_id": id, "action": "join"])
        _ = try coach.result("session.act", ["session_id": id, "action": "complete"])
    }

    @Test func bothSidesGiveFeedbackAndEachSeesWhatIsTheirs() throws {
        let chat = try ChatFixture()
        defer { chat.server.stop() }
        let (coach, client, id) = try Self.acceptedSession(chat)
        // Before the session is completed: refused, for both sides.
        #expect(errorCode(try client.command("session.feedback", ["session_id": id, "rating": 5])) == "session_action_not_allowed")
        #expect(errorCode(try coach.command("session.feedback", ["session_id": id, "rating": 4])) == "session_action_not_allowed")
        try Self.complete(coach, id)

        let privateNotes = "Client skipped the warm-up.\nWatch the left knee.\t(private)"
        let clientNotes = "Great form tips, شكرا"
        _ = try client.result("session.feedback", ["session_id": id, "rating": 5, "notes": clientNotes])
        _ = try coach.result("session.feedback", ["session_id": id, "rating": 3, "notes": privateNotes])

        // The client sees their own feedback, never the coach's notes nor rating.
        let clientReply = try client.command("session.feedback.read", ["session_id": id])
        let clientView = try #require(clientReply["result"] as? [String: Any])
        #expect(clientView["session_id"] as? String == id && clientView["coach"] == nil)
        let own = try #require(clientView["client"] as? [String: Any])
        #expect(own["rating"] as? Int == 5 && own["notes"] as? String == clientNotes && (own["created_at"] as? Int ?? 0) > 0)
        let clientText = String(decoding: try JSONSerialization.data(withJSONObject: clientReply), as: UTF8.self)
        #expect(!clientText.contains("warm-up") && !clientText.contains("left knee"))

        // The coach sees both.
        let coachView = try coach.result("session.feedback.read", ["session_id": id])
        #expect((coachView["client"] as? [String: Any])?["rating"] as? Int == 5)
        #expect((coachView["client"] as? [String: Any])?["notes"] as? String == clientNotes)
        let coachOwn = try #require(coachView["coach"] as? [String: Any])
        #expect(coachOwn["rating"] as? Int == 3 && coachOwn["notes"] as? String == privateNotes)

        // Once per side: a second is refused and changes nothing.
        let again = try client.command("session.feedback", ["session_id": id, "rating": 1, "notes": "changed my mind"])
        #expect(errorCode(again) == "conflict" && (again["error"] as? [String: Any])?["field"] as? String == "session_id")
        #expect(errorCode(try coach.command("session.feedback", ["session_id": id, "rating": 5])) == "conflict")
        let after = try client.result("session.feedback.read", ["session_id": id])
        #expect((after["client"] as? [String: Any])?["rating"] as? Int == 5 && after["coach"] == nil)
    }

    @Test func outsidersAndTheCoachsOtherClientsAreRefused() throws {
        let chat = try ChatFixture()
        defer { chat.server.stop() }
        // Client C becomes coach X's other client; client B and coach Y have nothing to do with the session.
        _ = try chat.fixture.api.call("POST", "/v1/me/coach", ["coach_id": chat.fixture.coachX.id], token: chat.fixture.clientC.access)
        let (coach, client, id) = try Self.acceptedSession(chat)
        try Self.complete(coach, id)
        _ = try client.result("session.feedback", ["session_id": id, "rating": 4, "notes": "Helpful"])
        _ = try coach.result("session.feedback", ["session_id": id, "rating": 2, "notes": "private"])
        for outsider in [chat.fixture.clientC, chat.fixture.clientB, chat.fixture.coachY] {
            let socket = try chat.socket(outsider.access)
            #expect(errorCode(try socket.command("session.feedback", ["session_id": id, "rating": 1])) == "session_not_found")
            #expect(errorCode(try socket.command("session.feedback.read", ["session_id": id])) == "session_not_found")
        }
        #expect(errorCode(try client.command("session.feedback", ["session_id": "no-such-session", "rating": 3])) == "session_not_found")
        #expect(errorCode(try client.command("session.feedback.read", [:])) == "missing_field")
        // Nothing an outsider tried was stored.
        let coachView = try coach.result("session.feedback.read", ["session_id": id])
        #expect((coachView["client"] as? [String: Any])?["rating"] as? Int == 4)
        #expect((coachView["coach"] as? [String: Any])?["rating"] as? Int == 2)
    }

    @Test func badRatingsAndNotesAreRefusedInBothLanguages() throws {
        let chat = try ChatFixture()
        defer { chat.server.stop() }
        let (coach, client, id) = try Self.acceptedSession(chat, coachHeaders: [("Accept-Language", "ar")])
        try Self.complete(coach, id)
        let refusals: [([String: Any], String, String)] = [
            (["session_id": id], "missing_field", "rating"),
            ([:], "missing_field", "session_id"),
            (["session_id": id, "rating": 0], "out_of_range", "rating"),
            (["session_id": id, "rating": 6], "out_of_range", "rating"),
            (["session_id": id, "rating": -1], "out_of_range", "rating"),
            (["session_id": id, "rating": 9_007_199_254_740_991], "out_of_range", "rating"),
            (["session_id": id, "rating": 3, "notes": String(repeating: "é", count: 2_001)], "out_of_range", "notes"),
            (["session_id": id, "rating": 3, "notes": "a\u{0}b"], "invalid_message", "notes"),
            (["session_id": id, "rating": 3, "notes": "bell\u{7}"], "invalid_message", "notes"),
            (["session_id": id, "rating": 3, "notes": "esc\u{1B}[2J"], "invalid_message", "notes"),
            (["session_id": id, "rating": 3, "notes": "line\rbreak"], "invalid_message", "notes"),
        ]
        for (fields, code, field) in refusals {
            let reply = try coach.command("session.feedback", fields)
            let error = reply["error"] as? [String: Any]
            #expect(errorCode(reply) == code && error?["field"] as? String == field, "\(fields)")
            #expect((error?["message"] as? String)?.hasArabic == true)
        }
        #expect(errorCode(try client.command("session.feedback", ["session_id": id, "rating": "5"])) != nil)
        #expect(errorCode(try client.command("session.feedback", ["session_id": id, "rating": 5, "stars": 5])) == "unknown_field")
        // Nothing refused was stored; the bounds themselves are accepted (2,000 characters, newlines, tabs).
        #expect(try coach.result("session.feedback.read", ["session_id": id])["coach"] == nil)
        let longest = String(repeating: "é", count: 1_999) + "\n"
        _ = try coach.result("session.feedback", ["session_id": id, "rating": 1, "notes": longest])
        _ = try client.result("session.feedback", ["session_id": id, "rating": 5])
        let view = try coach.result("session.feedback.read", ["session_id": id])
        #expect((view["coach"] as? [String: Any])?["notes"] as? String == longest)
        let clientSide = try #require(view["client"] as? [String: Any])
        #expect(clientSide["rating"] as? Int == 5 && clientSide["notes"] == nil)
    }
}
