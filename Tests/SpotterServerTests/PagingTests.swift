import Foundation
import Testing
import SpotterServer
import TestSupport

/// Replies that list what can grow come a page at a time over a real socket: every item exactly once, in order,
/// each page's reply well under the outbound bound, and the reader's socket still open after the last page.
@Suite("Paged replies on the live socket", .serialized)
struct PagingTests {
    /// Every page of one of `record`'s lists, followed through its `*_next` cursors from the first reply.
    func wholeList(_ socket: SpotterSocket, thread: String, list: String, limit: Int) throws -> (items: [String], pages: Int) {
        var page = try socket.result("record", ["thread_id": thread, "limit": limit])
        var ids: [String] = [], pages = 1
        while true {
            let items = try #require(page[list] as? [[String: Any]])
            #expect(items.count <= limit)
            ids += items.compactMap { $0["id"] as? String }
            guard let next = page[list + "_next"] as? String else {
                #expect(page[list + "_next"] is NSNull)  // written as null, not left out
                return (ids, pages)
            }
            page = try socket.result("record", ["thread_id": thread, "limit": limit, "cursor": next])
            pages += 1
        }
    }

    @Test func theRecordIsReadPageByPageWithEveryItemOnceAndTheSocketStaysOpen() throws {
        let chat = try ChatFixture()
        defer { chat.server.stop() }
        let coach = try chat.socket(chat.fixture.coachX.access)
        let client = try chat.socket(chat.fixture.clientA.access)
        var challenges: [String] = [], checkIns: [String] = []
        for _ in 0..<12 {
            let made = try coach.result("challenge.create", RecordTests.challenge(chat.thread))
            challenges.append(try #require((made["challenge"] as? [String: Any])?["id"] as? String))
            let checked = try client.result("check_in.submit", ["thread_id": chat.thread, "weight": 80.5])
            checkIns.append(try #require((checked["check_in"] as? [String: Any])?["id"] as? String))
        }
        // Newest first, each exactly once, over three pages of five.
        let readChallenges = try wholeList(client, thread: chat.thread, list: "challenges", limit: 5)
        #expect(readChallenges.items == challenges.reversed() && readChallenges.pages == 3)
        let readCheckIns = try wholeList(coach, thread: chat.thread, list: "check_ins", limit: 5)
        #expect(readCheckIns.items == checkIns.reversed() && readCheckIns.pages == 3)
        // A cursor pages its own list alone; an old client sending no limit gets the first 20 of each.
        let first = try client.result("record", ["thread_id": chat.thread, "limit": 5])
        let second = try client.result("record", ["thread_id": chat.thread, "cursor": try #require(first["challenges_next"] as? String)])
        #expect((second["check_ins"] as? [Any])?.isEmpty == true && second["check_ins_next"] is NSNull)
        #expect((second["challenges"] as? [[String: Any]])?.count == 7)
        let old = try client.result("record", ["thread_id": chat.thread])
        #expect((old["challenges"] as? [Any])?.count == 12 && old["challenges_next"] is NSNull)
        // Out-of-range limits and foreign cursors are refused; the socket stays.
        for limit in [0, 101, -1] {
            #expect(errorCode(try client.command("record", ["thread_id": chat.thread, "limit": limit])) == "out_of_range")
        }
        #expect(errorCode(try client.command("record", ["thread_id": chat.thread, "cursor": "challenges:nope"])) == "bad_request")
        #expect(errorCode(try client.command("record", ["thread_id": chat.thread, "cursor": "nope"])) == "bad_request")
        #expect(try client.result("me")["id"] as? String == chat.fixture.clientA.id)
        #expect(try coach.result("me")["id"] as? String == chat.fixture.coachX.id)
    }

    @Test func aPageOfLargeItemsIsCutShortToStayUnderTheBoundAndStillReachesTheEnd() throws {
        let chat = try ChatFixture()
        defer { chat.server.stop() }
        let coach = try chat.socket(chat.fixture.coachX.access)
        // 14 tasks of 1,000-character descriptions: about 15 KB a challenge, 20 of them about 300 KB.
        let long = String(repeating: "ب", count: 1000)
        var big = RecordTests.challenge(chat.thread, days: 14)
        big["description"] = long
        big["tasks"] = (1...14).map { ["name": "Day \($0)", "description": long, "focus": "nutrition", "intensity": "light"] }
        var made: [String] = []
        for _ in 0..<20 {
            made.append(try #require((try coach.result("challenge.create", big)["challenge"] as? [String: Any])?["id"] as? String))
        }
        let first = try coach.result("record", ["thread_id": chat.thread, "limit": 20])
        let shown = try #require(first["challenges"] as? [[String: Any]])
        #expect(shown.count < 20 && first["challenges_next"] is String)
        let all = try wholeList(coach, thread: chat.thread, list: "challenges", limit: 20)
        #expect(all.items == made.reversed())
        #expect(try coach.result("me")["id"] as? String == chat.fixture.coachX.id)
    }

    @Test func pagesOfLargeMealLogsAreCutShortInMealsAndHistoryAndStillReachTheEnd() throws {
        let chat = try ChatFixture()
        defer { chat.server.stop() }
        let client = try chat.socket(chat.fixture.clientA.access)
        // 50 ingredients of 100 two-byte characters: about 10 KB a meal log, 40 of them about 400 KB.
        let ingredients = (0..<50).map { "\($0)" + String(repeating: "ب", count: 98) }
        for index in 0..<40 {
            _ = try client.result("message.send", ["thread_id": chat.thread, "client_message_id": "m\(index)", "kind": "meal_log",
                                                   "meal": ["name": "Meal \(index)", "ingredients": ingredients, "calories": 300,
                                                            "protein_g": 20, "carbs_g": 30, "fats_g": 10, "meal_type": "lunch"]])
        }
        let expected = (0..<40).reversed().map { "m\($0)" }
        var meals: [String] = [], before: Int?, firstPage: Int?
        repeat {
            var fields: [String: Any] = ["limit": 40]
            if let before { fields["before"] = before }
            let page = try client.result("meals", fields)
            let batch = try #require(page["meals"] as? [[String: Any]])
            firstPage = firstPage ?? batch.count
            meals += batch.compactMap { $0["client_message_id"] as? String }
            before = page["has_more"] as? Bool == true ? batch.last?["cursor"] as? Int : nil
        } while before != nil
        #expect(firstPage ?? 40 < 40 && meals == expected)
        var history: [String] = [], beforeSeq: Int?, firstHistory: Int?
        repeat {
            var fields: [String: Any] = ["thread_id": chat.thread, "limit": 100]
            if let beforeSeq { fields["before_seq"] = beforeSeq }
            let page = try client.result("history", fields)
            let batch = try #require(page["messages"] as? [[String: Any]])
            firstHistory = firstHistory ?? batch.count
            history += batch.compactMap { $0["client_message_id"] as? String }
            beforeSeq = page["has_more"] as? Bool == true ? batch.last?["seq"] as? Int : nil
        } while beforeSeq != nil
        #expect(firstHistory ?? 40 < 40 && history == expected)
        #expect(try client.result("me")["id"] as? String == chat.fixture.clientA.id)
    }

    @Test func theCalendarIsReadPageByPageInOrderOfStart() throws {
        let chat = try ChatFixture()
        defer { chat.server.stop() }
        let coach = try chat.socket(chat.fixture.coachX.access)
        let client = try chat.socket(chat.fixture.clientA.access)
        let base = Int(Date().timeIntervalSince1970) + 86_400
        var ids: [String] = []
        // Made out of order of start; listed by start.
        for index in [5, 0, 9, 3, 11, 1, 7, 2, 10, 4, 8, 6] {
            let made = try coach.result("session.invite", ["thread_id": chat.thread, "start": base + index * 3600,
                                                           "duration_minutes": 30, "purpose": "Check \(index)"])
            ids.append(try #require(made["id"] as? String))
        }
        let byStart = zip([5, 0, 9, 3, 11, 1, 7, 2, 10, 4, 8, 6], ids).sorted { $0.0 < $1.0 }.map(\.1)
        for socket in [coach, client] {
            var seen: [String] = [], cursor: String?, pages = 0
            repeat {
                var fields: [String: Any] = ["from": base - 60, "to": base + 86_400, "limit": 5]
                if let cursor { fields["cursor"] = cursor }
                let page = try socket.result("sessions", fields)
                let sessions = try #require(page["sessions"] as? [[String: Any]])
                #expect(sessions.count <= 5)
                seen += sessions.compactMap { $0["id"] as? String }
                cursor = page["next_cursor"] as? String
                if cursor == nil { #expect(page["next_cursor"] is NSNull) }
                pages += 1
            } while cursor != nil
            #expect(seen == byStart && pages == 3)
        }
        // The default page holds up to 100; bad limits and cursors are typed errors.
        #expect((try client.result("sessions", ["from": base - 60, "to": base + 86_400])["sessions"] as? [Any])?.count == 12)
        for limit in [0, 201] {
            #expect(errorCode(try client.command("sessions", ["limit": limit])) == "out_of_range")
        }
        #expect(errorCode(try client.command("sessions", ["cursor": "junk"])) == "bad_request")
        #expect(try client.result("me")["id"] as? String == chat.fixture.clientA.id)
    }
}
