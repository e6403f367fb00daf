import Foundation
import Testing
import TestSupport

/// A durable consumer of the log in a cluster (`--log-tap` on every process): its position is shared, so it runs
/// on one process at a time, the holder of the timer lease, and moves with the lease when that process dies.
@Suite("Cluster: the log tap", .serialized)
struct ClusterLogTapTests {
    @Test func theTapRunsOnTheTimerHolderOnlyAndMovesWhenItDies() throws {
        let tap = FileManager.default.temporaryDirectory.appendingPathComponent("spotter-clustertap-\(UUID().uuidString).jsonl").path
        defer { try? FileManager.default.removeItem(atPath: tap) }
        let cluster = try ClusterFixture(processes: 2, options: ["--log-tap", tap])
        defer { cluster.stop() }
        // A thread written on each process (one writer per thread: no seq contention between processes).
        let pairs = [try cluster.linkedPair("clustertap0", coachOn: 0, clientOn: 0), try cluster.linkedPair("clustertap1", coachOn: 1, clientOn: 1)]
        try waitUntil(10, "a process holding the timers") { !cluster.processesThatLogged("holding the session timers").isEmpty }
        let holder = try #require(cluster.processesThatLogged("holding the session timers").first)
        let sockets = try (0..<2).map { try SpotterSocket(port: cluster.port($0), token: pairs[$0].client.access) }
        var acked: [String: Int] = [:]
        func send(_ prefix: String, from sides: [Int], _ count: Int) throws {
            for n in 1...count {
                for side in sides {
                    let id = "\(prefix)-\(side)-\(n)"
                    acked[id] = try sockets[side].result("message.send", ["thread_id": pairs[side].thread, "client_message_id": id, "text": "t"])["seq"] as? Int
                }
            }
        }
        // Both processes write; the holder's tap takes every record, once (a second reader of the shared position
        // would write the same batches again).
        try send("both", from: [0, 1], 20)
        try waitUntil(15, "the tap holds the messages of both processes") { TapFile(tap).refs.isSuperset(of: acked.keys) }
        Thread.sleep(forTimeInterval: 0.5)  // a second reader would have written its copy by now
        let before = TapFile(tap)
        #expect(before.repeats == 0, "records written twice: a consumer ran on both processes")

        // The holder dies; the other process takes the lease and the tap goes on from the shared position.
        cluster.kill9(holder)
        let other = 1 - holder
        try send("after", from: [other], 5)
        try waitUntil(30, "the tap goes on on the other process") { TapFile(tap).refs.isSuperset(of: acked.keys) }
        let file = TapFile(tap)
        #expect(file.unreadable <= 1)
        #expect(file.differingRepeat == nil, "\(file.differingRepeat ?? "")")
        let positions = file.firstAppearances
        let first = try #require(positions.first)
        #expect(positions == Array(first...(first + positions.count - 1)), "positions out of order or missing")
        for (id, seq) in acked {
            #expect(file.messages[id]?["seq"] as? Int == seq, "acked \(id) (seq \(seq)) missing from the tap or moved")
        }
    }
}
