import Foundation
import Testing
import SpotterServer
import TestSupport
import GRDB
import SpotterPorts

/// A coach and a linked client, each with a socket.
struct ChatFixture {
    let fixture: CoachingFixture
    let thread: String
    var server: TestServer { fixture.server }

    init(_ configure: (inout ServerConfig) -> Void = { _ in }) throws {
        fixture = try CoachingFixture(configure)
        thread = try fixture.api.call("GET", "/v1/me/coach", token: fixture.clientA.access).string("thread_id")!
    }

    func socket(_ token: String, headers: [(String, String)] = []) throws -> SpotterSocket {
        try SpotterSocket(port: server.port, token: token, headers: headers)
    }
}

@Suite("Messaging", .serialized)
struct MessagingTests {
    @Test func sendIsAckedWithSeqAndPushedToBothSidesAndOtherDevices() throws {
        let chat = try ChatFixture()
        defer { chat.server.stop() }
        let client = try chat.socket(chat.fixture.clientA.access)
        let clientTablet = try chat.socket(chat.fixture.clientA.access)
        let coach = try chat.socket(chat.fixture.coachX.access)

        let first = try client.result("message.send", ["thread_id": chat.thread, "client_message_id": "m1", "text": "مرحبا coach 👋"])
        #expect(first["seq"] as? Int == 1)
        #expect(first["sender_id"] as? String == chat.fixture.clientA.id)
        #expect((first["created_at"] as? Int ?? 0) > 0)
        let second = try client.result("message.send", ["thread_id": chat.thread, "client_message_id": "m2", "text": "second"])
        #expect(second["seq"] as? Int == 2)

        let atCoach = try coach.next("message")
        #expect((atCoach["message"] as? [String: Any])?["text"] as? String == "مرحبا coach 👋")
        let coachCursor = try #require(atCoach["cursor"] as? Int)
        // The coach's badge travels with each message: 1 then 2 unread.
        #expect(atCoach["unread"] as? Int == 1)
        let secondAtCoach = try coach.next("message")
        #expect(secondAtCoach["cursor"] as? Int ?? 0 > coachCursor)
        #expect(secondAtCoach["unread"] as? Int == 2)
        #expect(secondAtCoach["total_unread"] as? Int == 2)
        // The sender's other device gets its own message too, with the thread read for its writer.
        let atTablet = try clientTablet.next("message")
        #expect((atTablet["message"] as? [String: Any])?["client_message_id"] as? String == "m1")
        #expect(atTablet["unread"] as? Int == 0)
        // No separate `unread` event follows a message.
        #expect(coach.drain(for: 0.3).filter { $0["type"] as? String == "unread" }.isEmpty)
    }

    @Test func theStoreWriterShowsInMetrics() throws {
        let chat = try ChatFixture()
        defer { chat.server.stop() }
        let jobsBefore = try chat.server.metric("spotter_store_jobs_total") ?? -1
        let client = try chat.socket(chat.fixture.clientA.access)
        for i in 0..<3 {
            _ = try client.result("message.send", ["thread_id": chat.thread, "client_message_id": "m\(i)", "text": "hi \(i)"])
        }
        // Three acked sends: at least three more committed jobs, in at least one batch, and nothing left in
        // flight.
        let jobs = try #require(try chat.server.metric("spotter_store_jobs_total"))
        #expect(jobs >= jobsBefore + 3)
        let batches = try #require(try chat.server.metric("spotter_store_batches_total"))
        #expect(batches >= 1 && batches <= jobs)
        #expect(try chat.server.metric("spotter_store_writes_in_flight") == 0)
        // Each acked send is counted and timed (the console's figures read these).
        #expect(try chat.server.metric("spotter_messages_total") == 3)
        #expect(try chat.server.metric("spotter_send_ack_seconds_count") == 3)
        #expect(try chat.server.metric(#"spotter_send_ack_seconds_bucket{le="+Inf"}"#) == 3)
    }

    @Test func aRetriedSendReturnsTheOriginalAndCreatesNothing() throws {
        let chat = try ChatFixture()
        defer { chat.server.stop() }
        let client = try chat.socket(chat.fixture.clientA.access)
        let coach = try chat.socket(chat.fixture.coachX.access)
        let sent = try client.result("message.send", ["thread_id": chat.thread, "client_message_id": "same", "text": "once"])
        let again = try client.result("message.send", ["thread_id": chat.thread, "client_message_id": "same", "text": "once"])
        #expect(again["seq"] as? Int == sent["seq"] as? Int)
        #expect(again["created_at"] as? Int == sent["created_at"] as? Int)
        let history = try coach.result("history", ["thread_id": chat.thread])
        #expect((history["messages"] as? [[String: Any]])?.count == 1)
        let pushed = coach.drain(for: 0.3).filter { $0["type"] as? String == "message" }
        #expect(pushed.count == 1)
    }

    @Test(arguments: [
        (#"{"thread_id":"T","client_message_id":"a","text":"   "}"#, "invalid_message"),
        (#"{"thread_id":"T","client_message_id":"a","text":"a\u0000b"}"#, "invalid_message"),
        (#"{"thread_id":"T","client_message_id":"a","text":"LONG"}"#, "message_too_long"),
        (#"{"thread_id":"T","client_message_id":"a","kind":"system","text":"hi"}"#, "invalid_message"),
        (#"{"thread_id":"T","text":"hi"}"#, "missing_field"),
        (#"{"thread_id":"T","client_message_id":"a","text":42}"#, "bad_request"),
        (#"{"thread_id":"nope","client_message_id":"a","text":"hi"}"#, "forbidden"),
        (#"{"thread_id":"T","client_message_id":"a","kind":"meal_log","meal":{"name":"Oats","ingredients":[],"calories":-5,"protein_g":1,"carbs_g":1,"fats_g":1,"meal_type":"breakfast"}}"#, "out_of_range"),
    ])
    func badMessagesGetTypedErrorsAndTheSocketStays(_ body: String, _ code: String) throws {
        let chat = try ChatFixture()
        defer { chat.server.stop() }
        let client = try chat.socket(chat.fixture.clientA.access)
        let json = body.replacingOccurrences(of: "\"T\"", with: "\"\(chat.thread)\"")
            .replacingOccurrences(of: "LONG", with: String(repeating: "ب", count: 1001))
        var fields = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        fields["id"] = nil
        let reply = try client.command("message.send", fields)
        #expect(reply["ok"] as? Bool == false)
        #expect((reply["error"] as? [String: Any])?["code"] as? String == code)
        // Nothing was stored, and the socket still works.
        let ok = try client.result("message.send", ["thread_id": chat.thread, "client_message_id": "ok", "text": String(repeating: "ب", count: 1000)])
        #expect(ok["seq"] as? Int == 1)
    }

    @Test func aCoachCannotWriteToAnotherCoachsThread() throws {
        let chat = try ChatFixture()
        defer { chat.server.stop() }
        let intruder = try chat.socket(chat.fixture.coachY.access)
        let reply = try intruder.command("message.send", ["thread_id": chat.thread, "client_message_id": "x", "text": "hi"])
        #expect((reply["error"] as? [String: Any])?["code"] as? String == "forbidden")
        let history = try intruder.command("history", ["thread_id": chat.thread])
        #expect((history["error"] as? [String: Any])?["code"] as? String == "forbidden")
    }

    @Test func mealCardsTravelWhole() throws {
        let chat = try ChatFixture()
        defer { chat.server.stop() }
        let client = try chat.socket(chat.fixture.clientA.access)
        let meal: [String: Any] = ["name": "Grilled chicken", "ingredients": ["chicken", "rice"], "calories": 520,
                                   "protein_g": 45, "carbs_g": 50, "fats_g": 12, "meal_type": "lunch", "photo_ref": "photos/1.jpg"]
        let sent = try client.result("message.send", ["thread_id": chat.thread, "client_message_id": "meal1", "kind": "meal_log", "meal": meal])
        #expect(sent["kind"] as? String == "meal_log")
        #expect((sent["meal"] as? [String: Any])?["protein_g"] as? Double == 45)
        let threads = try client.result("threads")
        #expect(((threads["threads"] as? [[String: Any]])?.first)?["last_preview"] as? String == "🍽 Grilled chicken")
    }

    @Test func receiptsAndUnreadBadges() throws {
        let chat = try ChatFixture()
        defer { chat.server.stop() }
        let client = try chat.socket(chat.fixture.clientA.access)
        let coach = try chat.socket(chat.fixture.coachX.access)
        for n in 1...3 {
            _ = try client.result("message.send", ["thread_id": chat.thread, "client_message_id": "r\(n)", "text": "msg \(n)"])
        }
        let delivered = try coach.result("receipt.delivered", ["thread_id": chat.thread, "seq": 3])
        #expect(delivered["delivered_seq"] as? Int == 3)
        #expect(delivered["unread"] as? Int == 3)
        let receipt = try client.next("receipt")
        #expect(receipt["delivered_seq"] as? Int == 3)
        #expect(receipt["read_seq"] as? Int == 0)

        let read = try coach.result("thread.read", ["thread_id": chat.thread, "seq": 2])
        #expect(read["unread"] as? Int == 1)
        #expect(read["total_unread"] as? Int == 1)
        #expect(try client.next("receipt")["read_seq"] as? Int == 2)  // ✓✓ on messages 1 and 2
        // Positions never move back.
        #expect(try coach.result("thread.read", ["thread_id": chat.thread, "seq": 1])["read_seq"] as? Int == 2)

        let list = try coach.result("threads")
        let row = try #require((list["threads"] as? [[String: Any]])?.first { $0["thread_id"] as? String == chat.thread })
        #expect(row["unread"] as? Int == 1)
        #expect(row["read_seq"] as? Int == 2)
        #expect(row["peer_online"] as? Bool == true)
        #expect(row["last_preview"] as? String == "msg 3")
        #expect(list["total_unread"] as? Int == 1)
    }

    @Test func presenceAndTypingReachTheLinkedPeerOnly() throws {
        let chat = try ChatFixture()
        defer { chat.server.stop() }
        let coach = try chat.socket(chat.fixture.coachX.access)
        let other = try chat.socket(chat.fixture.coachY.access)
        let client = try chat.socket(chat.fixture.clientA.access)
        let online = try coach.next("presence")
        #expect(online["user_id"] as? String == chat.fixture.clientA.id)
        #expect(online["online"] as? Bool == true)

        _ = try client.result("typing", ["thread_id": chat.thread])
        _ = try client.result("typing", ["thread_id": chat.thread])  // within 2 s: not forwarded again
        let typing = try coach.next("typing")
        #expect(typing["thread_id"] as? String == chat.thread)
        #expect(typing["expires_in"] as? Int == 5)

        client.close()
        let offline = try coach.next("presence")
        #expect(offline["online"] as? Bool == false)
        #expect((offline["last_seen_at"] as? Int ?? 0) > 0)
        #expect(coach.drain(for: 0.3).filter { $0["type"] as? String == "typing" }.isEmpty)
        #expect(other.drain(for: 0.2).isEmpty)  // another coach hears nothing
    }

    @Test func resumeDeliversEverythingMissedThenLive() throws {
        let chat = try ChatFixture { $0.commandBurst = 1000 }
        defer { chat.server.stop() }
        let coach = try chat.socket(chat.fixture.coachX.access)
        let cursor = coach.helloCursor
        coach.close()
        let client = try chat.socket(chat.fixture.clientA.access)
        for n in 1...250 {  // more than one replay page
            _ = try client.result("message.send", ["thread_id": chat.thread, "client_message_id": "x\(n)", "text": "n\(n)"])
        }
        let back = try chat.socket(chat.fixture.coachX.access)
        // During the replay, one more message arrives live (its reply is not awaited). It is sent after the
        // resume: sent before, it may be delivered live first, and a resume from an older cursor then sends it
        // again, as asked.
        let reply = try back.command("resume", ["cursor": cursor]) {
            client.ws.send(text: #"{"id":"late","type":"message.send","thread_id":"\#(chat.thread)","client_message_id":"late","text":"late"}"#)
        }
        #expect(reply["ok"] as? Bool == true)
        let events = back.drain(for: 0.5)  // what arrived during the replay, and after
        let logged = events.filter { $0["type"] as? String != "live" }
        let cursors = logged.compactMap { $0["cursor"] as? Int }
        // Cursors are log positions: increasing, never repeated (the seqs below show nothing is missing).
        #expect(cursors.first ?? 0 > cursor)
        #expect(zip(cursors, cursors.dropFirst()).allSatisfy { $0 < $1 }, "\(cursors.count) events: out of order or duplicated")
        // `live` comes once, after every replayed event.
        let liveIndex = try #require(events.firstIndex { $0["type"] as? String == "live" })
        #expect((events[liveIndex]["cursor"] as? Int ?? 0) >= cursors.prefix(liveIndex).last ?? 0)
        let texts = events.filter { $0["type"] as? String == "message" }.compactMap { ($0["message"] as? [String: Any])?["text"] as? String }
        #expect(Array(texts.prefix(250)) == (1...250).map { "n\($0)" })
        #expect(texts.contains("late"))
    }

    @Test func aCursorInTheConnectURLReplaysBeforeAnythingLive() throws {
        let chat = try ChatFixture()
        defer { chat.server.stop() }
        let client = try chat.socket(chat.fixture.clientA.access)
        for n in 1...3 { _ = try client.result("message.send", ["thread_id": chat.thread, "client_message_id": "u\(n)", "text": "u\(n)"]) }
        // The coach reconnects with the cursor it had (0) in the URL.
        let ws = try WebSocketTestClient(port: chat.server.port, path: "/v1/ws?access_token=\(chat.fixture.coachX.access)&cursor=0")
        var frames: [[String: Any]] = []
        while frames.last?["type"] as? String != "live" { frames.append(try ws.nextJSON()) }
        #expect(frames.first?["type"] as? String == "hello")
        let cursors = frames.dropFirst().dropLast().compactMap { $0["cursor"] as? Int }
        #expect(zip(cursors, cursors.dropFirst()).allSatisfy { $0 < $1 } && cursors.count == 4, "\(cursors)")  // the link, 3 messages
        #expect(frames.last?["cursor"] as? Int == cursors.last)
        // A bad cursor is refused before the upgrade.
        #expect(throws: BlockingSocket.Failure.self) {
            try WebSocketTestClient(port: chat.server.port, path: "/v1/ws?access_token=\(chat.fixture.coachX.access)&cursor=abc")
        }
    }

    @Test func tooManyCommandsAreRefusedButTheSocketStays() throws {
        let chat = try ChatFixture {
            $0.commandBurst = 3
            $0.commandsPerSecond = 1
        }
        defer { chat.server.stop() }
        let client = try chat.socket(chat.fixture.clientA.access)
        var codes: [String] = []
        for _ in 0..<5 {
            let reply = try client.command("threads")
            codes.append((reply["error"] as? [String: Any])?["code"] as? String ?? "ok")
        }
        #expect(codes == ["ok", "ok", "ok", "rate_limited", "rate_limited"])
        Thread.sleep(forTimeInterval: 1.1)
        #expect(try client.command("threads")["ok"] as? Bool == true)
    }

    /// A failed append: its send and any after it get an error, the chat state is rebuilt from the store, and
    /// the next send continues the thread's seq with no gap.
    @Test func aFailedAppendIsReportedAndTheSeqStaysGapless() throws {
        let chat = try ChatFixture()
        defer { chat.server.stop() }
        let client = try chat.socket(chat.fixture.clientA.access)
        #expect(try client.result("message.send", ["thread_id": chat.thread, "client_message_id": "f1", "text": "one"])["seq"] as? Int == 1)
        try chat.server.execute("ALTER TABLE log RENAME TO logAway")
        let failed = try client.command("message.send", ["thread_id": chat.thread, "client_message_id": "f2", "text": "two"])
        // Typed: nothing was saved, retry later (never a false ack, never a bare internal error).
        #expect(errorCode(failed) == "unavailable")
        #expect((failed["error"] as? [String: Any])?["retry_after"] as? Int == 1)
        try chat.server.execute("ALTER TABLE logAway RENAME TO log")
        // Refused while the state reloads (also `unavailable`), then accepted with the next seq after the last durable one.
        var seq: Int?
        var refusals: Set<String> = []
        for attempt in 0..<50 where seq == nil {
            let reply = try client.command("message.send", ["thread_id": chat.thread, "client_message_id": "f3-\(attempt)", "text": "three"])
            seq = (reply["result"] as? [String: Any])?["seq"] as? Int
            if seq == nil {
                refusals.insert(errorCode(reply) ?? "?")
                Thread.sleep(forTimeInterval: 0.05)
            }
        }
        #expect(seq == 2)
        #expect(refusals.isSubset(of: ["unavailable"]), "\(refusals)")
        let history = try client.result("history", ["thread_id": chat.thread])
        #expect((history["messages"] as? [[String: Any]])?.compactMap { $0["seq"] as? Int } == [2, 1])
    }

    @Test func aCursorOlderThanTheLogIsRefused() throws {
        let chat = try ChatFixture()
        defer { chat.server.stop() }
        let coach = try chat.socket(chat.fixture.coachX.access)
        let reply = try coach.command("resume", ["cursor": coach.helloCursor + 5])
        #expect((reply["error"] as? [String: Any])?["code"] as? String == "out_of_range")
    }
}
