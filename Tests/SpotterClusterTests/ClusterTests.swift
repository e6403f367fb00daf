import Foundation
import Synchronization
import Testing
import TestSupport

/// Several `spotter serve` processes on one PostgreSQL database and one NATS server behave as one server:
/// users on different processes chat, see receipts, typing, presence and session events; every device gets
/// every event once and in order whichever process wrote it; a process killed with kill -9 loses nothing
/// acknowledged and leaves no ghost; a NATS restart loses nothing. Real binaries, real servers, loopback only.
@Suite("Cluster: several processes as one", .serialized)
struct ClusterTests {
    static func now() -> Int { Int(Date().timeIntervalSince1970) }

    @Test func chatReceiptsTypingPresenceAndSessionsAcrossProcesses() throws {
        let cluster = try ClusterFixture(processes: 3)
        defer { cluster.stop() }
        let coach = try APIClient(port: cluster.port(0)).signUp(role: "coach", name: "Coach", email: "coach@cluster.test")
        let client = try APIClient(port: cluster.port(1)).signUp(role: "client", name: "Client", email: "client@cluster.test")
        let coachA = try SpotterSocket(port: cluster.port(0), token: coach.access)
        let clientB = try SpotterSocket(port: cluster.port(1), token: client.access)

        // The link is made on the third process; the others learn the new thread from the log.
        let link = try APIClient(port: cluster.port(2)).call("POST", "/v1/me/coach", ["coach_id": coach.id], token: client.access)
        let thread = try #require(link.string("thread_id"), "\(link.json)")
        #expect(try coachA.awaitEvent("thread", "coachA")["thread_id"] as? String == thread)
        #expect(try clientB.awaitEvent("thread", "clientB")["thread_id"] as? String == thread)
        let clientC = try SpotterSocket(port: cluster.port(2), token: client.access)  // the client's tablet

        // A message written on B reaches the coach on A and the client's other device on C, with the badges.
        let sent = try clientB.result("message.send", ["thread_id": thread, "client_message_id": "m1", "text": "Hello coach"])
        #expect(sent["seq"] as? Int == 1)
        let atCoach = try coachA.awaitEvent("message", "coachA")
        #expect(message(atCoach)["text"] as? String == "Hello coach" && message(atCoach)["seq"] as? Int == 1)
        #expect(atCoach["unread"] as? Int == 1 && atCoach["total_unread"] as? Int == 1, "\(atCoach)")
        #expect(message(try clientC.awaitEvent("message", "clientC"))["seq"] as? Int == 1)
        #expect(message(try clientB.awaitEvent("message", "clientB"))["seq"] as? Int == 1, "the writer's own devices hear of it too")

        // A retry sent to another process returns the original; nothing new is written.
        let retry = try clientC.result("message.send", ["thread_id": thread, "client_message_id": "m1", "text": "Hello coach"])
        #expect(retry["seq"] as? Int == 1)
        let reply = try coachA.result("message.send", ["thread_id": thread, "client_message_id": "r1", "text": "Hi! How was the run?"])
        #expect(reply["seq"] as? Int == 2, "the retry must not have taken a seq: \(reply)")
        #expect(message(try clientB.awaitEvent("message", "clientB"))["seq"] as? Int == 2)
        #expect(message(try clientC.awaitEvent("message", "clientC"))["seq"] as? Int == 2)

        // ✓✓: the client reads on B; the coach on A sees the receipt, the client's tablet on C its badge clear.
        _ = try clientB.result("thread.read", ["thread_id": thread, "seq": 2])
        let receipt = try coachA.awaitEvent("receipt", "coachA")
        #expect(receipt["read_seq"] as? Int == 2 && receipt["user_id"] as? String == client.id, "\(receipt)")
        let unread = try clientC.awaitEvent("unread", "clientC")
        #expect(unread["unread"] as? Int == 0 && unread["read_seq"] as? Int == 2, "\(unread)")

        // Typing crosses processes (ephemeral, on the broker).
        _ = try coachA.result("typing", ["thread_id": thread])
        #expect(try clientB.awaitEvent("typing", "clientB")["user_id"] as? String == coach.id)

        // Sessions: the coach invites on A, the client accepts on C, everyone sees each change.
        let invited = try coachA.result("session.invite", ["thread_id": thread, "start": Self.now() + 2 * 86_400,
                                                           "duration_minutes": 30, "purpose": "Form check"])
        let id = try #require(invited["id"] as? String)
        let created = try clientB.awaitEvent("session", "clientB")
        #expect(created["change"] as? String == "created" && (created["session"] as? [String: Any])?["id"] as? String == id)
        #expect(try clientC.awaitEvent("session", "clientC")["change"] as? String == "created")
        let accepted = try clientC.result("session.act", ["session_id": id, "action": "accept"])
        #expect(accepted["status"] as? String == "scheduled", "\(accepted)")
        #expect(try coachA.awaitEvent("session", "coachA")["change"] as? String == "created", "the inviter's own devices hear of it too")
        let atCoachSession = try coachA.awaitEvent("session", "coachA")
        #expect((atCoachSession["session"] as? [String: Any])?["status"] as? String == "scheduled", "\(atCoachSession)")
        // B learnt the accepted session: its book refuses what overlaps it, as C's would.
        let overlapping = try coachA.command("session.invite", ["thread_id": thread, "start": Self.now() + 2 * 86_400 + 600,
                                                               "duration_minutes": 30])
        #expect(errorCode(overlapping) != nil, "an overlapping invite was accepted: \(overlapping)")
        // B follows C's accept within moments (the coach on A has seen it already).
        try waitUntil(5, "the accepted session shown as scheduled on B") {
            let listed = (try? clientB.result("sessions", [:]))?["sessions"] as? [[String: Any]] ?? []
            return listed.first { $0["id"] as? String == id }?["status"] as? String == "scheduled"
        }

        // Presence is cluster-wide: the client's last device leaving (on C, after B) shows them offline on A.
        _ = coachA.drain(for: 0.3)
        clientB.close()
        Thread.sleep(forTimeInterval: 0.5)
        #expect(coachA.drain(for: 0.5).allSatisfy { $0["type"] as? String != "presence" }, "offline while a device is still on C")
        clientC.close()
        let offline = try coachA.awaitEvent("presence", "coachA")
        #expect(offline["user_id"] as? String == client.id && offline["online"] as? Bool == false, "\(offline)")
        let repeated = coachA.drain(for: 0.5).filter { $0["type"] as? String == "presence" }
        #expect(repeated.isEmpty, "every process saw the flip; the coach's device must hear of it once: \(repeated)")
        let back = try SpotterSocket(port: cluster.port(1), token: client.access)
        let online = try coachA.awaitEvent("presence", "coachA")
        #expect(online["online"] as? Bool == true, "\(online)")
        // The thread list on any process shows the same unread and last message.
        let onB = (try back.result("threads", [:])["threads"] as? [[String: Any]])?.first
        let onA = (try coachA.result("threads", [:])["threads"] as? [[String: Any]])?.first
        #expect(onB?["last_seq"] as? Int == 4 && onA?["last_seq"] as? Int == 4, "B: \(String(describing: onB)) A: \(String(describing: onA))")
    }

    /// Three writers at once (one client on each process), two devices of the coach on two processes: each
    /// device gets every message once, in cursor order, the same sequence on both.
    @Test func everyDeviceGetsEveryEventOnceInOrderWhoeverWrote() throws {
        let cluster = try ClusterFixture(processes: 3)
        defer { cluster.stop() }
        let api = APIClient(port: cluster.port(0))
        let coach = try api.signUp(role: "coach", name: "Coach", email: "coach@order.test")
        var clients: [(access: String, refresh: String, id: String)] = []
        var threads: [String] = []
        for index in 0..<3 {
            let client = try APIClient(port: cluster.port(index)).signUp(role: "client", name: "C\(index)", email: "c\(index)@order.test")
            let link = try APIClient(port: cluster.port(index)).call("POST", "/v1/me/coach", ["coach_id": coach.id], token: client.access)
            clients.append(client)
            threads.append(try #require(link.string("thread_id")))
        }
        Thread.sleep(forTimeInterval: 0.5)  // every process follows the three links
        let phone = try SpotterSocket(port: cluster.port(0), token: coach.access)
        let laptop = try SpotterSocket(port: cluster.port(1), token: coach.access)
        let perClient = 100
        let acked = Mutex<[String: Int]>([:])
        let group = DispatchGroup()
        for index in 0..<3 {
            let socket = try SpotterSocket(port: cluster.port(index), token: clients[index].access)
            let thread = threads[index]
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                for n in 1...perClient {
                    let id = "c\(index)-\(n)"
                    for _ in 0..<20 {  // a refusal (unavailable, rate_limited) is retried with the same id
                        guard let reply = try? socket.command("message.send", ["thread_id": thread, "client_message_id": id, "text": "n\(n)"]) else { return }
                        if let seq = (reply["result"] as? [String: Any])?["seq"] as? Int {
                            acked.withLock { $0[id] = seq }
                            break
                        }
                        Thread.sleep(forTimeInterval: 0.2)
                    }
                }
            }
        }
        group.wait()
        #expect(acked.withLock { $0.count } == 3 * perClient, "not every send was acknowledged")
        for (name, device) in [("phone on A", phone), ("laptop on B", laptop)] {
            let events = device.messages(atLeast: 3 * perClient)
            let cursors = events.compactMap { $0["cursor"] as? Int }
            let keys = events.map { "\(message($0)["thread_id"] ?? "")#\(message($0)["seq"] ?? 0)" }
            #expect(events.count == 3 * perClient, "\(name): \(events.count) of \(3 * perClient) messages")
            #expect(zip(cursors, cursors.dropFirst()).allSatisfy { $0 < $1 }, "\(name): cursors out of order")
            #expect(Set(keys).count == keys.count, "\(name): a message twice")
            let ids = Set(events.compactMap { message($0)["client_message_id"] as? String })
            let missing = Set(acked.withLock { $0.keys }).subtracting(ids)
            #expect(missing.isEmpty, "\(name): \(missing.count) acknowledged messages missing, e.g. \(missing.sorted().prefix(5))")
        }
    }

    /// kill -9 of one process in the middle of a burst: its sockets reconnect to the others, retry what was not
    /// acknowledged with the same ids, and nothing acknowledged is lost or doubled; its user is shown offline.
    @Test func killingOneProcessMidBurstLosesNothingAndLeavesNoGhost() throws {
        let cluster = try ClusterFixture(processes: 3)
        defer { cluster.stop() }
        let coach = try APIClient(port: cluster.port(1)).signUp(role: "coach", name: "Coach", email: "coach@kill.test")
        var clients: [(access: String, refresh: String, id: String)] = []
        var threads: [String] = []
        for index in 0..<3 {
            let client = try APIClient(port: cluster.port(1)).signUp(role: "client", name: "K\(index)", email: "k\(index)@kill.test")
            let link = try APIClient(port: cluster.port(1)).call("POST", "/v1/me/coach", ["coach_id": coach.id], token: client.access)
            clients.append(client)
            threads.append(try #require(link.string("thread_id")))
        }
        // A client whose only device is on the process that will be killed.
        let ghostUser = try APIClient(port: cluster.port(0)).signUp(role: "client", name: "Ghost", email: "ghost@kill.test")
        let ghostThread = try #require(APIClient(port: cluster.port(0))
            .call("POST", "/v1/me/coach", ["coach_id": coach.id], token: ghostUser.access).string("thread_id"))
        let ghostDevice = try SpotterSocket(port: cluster.port(0), token: ghostUser.access)
        let ghostOnline = { (socket: SpotterSocket) -> Bool? in
            let listed = (try? socket.result("threads", [:]))?["threads"] as? [[String: Any]] ?? []
            return listed.first { $0["thread_id"] as? String == ghostThread }?["peer_online"] as? Bool
        }
        let coachOnB = try SpotterSocket(port: cluster.port(1), token: coach.access)
        try waitUntil(5, "the ghost client shown online on another process") { ghostOnline(coachOnB) == true }
        Thread.sleep(forTimeInterval: 0.5)
        let watcher = try SpotterSocket(port: cluster.port(2), token: coach.access)
        let startCursor = watcher.helloCursor
        let acked = Mutex<[String: Int]>([:])
        let stop = Atomic<Bool>(false)
        let group = DispatchGroup()
        for index in 0..<3 {
            let thread = threads[index]
            let token = clients[index].access
            let firstPort = cluster.port(index)
            let otherPort = cluster.port(index == 0 ? 1 : index)
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                var socket = try? SpotterSocket(port: firstPort, token: token)
                var n = 1
                while n <= 100_000 && !(stop.load(ordering: .relaxed) && n > 1) {
                    let id = "k\(index)-\(n)"
                    if socket == nil { socket = try? SpotterSocket(port: otherPort, token: token) }  // reconnect elsewhere
                    guard let live = socket else { Thread.sleep(forTimeInterval: 0.1); continue }
                    guard let reply = try? live.command("message.send", ["thread_id": thread, "client_message_id": id, "text": "k\(n)"]) else {
                        socket = nil  // the process died: the same id again, on another
                        continue
                    }
                    if let seq = (reply["result"] as? [String: Any])?["seq"] as? Int {
                        acked.withLock { $0[id] = seq }
                        n += 1
                    } else {
                        Thread.sleep(forTimeInterval: 0.1)
                    }
                }
            }
        }
        Thread.sleep(forTimeInterval: 1.5)
        cluster.kill9(0)  // client 0's process, mid-burst
        Thread.sleep(forTimeInterval: 1.5)
        stop.store(true, ordering: .relaxed)
        group.wait()
        let ackedNow = acked.withLock { $0 }
        #expect(ackedNow.count > 50, "too few acknowledged: \(ackedNow.count)")
        #expect(ackedNow.keys.contains { $0.hasPrefix("k0-") && ackedNow[$0]! > 1 }, "client 0 sent nothing")

        // History from a surviving process: each thread's seqs 1…n, each id once, every acked id at its seq.
        let reader = try SpotterSocket(port: cluster.port(2), token: coach.access)
        var total = 0
        for index in 0..<3 {
            let messages = try reader.wholeHistory(threads[index])
            let seqs = messages.compactMap { $0["seq"] as? Int }.sorted()
            let ids = messages.compactMap { $0["client_message_id"] as? String }
            #expect(seqs == Array(1...max(1, seqs.count)).prefix(seqs.count).map { $0 }, "thread \(index): seq gaps")
            #expect(Set(ids).count == ids.count, "thread \(index): a message stored twice")
            let stored = Dictionary(uniqueKeysWithValues: zip(ids, messages.compactMap { $0["seq"] as? Int }))
            for (id, seq) in ackedNow where id.hasPrefix("k\(index)-") {
                #expect(stored[id] == seq, "acked \(id) (seq \(seq)) lost or moved")
            }
            total += messages.count
        }

        // The coach's device on a surviving process saw every message once, in order; so does a resume.
        let live = watcher.messages(atLeast: total, timeout: 10)
        #expect(live.count == total, "live: \(live.count) of \(total)")
        let resumed = try SpotterSocket(port: cluster.port(1), token: coach.access)
        #expect(try resumed.command("resume", ["cursor": startCursor])["ok"] as? Bool == true)
        let replay = resumed.messages(atLeast: total, timeout: 10)
        let cursors = replay.compactMap { $0["cursor"] as? Int }
        #expect(replay.count == total && zip(cursors, cursors.dropFirst()).allSatisfy { $0 < $1 }, "resume: \(replay.count) of \(total)")

        // No ghost: the client whose only socket was on the killed process is shown offline within the
        // dead-after time (5 s) on the others.
        _ = ghostDevice
        let killedAt = Date()
        try waitUntil(10, "the ghost client offline after kill -9") { ghostOnline(coachOnB) == false }
        #expect(Date().timeIntervalSince(killedAt) < 10)
    }

    /// NATS restarts: a message sent while it is down is still delivered live (the follower reads the store),
    /// and the processes reconnect by themselves.
    @Test func aNATSRestartLosesNothing() throws {
        let cluster = try ClusterFixture(processes: 2)
        defer { cluster.stop() }
        let (coach, client, thread) = try cluster.linkedPair("nats")
        let coachA = try SpotterSocket(port: cluster.port(0), token: coach.access)
        let clientB = try SpotterSocket(port: cluster.port(1), token: client.access)

        cluster.nats.stop()
        let sent = try clientB.result("message.send", ["thread_id": thread, "client_message_id": "down-1", "text": "while NATS is down"])
        #expect(sent["seq"] as? Int == 1)
        #expect(message(try coachA.awaitEvent("message", "coachA"))["client_message_id"] as? String == "down-1")

        try cluster.nats.start()
        Thread.sleep(forTimeInterval: 1.0)  // libnats reconnects every 250 ms
        _ = try clientB.result("message.send", ["thread_id": thread, "client_message_id": "up-1", "text": "NATS is back"])
        #expect(message(try coachA.awaitEvent("message", "coachA"))["client_message_id"] as? String == "up-1")
        _ = try coachA.result("typing", ["thread_id": thread])
        #expect(try clientB.awaitEvent("typing", "clientB")["user_id"] as? String == coach.id, "ephemeral events cross again")
    }

    /// Session timers fire on one process (the holder of the PostgreSQL lease): a reminder reaches each device
    /// once; kill -9 of the holder hands the lease to another process.
    @Test func sessionTimersRunOnOneProcessAndMoveWhenItDies() throws {
        let cluster = try ClusterFixture(processes: 3, options: ["--session-reminder", "900"])
        defer { cluster.stop() }
        let coach = try APIClient(port: cluster.port(0)).signUp(role: "coach", name: "Coach", email: "coach@timer.test")
        let client = try APIClient(port: cluster.port(1)).signUp(role: "client", name: "Client", email: "client@timer.test")
        let link = try APIClient(port: cluster.port(1)).call("POST", "/v1/me/coach", ["coach_id": coach.id], token: client.access)
        let thread = try #require(link.string("thread_id"))
        try waitUntil(10, "a process holding the timers") { !cluster.processesThatLogged("holding the session timers").isEmpty }
        Thread.sleep(forTimeInterval: 2.5)  // every process has asked for the lease at least once
        let holders = cluster.processesThatLogged("holding the session timers")
        #expect(holders.count == 1, "processes holding the timers: \(holders)")

        // A session 10 minutes away with a 15-minute reminder: due at the next tick, fired once.
        let coachA = try SpotterSocket(port: cluster.port(0), token: coach.access)
        let clientC = try SpotterSocket(port: cluster.port(2), token: client.access)
        let invited = try coachA.result("session.invite", ["thread_id": thread, "start": Self.now() + 600, "duration_minutes": 30, "purpose": "Check-in"])
        let id = try #require(invited["id"] as? String)
        #expect(try clientC.awaitEvent("session", "clientC")["change"] as? String == "created")  // as an app acts: on the event
        _ = try clientC.result("session.act", ["session_id": id, "action": "accept"])
        Thread.sleep(forTimeInterval: 3.5)
        let reminders = clientC.drain(for: 0.5).filter { $0["type"] as? String == "session" && $0["change"] as? String == "starting_soon" }
        #expect(reminders.count == 1, "starting_soon events on the client's device: \(reminders.count)")

        // The holder dies: another process takes the lease (PostgreSQL frees it with the dead connection).
        let holder = try #require(holders.first)
        cluster.kill9(holder)
        try waitUntil(15, "another process holding the timers after kill -9") {
            !cluster.processesThatLogged("holding the session timers").isEmpty
        }
    }
}

extension ClusterTests {
    /// Both sides of one thread writing at once from two processes: each process guesses the same seqs from its
    /// own memory, and the database numbers each batch's messages after the thread's committed last seq under the
    /// append lock (`SeqGivingLog`), so every send is acknowledged without a retry — none refused for a
    /// collision (before: about half were refused `unavailable` and retried; only the socket's command rate,
    /// `rate_limited`, is waited out here). The thread's seqs are 1…n with no
    /// gap, each message once, every acknowledged one at its seq, and each side's device saw every message of
    /// the thread once, in seq order.
    @Test func bothSidesOfAThreadWritingOnTwoProcessesAtOnce() throws {
        let cluster = try ClusterFixture(processes: 2)
        defer { cluster.stop() }
        let (coach, client, thread) = try cluster.linkedPair("race")
        let perSide = 150
        let acked = Mutex<[String: Int]>([:])
        let refusals = Mutex<[String: Int]>([:])
        let watchers = [try SpotterSocket(port: cluster.port(0), token: coach.access),
                        try SpotterSocket(port: cluster.port(1), token: client.access)]
        let group = DispatchGroup()
        for (side, token, port) in [("coach", coach.access, cluster.port(0)), ("client", client.access, cluster.port(1))] {
            let socket = try SpotterSocket(port: port, token: token)
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                for n in 1...perSide {
                    let id = "\(side)-\(n)"
                    // A socket's command rate (`rate_limited`, as fast as this loop sends) is waited out; any other
                    // refusal is counted and not retried.
                    for _ in 0..<100 {
                        guard let reply = try? socket.command("message.send", ["thread_id": thread, "client_message_id": id, "text": "\(side) \(n)"]) else {
                            refusals.withLock { $0["no reply", default: 0] += 1 }
                            return
                        }
                        if let seq = (reply["result"] as? [String: Any])?["seq"] as? Int {
                            acked.withLock { $0[id] = seq }
                        } else if errorCode(reply) == "rate_limited" {
                            Thread.sleep(forTimeInterval: 0.05)
                            continue
                        } else {
                            refusals.withLock { $0[errorCode(reply) ?? "?", default: 0] += 1 }
                        }
                        break
                    }
                }
            }
        }
        group.wait()
        let ackedNow = acked.withLock { $0 }
        #expect(refusals.withLock { $0 }.isEmpty, "refused: \(refusals.withLock { $0 })")
        #expect(ackedNow.count == 2 * perSide, "acknowledged \(ackedNow.count) of \(2 * perSide), none retried but for the rate")
        #expect(Set(ackedNow.values).count == ackedNow.count, "two sends acknowledged with one seq")
        let messages = try watchers[0].wholeHistory(thread)
        let seqs = messages.compactMap { $0["seq"] as? Int }.sorted()
        let ids = messages.compactMap { $0["client_message_id"] as? String }
        #expect(seqs == Array(1...(2 * perSide)), "seqs: \(seqs.count) messages, last \(seqs.last ?? 0)")
        #expect(Set(ids).count == ids.count, "a message stored twice")
        let stored = Dictionary(uniqueKeysWithValues: zip(ids, messages.compactMap { $0["seq"] as? Int }))
        let moved = ackedNow.filter { stored[$0.key] != $0.value }
        #expect(moved.isEmpty, "\(moved.count) acknowledged messages lost or moved, e.g. \(moved.prefix(3))")
        for (name, watcher) in [("coach", watchers[0]), ("client", watchers[1])] {
            let seen = watcher.messages(atLeast: 2 * perSide, timeout: 10).map { message($0) }
            let seenSeqs = seen.compactMap { $0["seq"] as? Int }
            #expect(seenSeqs == Array(1...(2 * perSide)), "\(name)'s device: \(seenSeqs.count) message events, not 1…\(2 * perSide) in order")
            for event in seen {
                guard let id = event["client_message_id"] as? String, let seq = event["seq"] as? Int else { continue }
                if stored[id] != seq { Issue.record("\(name)'s device heard \(id) at seq \(seq), stored at \(stored[id] ?? -1)"); break }
            }
        }
        print("both sides on two processes: \(ackedNow.count) acknowledged, refusals \(refusals.withLock { $0 })")
    }
}

extension ClusterTests {
    /// PostgreSQL stops as a crash would under a cluster in the middle of a chat: every process refuses writes as
    /// `unavailable` and acknowledges nothing; once it is back, the processes (not restarted) take writes again, a
    /// retry with the same id lands once, and the other process's sockets get it.
    @Test func aPostgreSQLOutageIsRefusedEverywhereAndEveryProcessRecovers() throws {
        let cluster = try ClusterFixture(processes: 2, ownPostgres: true)
        defer { cluster.stop() }
        let (coach, client, thread) = try cluster.linkedPair("outage")
        let coachA = try SpotterSocket(port: cluster.port(0), token: coach.access)
        let clientB = try SpotterSocket(port: cluster.port(1), token: client.access)
        #expect(try clientB.result("message.send", ["thread_id": thread, "client_message_id": "m1", "text": "one"])["seq"] as? Int == 1)
        _ = try coachA.awaitEvent("message", "coachA")

        try cluster.postgres.stopServer(immediate: true)
        for (name, socket, id) in [("client on B", clientB, "m2"), ("coach on A", coachA, "c1")] {
            do {
                let reply = try socket.command("message.send", ["thread_id": thread, "client_message_id": id, "text": "during"])
                #expect(errorCode(reply) == "unavailable", "\(name): \(reply)")
            } catch {
                Issue.record("\(name): no reply to a send during the outage (\(error))")
            }
        }

        try cluster.postgres.startServer()
        // Each process takes writes again by itself; the retries (same ids) land once each.
        var seqs: [String: Int] = [:]
        let deadline = Date().addingTimeInterval(30)
        while seqs.count < 2 && Date() < deadline {
            for (socket, id) in [(clientB, "m2"), (coachA, "c1")] where seqs[id] == nil {
                let reply = try socket.command("message.send", ["thread_id": thread, "client_message_id": id, "text": "during"])
                if let seq = (reply["result"] as? [String: Any])?["seq"] as? Int { seqs[id] = seq }
            }
            if seqs.count < 2 { Thread.sleep(forTimeInterval: 0.3) }
        }
        #expect(Set(seqs.values) == [2, 3], "after the outage: \(seqs)")
        let history = try coachA.wholeHistory(thread).compactMap { $0["seq"] as? Int }
        #expect(history == [3, 2, 1], "history: \(history)")
        // Across processes: the client's message reaches the coach on A, the coach's the client on B.
        let atCoach = coachA.messages(atLeast: 2, timeout: 10).compactMap { message($0)["client_message_id"] as? String }
        #expect(atCoach.contains("m2"), "the coach on A: \(atCoach)")
        let atClient = clientB.messages(atLeast: 2, timeout: 10).compactMap { message($0)["client_message_id"] as? String }
        #expect(atClient.contains("c1"), "the client on B: \(atClient)")
    }
}
