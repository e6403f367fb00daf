import EventLoop
import Foundation
import Synchronization
import Testing
import SpotterBroker
import SpotterCore
@testable import SpotterNATS
import TestSupport

/// The NATS broker between processes, against a real `nats-server` started on a free port. Each "process" is a
/// loop on its own thread with its own broker and connection, as in a cluster.
@Suite("NATS broker", .serialized)
struct NATSBrokerTests {
    /// Short beats so that presence tests take well under a second.
    static let beat: UInt64 = 100
    static let dead: UInt64 = 500

    @Test func eventsPublishedOnOneProcessReachTheUsersSocketsOnAnotherInOrderOnce() throws {
        let nats = try NATSServer()
        defer { nats.stop() }
        let a = try Node(nats.url), b = try Node(nats.url)
        defer { a.stop(); b.stop() }
        let onA = Recorder(), onB = Recorder()
        b.run { $0.subscribe(onB, userID: "u1") }
        a.run { $0.subscribe(onA, userID: "u1") }
        // B's subscription is active once A has seen B's presence (same connection, NATS keeps its order).
        try a.waitUntilRemote(b.nodeID, has: "u1")
        a.run { broker in
            for cursor in 1...1000 { broker.publish(userID: "u1", cursor: Int64(cursor), frame: #"{"n":\#(cursor), "t":"a b"}"#) }
            broker.publishEphemeral(userID: "u1", frame: #"{"typing":true}"#)
        }
        try onB.waitFor(logged: 1000)
        #expect(onB.cursors == Array(1...1000))
        #expect(onB.frames.last == #"{"n":1000, "t":"a b"}"#)
        try onB.waitFor(ephemeral: 1)
        #expect(onB.ephemeral == [#"{"typing":true}"#])
        // A's own socket got its own publications once each (no echo from NATS).
        #expect(onA.cursors == Array(1...1000))
        #expect(onA.ephemeral == [#"{"typing":true}"#])
        // B publishes back: A gets it, B's own socket once.
        b.run { $0.publish(userID: "u1", cursor: 1001, frame: "from B") }
        try onA.waitFor(logged: 1001)
        Thread.sleep(forTimeInterval: 0.2)  // room for a duplicate or an echo to arrive
        #expect(onA.cursors.count == 1001 && onA.frames.last == "from B")
        #expect(onB.cursors.count == 1001 && onB.ephemeral.count == 1)
    }

    @Test func aUsersDevicesOnTwoProcessesEachGetEveryEventOfAThird() throws {
        let nats = try NATSServer()
        defer { nats.stop() }
        let a = try Node(nats.url), b = try Node(nats.url), c = try Node(nats.url)
        defer { a.stop(); b.stop(); c.stop() }
        let phone = Recorder(), laptop = Recorder()
        a.run { $0.subscribe(phone, userID: "coach") }
        b.run { $0.subscribe(laptop, userID: "coach") }
        try c.waitUntilRemote(a.nodeID, has: "coach")
        try c.waitUntilRemote(b.nodeID, has: "coach")
        c.run { broker in
            for cursor in 1...200 { broker.publish(userID: "coach", cursor: Int64(cursor), frame: "f\(cursor)") }
        }
        try phone.waitFor(logged: 200)
        try laptop.waitFor(logged: 200)
        Thread.sleep(forTimeInterval: 0.1)
        #expect(phone.cursors == Array(1...200) && laptop.cursors == Array(1...200))
        #expect(laptop.frames.first == "f1" && laptop.frames.last == "f200")
    }

    @Test func presenceIsClusterWideAndAProcessThatStopsBeatingLeavesNoGhosts() throws {
        let nats = try NATSServer()
        defer { nats.stop() }
        let a = try Node(nats.url), b = try Node(nats.url)
        defer { a.stop(); b.stop() }
        let changes = b.recordPresenceChanges()
        let first = Recorder(), second = Recorder(), onB = Recorder()
        a.run { $0.subscribe(first, userID: "u") }
        try b.waitUntil("B sees u online") { $0.isOnline("u") }
        a.run { $0.subscribe(second, userID: "u") }  // a second device changes nothing
        a.run { $0.unsubscribe(first, userID: "u") }
        Thread.sleep(forTimeInterval: 0.2)
        #expect(b.value { $0.isOnline("u") })
        a.run { $0.unsubscribe(second, userID: "u") }
        try b.waitUntil("B sees u offline") { !$0.isOnline("u") }
        #expect(changes.all == ["u true", "u false"])

        // Online on both: leaving one keeps it online everywhere, and nobody is told otherwise.
        a.run { $0.subscribe(first, userID: "v") }
        b.run { $0.subscribe(onB, userID: "v") }
        try b.waitUntilRemote(a.nodeID, has: "v")
        try a.waitUntilRemote(b.nodeID, has: "v")
        a.run { $0.unsubscribe(first, userID: "v") }
        try b.waitUntil("B hears A's v leave") { !$0.remoteReports(node: a.nodeID, user: "v") }
        #expect(a.value { $0.isOnline("v") } && b.value { $0.isOnline("v") })
        a.run { $0.subscribe(first, userID: "v") }  // back on A for the crash below
        try b.waitUntilRemote(a.nodeID, has: "v")
        b.run { $0.unsubscribe(onB, userID: "v") }
        #expect(b.value { $0.isOnline("v") })
        #expect(changes.all == ["u true", "u false", "v true"])

        // A process that joins later learns who is online already.
        let late = try Node(nats.url)
        defer { late.stop() }
        try late.waitUntil("the late process sees v online") { $0.isOnline("v") }

        // A dies without a goodbye (kill -9): its users go offline once its beats stop, not before.
        let died = Date()
        a.crash()
        try b.waitUntil(timeout: 5, "B sees v offline after A's crash") { !$0.isOnline("v") }
        try late.waitUntil(timeout: 5, "the late process sees v offline after A's crash") { !$0.isOnline("v") }
        let took = Date().timeIntervalSince(died)
        #expect(took >= Double(Self.dead) / 1000 * 0.8, "offline after \(took) s: before the dead-after time")
        #expect(changes.all == ["u true", "u false", "v true", "v false"])
    }

    @Test func aCleanCloseTakesItsUsersOfflineAtOnce() throws {
        let nats = try NATSServer()
        defer { nats.stop() }
        // Beats so slow that only the goodbye can explain a quick offline.
        let a = try Node(nats.url, beat: 1000, deadAfter: 30_000), b = try Node(nats.url, beat: 1000, deadAfter: 30_000)
        defer { b.stop() }
        a.run { $0.subscribe(Recorder(), userID: "w") }
        try b.waitUntilRemote(a.nodeID, has: "w")
        let closed = Date()
        a.stop()
        try b.waitUntil(timeout: 2, "B sees w offline after A's goodbye") { !$0.isOnline("w") }
        #expect(Date().timeIntervalSince(closed) < 2)
    }

    /// A process whose loop stalls past the dead-after time without losing its connection (or a partition
    /// between NATS servers that heals): the others forget it, and relearn its users when they hear it again.
    @Test func aProcessThatFellSilentWithoutDisconnectingIsRelearned() throws {
        let nats = try NATSServer()
        defer { nats.stop() }
        let a = try Node(nats.url), b = try Node(nats.url)
        defer { a.stop(); b.stop() }
        let changes = b.recordPresenceChanges()
        a.run { $0.subscribe(Recorder(), userID: "s") }
        try b.waitUntilRemote(a.nodeID, has: "s")
        a.run { _ in Thread.sleep(forTimeInterval: Double(Self.dead) / 1000 * 2.4) }  // no beats; libnats stays connected
        try b.waitUntil("B relearns A's users") { $0.remoteReports(node: a.nodeID, user: "s") }
        #expect(changes.all == ["s true", "s false", "s true"])
        #expect(a.value { $0.isConnected })
    }

    /// 1,000 users online on one process: one libnats delivery thread for them all (not a thread per
    /// subscription), and the burst is announced in a few messages that every other process applies whole.
    @Test func manyUsersCostNoThreadEachAndTravelInBatches() throws {
        let nats = try NATSServer()
        defer { nats.stop() }
        let a = try Node(nats.url), b = try Node(nats.url)
        defer { a.stop(); b.stop() }
        let changes = b.recordPresenceChanges()
        let users = (0..<1000).map { _ in UUID().uuidString.lowercased() }
        let recorders = users.map { _ in Recorder() }
        let before = threadCount()
        a.run { broker in
            for (user, recorder) in zip(users, recorders) { broker.subscribe(recorder, userID: user) }
        }
        let added = threadCount() - before
        #expect(added < 500, "\(added) threads more for 1,000 subscriptions")  // a thread each would be 1,000
        try b.waitUntil("B sees all 1,000 online") { broker in users.allSatisfy { broker.isOnline($0) } }
        b.run { $0.publish(userID: users[500], cursor: 9, frame: "hi") }
        try recorders[500].waitFor(logged: 1)
        #expect(recorders[499].cursors.isEmpty && recorders[501].cursors.isEmpty)

        a.run { broker in
            for (user, recorder) in zip(users, recorders) { broker.unsubscribe(recorder, userID: user) }
        }
        try b.waitUntil("B sees all 1,000 offline") { broker in users.allSatisfy { !broker.isOnline($0) } }
        #expect(changes.all.count == 2000)
    }

    @Test func aNATSRestartIsSurvivedWithoutHelp() throws {
        let nats = try NATSServer()
        defer { nats.stop() }
        let a = try Node(nats.url), b = try Node(nats.url)
        defer { a.stop(); b.stop() }
        let links = Mutex<[String]>([])
        let seen = Mutex<[String]>([])
        a.run { broker in
            broker.connectionChanged = { up in links.withLock { $0.append(up ? "up" : "down") } }
            broker.presenceChanged = { user, online in seen.withLock { $0.append("\(user) \(online)") } }
        }
        let onA = Recorder(), onB = Recorder()
        a.run { $0.subscribe(onA, userID: "x") }
        b.run { $0.subscribe(onB, userID: "u") }
        try a.waitUntilRemote(b.nodeID, has: "u")
        try b.waitUntilRemote(a.nodeID, has: "x")

        // Down for longer than the dead-after time: each process forgets the other (nothing arrives).
        nats.stop()
        try a.waitUntil("A sees the connection down") { !$0.isConnected }
        try a.waitUntil("A forgets B's users") { !$0.isOnline("u") }
        try b.waitUntil("B forgets A's users") { !$0.isOnline("x") }
        // NATS down: publishing neither blocks the loop nor stops local delivery.
        let started = Date()
        a.run { broker in for cursor in 1...1000 { broker.publish(userID: "x", cursor: Int64(cursor), frame: "while down") } }
        #expect(Date().timeIntervalSince(started) < 1)
        #expect(onA.cursors.count == 1000)

        try nats.start()
        try a.waitUntil(timeout: 10, "A reconnects") { $0.isConnected }
        try b.waitUntil(timeout: 10, "B reconnects") { $0.isConnected }
        #expect(links.withLock { $0 } == ["down", "up"])
        // Presence heals (both ask for and send full lists on reconnect) and events flow again.
        try a.waitUntilRemote(b.nodeID, has: "u", timeout: 10)
        try b.waitUntilRemote(a.nodeID, has: "x", timeout: 10)
        #expect(a.value { $0.isOnline("u") } && b.value { $0.isOnline("x") })
        #expect(seen.withLock { $0 } == ["x true", "u true", "u false", "u true"])
        a.run { $0.publish(userID: "u", cursor: 7, frame: "after") }
        try onB.waitFor(logged: 1)
        #expect(onB.frames == ["after"])
    }

    /// The log stream with two writers: a follower gets every batch and puts both writers' records in position
    /// order, each once (positions interleave as two processes' commits do).
    @Test func aFollowerOrdersTwoWritersRecordsFromTheLogStream() throws {
        let nats = try NATSServer()
        defer { nats.stop() }
        let a = try Node(nats.url), c = try Node(nats.url), follower = try Node(nats.url)
        defer { a.stop(); c.stop(); follower.stop() }
        let out = Mutex<[Int64]>([])
        let sequencer = Mutex(LogSequencer(after: 0))
        follower.run { broker in
            try! broker.followLog { text in
                guard let records = LogStreamCodec.decode(text) else { return }
                let ready = sequencer.withLock { $0.receive(records, now: 0) }
                out.withLock { $0 += ready.map(\.pos) }
            }
        }
        // The subscription is active once the follower's presence reached the writers (same connection, in order).
        follower.run { $0.subscribe(Recorder(), userID: "marker") }
        try a.waitUntilRemote(follower.nodeID, has: "marker")
        try c.waitUntilRemote(follower.nodeID, has: "marker")
        func batch(_ positions: [Int64]) -> String {
            LogStreamCodec.encode(positions.map {
                ChatRecord(pos: $0, threadNo: $0 % 2 + 1, side: .client, seq: $0, at: 0, .message(MessageRecord(clientMessageID: "m\($0)", body: "b\($0)")))
            })
        }
        // A commits the odd positions, C the even ones, in batches of two; each publishes after its commit.
        for start in stride(from: 1, through: 197, by: 4) {
            let first = Int64(start)
            a.run { $0.publishLog(batch([first, first + 2])) }
            c.run { $0.publishLog(batch([first + 1, first + 3])) }
        }
        try poll(5, "200 records in order") { out.withLock { $0.count } == 200 }
        #expect(out.withLock { $0 } == Array(1...200))
        #expect(sequencer.withLock { $0.waitingCount } == 0)
    }

    @Test(arguments: ["unreachable", "nats://127.0.0.1:notaport"])
    func aServerThatCannotBeReachedIsATypedErrorNamingIt(_ kind: String) throws {
        let url = kind == "unreachable" ? "nats://127.0.0.1:\(try NATSServer.freePort())" : kind
        let loop = LoopThread()
        defer { loop.stop() }
        let started = Date()
        let outcome = loop.value { loop in Result { try NATSBroker(loop: loop, url: url) } }
        guard case .failure(let error) = outcome else {
            Issue.record("connected to \(url)")
            return
        }
        let typed = try #require(error as? NATSBrokerError)
        #expect(typed.operation == .connect && typed.url == url)
        #expect("\(typed)".hasPrefix("cannot connect to NATS at \(url): "), "\(typed)")
        #expect(!typed.status.isEmpty && !typed.status.contains("conn.c"), "\(typed)")
        #expect(Date().timeIntervalSince(started) < 3)
    }

    @Test func aUserIDCannotReachAnotherUsersSubject() throws {
        let nats = try NATSServer()
        defer { nats.stop() }
        let a = try Node(nats.url), b = try Node(nats.url)
        defer { a.stop(); b.stop() }
        let plain = Recorder(), star = Recorder(), dotted = Recorder()
        b.run { $0.subscribe(plain, userID: "a"); $0.subscribe(star, userID: "a.*"); $0.subscribe(dotted, userID: "a.b") }
        try a.waitUntilRemote(b.nodeID, has: "a.b")
        a.run { broker in
            broker.publish(userID: "a.b", cursor: 1, frame: "for a.b")
            broker.publish(userID: ">", cursor: 2, frame: "for >")
            broker.publish(userID: "*", cursor: 3, frame: "for *")
            broker.publish(userID: "a.*", cursor: 4, frame: "for a.*")
            broker.publish(userID: "a b", cursor: 5, frame: "for a b")
        }
        try star.waitFor(logged: 1)
        try dotted.waitFor(logged: 1)
        Thread.sleep(forTimeInterval: 0.2)
        #expect(plain.cursors.isEmpty)
        #expect(dotted.cursors == [1] && star.cursors == [4])
    }

    @Test func malformedMessagesAreDroppedAndNothingElseIs() throws {
        let nats = try NATSServer()
        defer { nats.stop() }
        let a = try Node(nats.url), b = try Node(nats.url)
        defer { a.stop(); b.stop() }
        let onB = Recorder()
        b.run { $0.subscribe(onB, userID: "u") }
        a.run { $0.subscribe(Recorder(), userID: "z") }
        try a.waitUntilRemote(b.nodeID, has: "u")
        try b.waitUntilRemote(a.nodeID, has: "z")
        a.run { broker in
            for payload in ["", "L", "L5", "Lx 1", "L 1", "l5 1", "E", "X 1", "L99999999999999999999 1"] {
                broker.sendRaw("spotter.user.u", payload)
            }
            for text in ["", "U", "G", "S n 3/2 u", "S n 0/0", "U n =zz", "U n =61", "B bad.node", "U n  u", "Q n"] {
                broker.sendRaw("spotter.presence", text)
            }
            broker.publish(userID: "u", cursor: 7, frame: "")
            broker.publish(userID: "u", cursor: 8, frame: "kept")
        }
        try onB.waitFor(logged: 2)
        Thread.sleep(forTimeInterval: 0.1)
        #expect(onB.cursors == [7, 8] && onB.frames == ["", "kept"])
        #expect(b.value { $0.isOnline("z") && !$0.isOnline("a") && !$0.remoteReports(node: "n", user: "u") })
    }
}
