import Foundation
import Testing
import TestSupport

/// The checkpoint in a cluster (issue 33 item 4, the per-process cost): only the timer lease's holder saves thread
/// views — it applies every record, so its views cover every process's commits, and the others' saves were the
/// same views again. A process without the lease keeps its changed threads marked; when the lease comes to it
/// (the holder killed between two checkpoints) it saves them, so a process started afterwards loads views that
/// hold everything below the saved mark.
@Suite("Cluster: only the timer lease's holder saves thread views", .serialized)
struct ClusterCheckpointTests {
    @Test func onlyTheHolderSavesViewsAndTheNextHolderSavesWhatTheDeadOneHadNot() throws {
        let (cluster, holder, c, x) = try { () throws -> (ClusterFixture, Int, Int, Int) in
            let (cluster, a, b, c) = try ClusterInterestTests.cluster()
            let holder = try #require(cluster.processesThatLogged("holding the session timers").first)
            let others = [a, b, c].filter { $0 != holder }
            return (cluster, holder, others[0], others[1])
        }()
        defer { cluster.stop() }
        let views = { (index: Int) in (try? ClusterInterestTests.counter("spotter_checkpoint_views_total", cluster, index)) ?? -1 }
        // Both participants on processes without the lease: those two apply the thread's records, as the holder does.
        let (coach, client, thread) = try cluster.linkedPair("views", coachOn: c, clientOn: x)
        let coachOnC = try SpotterSocket(port: cluster.port(c), token: coach.access)
        let clientOnX = try SpotterSocket(port: cluster.port(x), token: client.access)
        Thread.sleep(forTimeInterval: 1.2)  // a checkpoint of the link's records on every process that saves
        let before = (holder: views(holder), c: views(c), x: views(x))
        for index in 1...5 {
            let sent = try clientOnX.result("message.send", ["thread_id": thread, "client_message_id": "v\(index)", "text": "v\(index)"])
            #expect(sent["seq"] as? Int == index)
        }
        _ = try coachOnC.result("message.send", ["thread_id": thread, "client_message_id": "r1", "text": "reply"])
        #expect(coachOnC.messages(atLeast: 5).count >= 5)
        try waitUntil(5, "the holder saving the thread's view") { views(holder) > before.holder }
        Thread.sleep(forTimeInterval: 1.5)  // more than a checkpoint interval on every process
        #expect(views(c) == before.c, "a process without the lease saved views")
        #expect(views(x) == before.x, "a process without the lease saved views")

        // Three more, and the holder dies before its next checkpoint can save them.
        for index in 7...9 {
            _ = try clientOnX.result("message.send", ["thread_id": thread, "client_message_id": "v\(index)", "text": "v\(index)"])
        }
        cluster.kill9(holder)
        try waitUntil(20, "another process holding the timers") {
            !cluster.processesThatLogged("holding the session timers").isEmpty
        }
        let taker = try #require(cluster.processesThatLogged("holding the session timers").first)
        let takerBefore = taker == c ? before.c : before.x
        try waitUntil(5, "the new holder saving what changed here before") { views(taker) > takerBefore }
        Thread.sleep(forTimeInterval: 1.2)

        // A process started now loads the saved views and the records after the saved mark: the thread is whole.
        let fresh = cluster.processes.count
        try cluster.start(fresh)
        let coachOnFresh = try SpotterSocket(port: cluster.port(fresh), token: coach.access)
        let row = try ClusterInterestTests.listed(coachOnFresh, thread)
        #expect(row["last_seq"] as? Int == 9, "\(row)")
        let onC = try ClusterInterestTests.listed(coachOnC, thread)
        #expect(row["unread"] as? Int != nil && row["unread"] as? Int == onC["unread"] as? Int, "fresh: \(row) C: \(onC)")
        let next = try coachOnFresh.command("message.send", ["thread_id": thread, "client_message_id": "r2", "text": "again"])
        #expect((next["result"] as? [String: Any])?["seq"] as? Int == 10, "\(next)")
    }
}
