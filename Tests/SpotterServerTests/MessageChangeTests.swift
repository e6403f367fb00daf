import Foundation
import Testing
import SpotterServer
import SpotterCore
import TestSupport

/// `message.edit` and `message.delete` over real sockets: every device of both sides, history, the list's
/// preview and a resume see the message as it now stands; who may change what, and when.
@Suite("Editing and deleting messages", .serialized)
struct MessageChangeTests {
    private func code(_ reply: [String: Any]) -> String? { (reply["error"] as? [String: Any])?["code"] as? String }

    private func messages(_ socket: SpotterSocket, _ thread: String) throws -> [[String: Any]] {
        try socket.result("history", ["thread_id": thread])["messages"] as? [[String: Any]] ?? []
    }

    @Test func anEditAndADeleteAreSeenAlikeOnEveryDeviceInHistoryThePreviewAndAfterAResume() throws {
        let chat = try ChatFixture()
        defer { chat.server.stop() }
        let client = try chat.socket(chat.fixture.clientA.access)
        let clientPhone = try chat.socket(chat.fixture.clientA.access)
        let coach = try chat.socket(chat.fixture.coachX.access)
        let coachCursor = coach.helloCursor
        let first = try client.result("message.send", ["thread_id": chat.thread, "client_message_id": "a", "text": "my weight is 71 kg"])
        _ = try client.result("message.send", ["thread_id": chat.thread, "client_message_id": "b", "text": "and my blood pressure is 150/95"])
        let seq1 = try #require(first["seq"] as? Int)

        let edited = try client.result("message.edit", ["thread_id": chat.thread, "seq": seq1, "text": "my weight is 70 kg"])
        #expect(edited["text"] as? String == "my weight is 70 kg")
        #expect((edited["edited_at"] as? Int ?? 0) > 0)
        let deleted = try client.result("message.delete", ["thread_id": chat.thread, "seq": seq1 + 1])
        #expect(deleted["text"] == nil && (deleted["deleted_at"] as? Int ?? 0) > 0)

        for socket in [coach, clientPhone, client] {
            let editEvent = try socket.next("message.edited")
            #expect(editEvent["seq"] as? Int == seq1 && editEvent["text"] as? String == "my weight is 70 kg")
            #expect(editEvent["thread_id"] as? String == chat.thread && (editEvent["cursor"] as? Int ?? 0) > 0)
            let deleteEvent = try socket.next("message.deleted")
            #expect(deleteEvent["seq"] as? Int == seq1 + 1 && deleteEvent["by"] as? String == "sender")
        }
        // History on both sides: the edited text, a tombstone without its words.
        for socket in [coach, client] {
            let listed = try messages(socket, chat.thread)
            #expect(listed.count == 2)
            #expect(listed.first { $0["seq"] as? Int == seq1 }?["text"] as? String == "my weight is 70 kg")
            let tombstone = try #require(listed.first { $0["seq"] as? Int == seq1 + 1 })
            #expect(tombstone["text"] == nil && tombstone["deleted_at"] != nil && tombstone["client_message_id"] as? String == "b")
        }
        // The list's preview no longer shows the deleted words; the unread count keeps the tombstone until read.
        let threads = try coach.result("threads")["threads"] as? [[String: Any]] ?? []
        let listed = try #require(threads.first { $0["thread_id"] as? String == chat.thread })
        #expect(listed["last_preview"] as? String == "🚫")
        #expect(listed["unread"] as? Int == 2)
        // A device that was away resumes from before the first send: the messages as they stand, then the changes.
        let back = try chat.socket(chat.fixture.coachX.access)
        #expect(try back.command("resume", ["cursor": coachCursor])["ok"] as? Bool == true)
        let replayed = back.drain(for: 0.5)
        let texts = replayed.filter { $0["type"] as? String == "message" }.map { ($0["message"] as? [String: Any])?["text"] as? String }
        #expect(texts == ["my weight is 70 kg", nil])
        #expect(replayed.contains { $0["type"] as? String == "message.edited" && $0["text"] as? String == "my weight is 70 kg" })
        #expect(replayed.contains { $0["type"] as? String == "message.deleted" && $0["seq"] as? Int == seq1 + 1 })
        #expect(!replayed.contains { "\($0)".contains("150/95") })
        // A retry of the deleted send gets the tombstone, and makes nothing new.
        let retried = try client.result("message.send", ["thread_id": chat.thread, "client_message_id": "b", "text": "and my blood pressure is 150/95"])
        #expect(retried["seq"] as? Int == seq1 + 1 && retried["deleted_at"] != nil)
        #expect(try messages(coach, chat.thread).count == 2)
    }

    @Test func onlyTheSenderChangesTheirOwnTextAndNeverAnOutsider() throws {
        let chat = try ChatFixture()
        defer { chat.server.stop() }
        let client = try chat.socket(chat.fixture.clientA.access)
        let coach = try chat.socket(chat.fixture.coachX.access)
        let outsider = try chat.socket(chat.fixture.clientB.access)
        let otherCoach = try chat.socket(chat.fixture.coachY.access)
        let sent = try client.result("message.send", ["thread_id": chat.thread, "client_message_id": "a", "text": "original"])
        let seq = try #require(sent["seq"] as? Int)
        let meal: [String: Any] = ["name": "Oats", "ingredients": [], "calories": 300, "protein_g": 10, "carbs_g": 50, "fats_g": 5, "meal_type": "breakfast"]
        let mealSent = try client.result("message.send", ["thread_id": chat.thread, "client_message_id": "m", "kind": "meal_log", "meal": meal])

        #expect(code(try coach.command("message.edit", ["thread_id": chat.thread, "seq": seq, "text": "x"])) == "message_not_changeable")
        #expect(code(try coach.command("message.delete", ["thread_id": chat.thread, "seq": seq])) == "message_not_changeable")
        for stranger in [outsider, otherCoach] {
            #expect(code(try stranger.command("message.edit", ["thread_id": chat.thread, "seq": seq, "text": "x"])) == "forbidden")
            #expect(code(try stranger.command("message.delete", ["thread_id": chat.thread, "seq": seq])) == "forbidden")
        }
        // A meal card is not edited (it can be deleted); seqs that name nothing; text rules as for a send.
        #expect(code(try client.command("message.edit", ["thread_id": chat.thread, "seq": mealSent["seq"]!, "text": "x"])) == "message_not_changeable")
        for bad in [0, 99, -1, 9_007_199_254_740_992] {
            let reply = try client.command("message.delete", ["thread_id": chat.thread, "seq": bad])
            #expect(["not_found", "out_of_range"].contains(code(reply)), "seq \(bad): \(reply)")
        }
        #expect(code(try client.command("message.edit", ["thread_id": chat.thread, "seq": seq, "text": "  "])) == "invalid_message")
        #expect(code(try client.command("message.edit", ["thread_id": chat.thread, "seq": seq, "text": "a\u{0}b"])) == "invalid_message")
        let noText = code(try client.command("message.edit", ["thread_id": chat.thread, "seq": seq]))
        #expect(noText == "missing_field" || noText == "invalid_message")
        #expect(code(try client.command("message.delete", ["thread_id": chat.thread])) == "missing_field")
        #expect(code(try client.command("message.delete", ["thread_id": chat.thread, "seq": seq, "text": "x"])) == "unknown_field")
        // Nothing changed.
        #expect(try messages(coach, chat.thread).first { $0["seq"] as? Int == seq }?["text"] as? String == "original")
        // Deleted: a second delete answers the same tombstone; an edit is refused.
        _ = try client.result("message.delete", ["thread_id": chat.thread, "seq": seq])
        #expect(try client.result("message.delete", ["thread_id": chat.thread, "seq": seq])["deleted_at"] != nil)
        #expect(code(try client.command("message.edit", ["thread_id": chat.thread, "seq": seq, "text": "back"])) == "message_deleted")
        #expect(try client.result("message.delete", ["thread_id": chat.thread, "seq": mealSent["seq"]!])["meal"] == nil)
        let meals = try client.result("meals", ["thread_id": chat.thread])["meals"] as? [Any] ?? []
        #expect(meals.isEmpty)
    }

    @Test func anEditAfterTheWindowIsRefusedButADeleteIsNot() throws {
        let clock = TestClock(now: 1_800_000_000)
        let chat = try ChatFixture { $0.clock = clock; $0.editWindowSeconds = 60 }
        defer { chat.server.stop() }
        let client = try chat.socket(chat.fixture.clientA.access)
        let seq = try #require(try client.result("message.send", ["thread_id": chat.thread, "client_message_id": "a", "text": "hi"])["seq"] as? Int)
        clock.advance(by: 60)
        #expect(try client.result("message.edit", ["thread_id": chat.thread, "seq": seq, "text": "hi!"])["text"] as? String == "hi!")
        clock.advance(by: 1)
        #expect(code(try client.command("message.edit", ["thread_id": chat.thread, "seq": seq, "text": "late"])) == "edit_window_closed")
        #expect(try client.result("message.delete", ["thread_id": chat.thread, "seq": seq])["deleted_at"] as? Int == 1_800_000_061)
    }
}
