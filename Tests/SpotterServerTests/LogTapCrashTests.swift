import Foundation
import Testing
import TestSupport

/// The log tap (`--log-tap`, a durable consumer of the log) through kill -9: at the moment a batch is written and
/// its position not yet saved (`consumer.delivered`), and from outside mid-burst. After the restart and more
/// sends, the tap holds every acknowledged message and every position from the first one, in log order by first
/// appearance; a record written twice (at least once) is the same line with the same delivery id.
@Suite("Log tap crash", .serialized, .tags(.slow))
struct LogTapCrashTests {
    /// nil: SIGKILL from outside, a second into the burst.
    @Test(arguments: ["consumer.delivered@log-tap:8", nil] as [String?])
    func theTapHoldsEveryAckedRecordThroughAKill(_ point: String?) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("spotter-tapcrash-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let tap = directory + "-tap.jsonl"
        defer { try? FileManager.default.removeItem(atPath: tap) }
        var server = try ServerProcess(dataDirectory: directory, arguments: ["--log-tap", tap],
                                       environment: point.map { ["SPOTTER_FAIL_POINT": $0] } ?? [:])
        let api = APIClient(port: server.port)
        let (_, clients, threads) = try api.coachWithClients(3, domain: "tapcrash.test")

        let burst = MessageBurst(try (0..<3).map { index in
            ("c\(index)", try SpotterSocket(port: server.port, token: clients[index].access), threads[index])
        })
        if point == nil {
            Thread.sleep(forTimeInterval: 1.0)
            server.stop(signal: SIGKILL)
        }
        let status = reap(server.process, timeout: 30)
        if status == nil { server.stop(signal: SIGKILL) }
        let ackedBefore = burst.waitForSenders()  // client_message_id → seq
        try #require(point == nil || status == SIGKILL, "the server did not reach \(point ?? "") within 30 s")
        #expect(ackedBefore.count > 20, "too few messages acknowledged before the kill: \(ackedBefore.count)")

        // Back up with the tap (named by its environment variable this time): more sends, then everything must
        // reach the file.
        server = try ServerProcess(dataDirectory: directory, environment: ["SPOTTER_LOG_TAP": tap])
        defer { #expect(server.stop() == 0, "SIGTERM must end the server cleanly") }
        var ackedAll = ackedBefore
        for index in 0..<3 {
            let socket = try SpotterSocket(port: server.port, token: clients[index].access)
            for n in 1...3 {
                let id = "after-c\(index)-\(n)"
                ackedAll[id] = try socket.result("message.send", ["thread_id": threads[index], "client_message_id": id, "text": "a"])["seq"] as? Int
            }
        }
        try waitUntil(20, "the tap holds every acknowledged message") { TapFile(tap).refs.isSuperset(of: ackedAll.keys) }

        let file = TapFile(tap)
        // A line a kill cut short in the middle of a write may stay (its batch is written again after it).
        #expect(file.unreadable <= (point == nil ? 1 : 0))
        #expect(file.differingRepeat == nil, "a record came back different: \(file.differingRepeat ?? "")")
        let positions = file.firstAppearances
        #expect(positions == Array(1...max(1, positions.count)), "positions out of order or missing (\(positions.count) of them)")
        if point != nil {
            #expect(file.repeats > 0, "the batch written before the kill was not written again")
        }
        for (id, seq) in ackedAll {
            let line = file.messages[id]
            #expect(line?["seq"] as? Int == seq, "\(point ?? "kill"): acked \(id) (seq \(seq)) missing from the tap or moved")
        }
    }
}
