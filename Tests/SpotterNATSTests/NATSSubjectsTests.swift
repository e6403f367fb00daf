import Foundation
import Synchronization
import Testing
import SpotterCore
@testable import SpotterNATS
import TestSupport

/// A deployment's subject prefix (`--broker-subjects`): what it accepts, and that two deployments on one NATS
/// server do not hear each other.
@Suite("NATS subjects per deployment", .serialized)
struct NATSSubjectsTests {
    @Test func aPrefixIsPlainTokensJoinedByDotsAndAtMost64Bytes() {
        for good in ["spotter", "acme", "acme.prod", "a-b_c.D9.x", String(repeating: "a", count: 64),
                     String(repeating: "ab.", count: 21) + "a"] {
            #expect(NATSSubjects(prefix: good)?.prefix == good, "\(good)")
        }
        for bad in ["", ".", "a.", ".a", "a..b", "*", ">", "a.*", "a.>", "a b", "a\tb", "a\nb", "é", "a/b", "a=b",
                    "a\u{0}b", String(repeating: "a", count: 65), String(repeating: "ab.", count: 22)] {
            #expect(NATSSubjects(prefix: bad) == nil, "\(bad.debugDescription)")
        }
    }

    @Test func everySubjectStartsWithThePrefixAndOnlyItsOwnUserSubjectsAreRead() throws {
        let acme = try #require(NATSSubjects(prefix: "acme.prod"))
        #expect(acme.presence == "acme.prod.presence" && acme.log == "acme.prod.log")
        for id in NATSWireTests.hostile + ["u1", "3f2c1e9a-7b1d-4c8e-9f00-0123456789ab"] {
            let subject = acme.subject(userID: id)
            #expect(subject.hasPrefix("acme.prod.user."))
            #expect(acme.userID(subject: subject) == id)
            // Another deployment's reading of this subject, and this one's of the default's, name nobody.
            #expect(NATSSubjects.standard.userID(subject: subject) == nil)
            #expect(acme.userID(subject: NATSSubjects.standard.subject(userID: id)) == nil)
        }
        #expect(acme.userID(subject: "acme.prod.presence") == nil && acme.userID(subject: "acme.prod.log") == nil)
        #expect(NATSSubjects.standard.subject(userID: "u1") == "spotter.user.u1")
    }

    @Test func twoDeploymentsOnOneNATSServerShareNoEventsPresenceOrRecords() throws {
        let nats = try NATSServer()
        defer { nats.stop() }
        let acme = try #require(NATSSubjects(prefix: "acme"))
        // a and b are one deployment; c and d another, on the default subjects, on the same server.
        let a = try Node(nats.url, subjects: acme), b = try Node(nats.url, subjects: acme)
        let c = try Node(nats.url), d = try Node(nats.url)
        defer { a.stop(); b.stop(); c.stop(); d.stop() }
        let onB = Recorder(), onD = Recorder()
        let records = Mutex<[String: [Int64]]>([:])
        for (name, node) in [("b", b), ("d", d)] {
            node.run { broker in
                try! broker.followLog { text in
                    let positions = LogStreamCodec.decode(text)?.map(\.pos) ?? []
                    records.withLock { $0[name, default: []] += positions }
                }
            }
        }
        // Subscribed after following: once the writers hear of "u1", both subscriptions are active (one
        // connection, in order).
        b.run { $0.subscribe(onB, userID: "u1") }
        d.run { $0.subscribe(onD, userID: "u1") }
        try a.waitUntilRemote(b.nodeID, has: "u1")
        try c.waitUntilRemote(d.nodeID, has: "u1")
        func batch(_ pos: Int64) -> String {
            LogStreamCodec.encode([ChatRecord(pos: pos, threadNo: 1, side: .client, seq: pos, at: 0,
                                              .message(MessageRecord(clientMessageID: "m\(pos)", body: "b")))])
        }
        // Each deployment publishes to "u1" and on its log; each hears only its own.
        c.run { broker in
            for cursor in 1...50 { broker.publish(userID: "u1", cursor: Int64(cursor), frame: "default \(cursor)") }
            broker.publishLog(batch(7))
        }
        a.run { broker in
            for cursor in 1...50 { broker.publish(userID: "u1", cursor: Int64(cursor), frame: "acme \(cursor)") }
            broker.publishLog(batch(3))
        }
        try onB.waitFor(logged: 50)
        try onD.waitFor(logged: 50)
        try poll(5, "both logs followed") { records.withLock { $0["b"] != nil && $0["d"] != nil } }
        Thread.sleep(forTimeInterval: 0.3)  // room for the other deployment's messages to arrive
        #expect(onB.frames == (1...50).map { "acme \($0)" })
        #expect(onD.frames == (1...50).map { "default \($0)" })
        #expect(records.withLock { $0 } == ["b": [3], "d": [7]])
        // Presence: each deployment's nodes know only their own users.
        #expect(a.value { $0.isOnline("u1") } && c.value { $0.isOnline("u1") })
        #expect(!a.value { $0.remoteReports(node: d.nodeID, user: "u1") })
        #expect(!c.value { $0.remoteReports(node: b.nodeID, user: "u1") })
    }
}
