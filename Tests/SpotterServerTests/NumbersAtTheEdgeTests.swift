import Foundation
import GRDB
import SpotterStore
import Testing
import TestSupport

/// Numbers at Int64's edges, from outside and from the store. Each frame here once ended the server with
/// "arithmetic overflow" (a session's end, a range's length); a request stored with such a start ended it again
/// on every restart. The server is a child process, so a crash fails the test instead of the runner.
@Suite("Numbers at the edge", .serialized)
struct NumbersAtTheEdgeTests {
    static let edges: [Int64] = [Int64.min, Int64.min + 1, -1, Int64.max, Int64.max - 1, 1 << 53, -(1 << 31), 1 << 62]

    @Test func framesWithEdgeNumbersAreRefusedAndTheServerLives() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("spotter-edges-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = try ServerProcess(dataDirectory: directory)
        defer { server.stop(signal: SIGKILL) }
        let pair = try Pair(port: server.port)
        let now = Int64(Date().timeIntervalSince1970)

        for edge in Self.edges {
            // Fresh sockets for each edge: twelve frames each stay within one socket's command burst.
            let pair = try Pair(port: server.port, existing: pair)
            let frames: [(SpotterSocket, String, [String: Any], String)] = [
                (pair.client, "sessions", ["from": edge], "from"),
                (pair.client, "sessions", ["to": edge], "to"),
                (pair.coach, "dashboard", ["from": edge], "from"),
                (pair.coach, "dashboard", ["to": edge], "to"),
                (pair.coach, "session.invite", ["thread_id": pair.thread, "start": edge, "duration_minutes": 15, "purpose": "x"], "start"),
                (pair.client, "session.request", ["thread_id": pair.thread, "start": edge, "duration_minutes": 15, "purpose": "x"], "start"),
                (pair.coach, "session.invite", ["thread_id": pair.thread, "start": now + 3600, "duration_minutes": edge, "purpose": "x"],
                 "duration_minutes"),
                (pair.client, "thread.read", ["thread_id": pair.thread, "seq": edge], "seq"),
                (pair.client, "receipt.delivered", ["thread_id": pair.thread, "seq": edge], "seq"),
                (pair.client, "history", ["thread_id": pair.thread, "before_seq": edge], "before_seq"),
                (pair.client, "resume", ["cursor": edge], "cursor"),
                (pair.client, "meals", ["before": edge], "before"),
            ]
            for (socket, type, fields, field) in frames {
                let reply = try socket.command(type, fields)
                let error = reply["error"] as? [String: Any]
                // Inside the range (1 << 53 is not, -1 is not) a command may be refused for another reason or
                // succeed; at the edges it is `out_of_range` naming the field, never a crash.
                if edge < 0 || edge > (1 << 53) - 1 {
                    #expect(error?["code"] as? String == "out_of_range" && error?["field"] as? String == field,
                            "\(type) \(field)=\(edge): \(reply)")
                }
            }
        }
        // Still alive and answering, and nothing was stored for the refused requests.
        let sessions = try pair.coach.result("sessions", [:])
        #expect((sessions["sessions"] as? [Any])?.isEmpty == true, "a refused request was stored: \(sessions)")
        _ = try pair.client.result("message.send", ["thread_id": pair.thread, "client_message_id": "alive", "text": "still here"])
    }

    /// A database written before the wire bounded times (a request stored with start 2^63 − 1) starts, and the
    /// pair's sessions, the coach's dashboard and the next session change work: stored times are clamped on load.
    @Test(.enabled(if: !TestServer.onPostgres, "edits the SQLite file directly"))
    func aStoredStartAtTheEdgeNeitherCrashesTheLoadNorTheCalendar() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("spotter-edges-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var server = try ServerProcess(dataDirectory: directory)
        var pair = try Pair(port: server.port)
        let start = Int64(Date().timeIntervalSince1970) + 7 * 86_400
        let requested = try pair.client.result("session.request", ["thread_id": pair.thread, "start": start, "duration_minutes": 15,
                                                                   "purpose": "edge"])
        let id = try #require(requested["id"] as? String)
        #expect(server.stop() == 0)

        // What an old server stored when a client sent 2^63 − 1.
        let store = try Store.open(directory: directory)
        let changed = try store.writer.write { db -> Int in
            try db.execute(sql: "UPDATE log SET body = replace(body, ?, ?) WHERE kind = 3",
                           arguments: ["\"start\":\(start)", "\"start\":\(Int64.max)"])
            return db.changesCount
        }
        #expect(changed == 1)

        server = try ServerProcess(dataDirectory: directory)
        defer { #expect(server.stop() == 0, "SIGTERM must end the server cleanly") }
        pair = try Pair(port: server.port, existing: pair)
        _ = try pair.coach.result("dashboard", [:])
        _ = try pair.client.result("sessions", [:])
        let far = try pair.coach.result("sessions", ["from": WireEdge.lastTime - 86_400, "to": WireEdge.lastTime])
        #expect((far["sessions"] as? [[String: Any]])?.first?["id"] as? String == id, "the clamped session is at the end of time: \(far)")
        // The pair's next changes: the coach declines the request, both go on chatting.
        _ = try pair.coach.result("session.act", ["session_id": id, "action": "decline"])
        _ = try pair.client.result("message.send", ["thread_id": pair.thread, "client_message_id": "after", "text": "after"])
        Thread.sleep(forTimeInterval: 1.5)  // a timer tick over the clamped session
        _ = try pair.coach.result("dashboard", [:])
    }

    enum WireEdge {
        /// 9999-12-31T23:59:59Z, the last second the wire takes (Protocol/README "Numbers").
        static let lastTime: Int64 = 253_402_300_799
    }

    /// A coach and a client linked by a thread, each with a socket.
    struct Pair {
        let coachAccount: (access: String, refresh: String, id: String)
        let clientAccount: (access: String, refresh: String, id: String)
        let thread: String
        let coach: SpotterSocket
        let client: SpotterSocket

        init(port: Int) throws {
            let api = APIClient(port: port)
            coachAccount = try api.signUp(role: "coach", name: "Coach", email: "coach@edges.test")
            clientAccount = try api.signUp(role: "client", name: "Client", email: "client@edges.test")
            let link = try api.call("POST", "/v1/me/coach", ["coach_id": coachAccount.id], token: clientAccount.access)
            thread = try #require(link.string("thread_id"))
            coach = try SpotterSocket(port: port, token: coachAccount.access)
            client = try SpotterSocket(port: port, token: clientAccount.access)
        }

        /// The same accounts on a restarted server (tokens outlive a restart).
        init(port: Int, existing: Pair) throws {
            coachAccount = existing.coachAccount
            clientAccount = existing.clientAccount
            thread = existing.thread
            coach = try SpotterSocket(port: port, token: coachAccount.access)
            client = try SpotterSocket(port: port, token: clientAccount.access)
        }
    }
}
