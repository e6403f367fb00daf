import Foundation
import SeededRandom
import Synchronization
import Testing
import TestSupport

extension ClusterTests {
    /// The sessions' invariant with writers on several processes: coaches and clients on three processes
    /// invite, accept and cancel at random on a few crowded slots at once. Whatever interleaving happens, no
    /// user ends in two overlapping sessions that hold time, and every process shows every session in the same
    /// state (each process's book follows the log). Seeded; the seed is printed on failure.
    @Test(arguments: [11, 29])
    func noUserInTwoOverlappingSessionsWithWritersOnSeveralProcesses(seed: Int) throws {
        let cluster = try ClusterFixture(processes: 3)
        defer { cluster.stop() }
        struct Person { let id: String; let access: String }
        var coaches: [Person] = []
        var pairs: [(coach: Int, client: Person, thread: String)] = []
        for c in 0..<2 {
            let api = APIClient(port: cluster.port(c))
            let coach = try api.signUp(role: "coach", name: "Coach \(c)", email: "coach\(c)-\(seed)@property.test")
            coaches.append(Person(id: coach.id, access: coach.access))
            for k in 0..<3 {
                let client = try api.signUp(role: "client", name: "Client \(c)\(k)", email: "client\(c)\(k)-\(seed)@property.test")
                let link = try api.call("POST", "/v1/me/coach", ["coach_id": coach.id], token: client.access)
                pairs.append((c, Person(id: client.id, access: client.access), try #require(link.string("thread_id"))))
            }
        }
        Thread.sleep(forTimeInterval: 0.5)
        // Four slots an hour long, 30 minutes apart: most pairs of them overlap.
        let base = Self.now() + 3 * 86_400
        let slots = (0..<4).map { base + $0 * 1800 }

        let pairsSeen = pairs  // what the workers read (a constant)
        let accepted = Mutex(0)
        let group = DispatchGroup()
        for worker in 0..<3 {
            // Each worker is one process's users: every coach and client has a socket on it.
            let port = cluster.port(worker)
            let coachSockets = try coaches.map { try SpotterSocket(port: port, token: $0.access) }
            let clientSockets = try pairs.map { try SpotterSocket(port: port, token: $0.client.access) }
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                var random = SeededGenerator(seed: UInt64(seed * 31 + worker))
                for _ in 0..<40 {
                    let p = Int.random(in: 0..<pairsSeen.count, using: &random)
                    let pair = pairsSeen[p]
                    switch Int.random(in: 0..<10, using: &random) {
                    case 0..<4:  // the coach invites on a crowded slot
                        _ = try? coachSockets[pair.coach].command("session.invite", [
                            "thread_id": pair.thread, "start": slots.randomElement(using: &random)!, "duration_minutes": 60,
                            "purpose": "Property"])
                    case 4..<8:  // the client accepts something this process shows them as invited
                        guard let listed = try? clientSockets[p].result("sessions", ["from": base - 3600, "to": base + 86_400]),
                              let invited = (listed["sessions"] as? [[String: Any]])?.filter({ $0["status"] as? String == "invited" }),
                              let pick = invited.randomElement(using: &random), let id = pick["id"] as? String else { continue }
                        if let reply = try? clientSockets[p].command("session.act", ["session_id": id, "action": "accept"]),
                           reply["ok"] as? Bool == true {
                            accepted.withLock { $0 += 1 }
                        }
                    default:  // the coach cancels one of theirs
                        guard let listed = try? coachSockets[pair.coach].result("sessions", ["from": base - 3600, "to": base + 86_400]),
                              let pick = (listed["sessions"] as? [[String: Any]])?.randomElement(using: &random),
                              let id = pick["id"] as? String else { continue }
                        _ = try? coachSockets[pair.coach].command("session.act", ["session_id": id, "action": "cancel", "reason": "property"])
                    }
                }
            }
        }
        group.wait()
        Thread.sleep(forTimeInterval: 1.0)  // every process follows the last records

        // Every process shows each user the same sessions in the same states, and none overlaps in time held.
        let people = coaches + pairs.map(\.client)
        var views: [[String: String]] = []  // per process: session id → status
        for process in 0..<3 {
            var statuses: [String: String] = [:]
            for person in people {
                let socket = try SpotterSocket(port: cluster.port(process), token: person.access)
                let listed = try socket.result("sessions", ["from": base - 3600, "to": base + 86_400])
                let sessions = listed["sessions"] as? [[String: Any]] ?? []
                let holding = sessions.filter { ["scheduled", "reschedule_requested", "in_progress"].contains($0["status"] as? String ?? "") }
                    .compactMap { session -> (Int, Int)? in
                        guard let start = session["start"] as? Int, let minutes = session["duration_minutes"] as? Int else { return nil }
                        return (start, start + minutes * 60)
                    }.sorted { $0.0 < $1.0 }
                for (earlier, later) in zip(holding, holding.dropFirst()) {
                    #expect(later.0 >= earlier.1, "seed \(seed): \(person.id) in two overlapping sessions on process \(process)")
                }
                for session in sessions {
                    if let id = session["id"] as? String { statuses[id] = session["status"] as? String ?? "?" }
                }
                socket.close()
            }
            views.append(statuses)
        }
        let differing = Set(views.flatMap(\.keys)).filter { id in Set(views.map { $0[id] ?? "absent" }).count > 1 }
        #expect(differing.isEmpty, "seed \(seed): the processes disagree on \(differing.count) sessions: \(differing.sorted().prefix(3).map { id in views.map { $0[id] ?? "absent" } })")
        #expect(accepted.withLock { $0 } > 0, "seed \(seed): nothing was ever accepted; the test exercised nothing")
    }
}
