import Foundation
import Synchronization
import Testing
@testable import SpotterServer
import SpotterCore
import SpotterPorts
import TestSupport

/// `--log-tap`, the first durable consumer of the log, in a server: every record once, in log order, across a
/// restart; and a consumer that stalls holds no send back while its lag shows in `/metrics`.
@Suite("Log tap", .serialized)
struct LogTapTests {
    @Test func theTapHoldsEveryRecordOnceInLogOrderAcrossARestart() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("spotter-tap-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let tap = directory + "/tap.jsonl"
        let configure = { (config: inout ServerConfig) in
            config.logTapPath = tap
            config.logConsumerTiming.pollMilliseconds = 20
        }
        var server = try TestServer(dataDirectory: directory, configure)
        let api = APIClient(port: server.port)
        let (_, clients, threads) = try api.coachWithClients(2, domain: "tap.test")
        var acked: [String: Int] = [:]
        func send(_ prefix: String, _ count: Int) throws {
            for index in 0..<2 {
                let socket = try SpotterSocket(port: server.port, token: clients[index].access)
                for n in 1...count {
                    let id = "\(prefix)-c\(index)-\(n)"
                    acked[id] = try socket.result("message.send", ["thread_id": threads[index], "client_message_id": id, "text": "t \(n)"])["seq"] as? Int
                }
                socket.close()
            }
        }
        try send("before", 10)
        try waitUntil(10, "the tap holds the messages sent before the restart") { TapFile(tap).refs.isSuperset(of: acked.keys) }
        #expect(server.stop())
        server = try TestServer(dataDirectory: directory, configure)
        try send("after", 5)
        try waitUntil(10, "the tap holds the messages sent after the restart") { TapFile(tap).refs.isSuperset(of: acked.keys) }
        #expect(server.stop())

        let file = TapFile(tap)
        #expect(file.unreadable == 0)
        #expect(file.repeats == 0, "a graceful restart hands nothing over twice")
        #expect(file.differingRepeat == nil)
        let positions = file.firstAppearances
        #expect(positions == Array(1...max(1, positions.count)), "positions out of order or missing: \(positions)")
        #expect(file.lines.prefix(2).map { $0["kind"] as? String } == ["link", "link"])
        for (id, seq) in acked {
            let line = file.messages[id]
            #expect(line?["seq"] as? Int == seq && line?["side"] as? String == "client", "\(id): \(String(describing: line))")
        }
    }

    @Test func aTapThatCannotBeOpenedStopsTheStart() throws {
        #expect(throws: LogTapError.self) {
            _ = try TestServer { $0.logTapPath = "/nonexistent-\(UUID().uuidString)/tap.jsonl" }
        }
    }

    @Test func aLineACrashCutShortIsEndedBeforeTheNextOne() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("spotter-tap-\(UUID().uuidString).jsonl").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data(#"{"at":1,"id":"pos:1","kind":"mess"#.utf8).write(to: URL(fileURLWithPath: path))
        let tap = try LogTap(path: path)
        let record = ChatRecord(pos: 1, threadNo: 3, side: .client, seq: 1, at: 1, .message(MessageRecord(clientMessageID: "c\"1", body: "secret")))
        try tap.deliver([LogDelivery(record: record)])
        let file = TapFile(path)
        #expect(file.unreadable == 1)
        #expect(file.lines.count == 1)
        let contents = try String(contentsOfFile: path, encoding: .utf8)
        let line = #"{"at":1,"id":"pos:1","kind":"message","pos":1,"ref":"c\"1","seq":1,"side":"client","thread":3}"#
        #expect(contents.hasSuffix("mess\n" + line + "\n"), "\(contents)")
        #expect(!contents.contains("secret"), "bodies stay in the database")
    }

    /// `ref` names what the record is about, whatever its kind keeps in the log's columns: a receipt's "read"
    /// marker is no reference, a rating prompt after a session names it.
    @Test func eachKindsLineNamesItsReference() {
        func line(_ content: ChatRecord.Content) -> String {
            LogTap.line(LogDelivery(record: ChatRecord(pos: 2, threadNo: 1, side: .client, seq: 4, at: 9, content)))
        }
        let head = #"{"at":9,"id":"pos:2","#
        #expect(line(.receipt(ReceiptRecord(delivered: 4, read: 4, readMoved: true)))
            == head + #""kind":"receipt","pos":2,"seq":4,"side":"client","thread":1}"#)
        #expect(line(.ratingPrompt(.afterSession(sessionID: "s1")))
            == head + #""kind":"rating_prompt","pos":2,"ref":"s1","seq":4,"side":"client","thread":1}"#)
        #expect(line(.ratingPrompt(.afterMessages(sent: 10))) == head + #""kind":"rating_prompt","pos":2,"seq":4,"side":"client","thread":1}"#)
        #expect(line(.session(SessionRecord(sessionID: "s1", byParticipant: true, json: "{}"))).contains(#""ref":"s1""#))
        #expect(line(.tier(TierRecord(tier: "premium"))).contains(#""kind":"tier","pos":2,"ref":"premium""#))
        #expect(line(.coaching(CoachingChangeRecord(itemID: "g1", json: "{}"))).contains(#""kind":"record","pos":2,"ref":"g1""#))
        #expect(line(.unknown(ChatRecord.Columns(kind: 42, ref: "x"))) == head + #""kind":"unknown","pos":2,"seq":4,"side":"client","thread":1}"#)
    }

    @Test func aStalledConsumerHoldsNoSendBackAndItsLagShowsInMetrics() throws {
        let gate = DispatchSemaphore(value: 0)
        let stalled = RecordingConsumer(name: "stalled", gate: gate)
        let server = try TestServer {
            $0.logConsumers = [stalled]
            $0.logConsumerTiming.pollMilliseconds = 20
        }
        defer {
            for _ in 0..<100 { gate.signal() }
            server.stop()
        }
        let api = APIClient(port: server.port)
        let (_, clients, threads) = try api.coachWithClients(1, domain: "stalled.test")
        try waitUntil(10, "the consumer inside deliver with the link record") { stalled.inside.load(ordering: .acquiring) }
        let socket = try SpotterSocket(port: server.port, token: clients[0].access)
        for n in 1...30 {
            let result = try socket.result("message.send", ["thread_id": threads[0], "client_message_id": "m\(n)", "text": "t"])
            #expect(result["seq"] as? Int == n)
        }
        let lag = #"spotter_log_consumer_lag{consumer="stalled"}"#
        #expect(try server.metric(lag) ?? 0 >= 30)
        #expect(stalled.positions.isEmpty)
        for _ in 0..<100 { gate.signal() }
        try waitUntil(10, "the consumer caught up") { stalled.positions.count >= 31 }
        #expect(stalled.positions == Array(1...31))
        try waitUntil(10, "its lag back to 0") { (try? server.metric(lag)) == 0 }
        #expect(try server.metric(#"spotter_log_consumer_delivered_total{consumer="stalled"}"#) == 31)
    }
}
