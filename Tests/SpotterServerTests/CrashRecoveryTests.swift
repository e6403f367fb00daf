import Foundation
import Synchronization
import Testing
import TestSupport

/// An acknowledged message survives `kill -9`: a burst of sends from
/// several clients, SIGKILL mid-burst, restart; every acked message is in
/// history exactly once, and resume delivers what a device missed.
@Suite("Crash recovery", .serialized, .tags(.slow))
struct CrashRecoveryTests {
    @Test func ackedMessagesSurviveKill9AndResumeCatchesUp() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("spotter-kill9-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var server = try ServerProcess(dataDirectory: directory)
        var api = APIClient(port: server.port)
        let (coach, clients, threads) = try api.coachWithClients(3, domain: "crash.test")
        // The coach's phone saw everything up to here, then lost signal.
        let coachPhone = try SpotterSocket(port: server.port, token: coach.access)
        let coachCursor = coachPhone.helloCursor
        coachPhone.close()

        // Three clients send as fast as acks come back; SIGKILL lands mid-burst.
        let burst = MessageBurst(try (0..<3).map { index in
            ("c\(index)", try SpotterSocket(port: server.port, token: clients[index].access), threads[index])
        })
        Thread.sleep(forTimeInterval: 1.0)
        server.stop(signal: SIGKILL)
        let ackedNow = burst.waitForSenders()  // client_message_id → seq
        #expect(ackedNow.count > 30, "too few messages acknowledged before the kill: \(ackedNow.count)")

        server = try ServerProcess(dataDirectory: directory)
        defer { #expect(server.stop() == 0, "SIGTERM must end the server cleanly") }
        api = APIClient(port: server.port)
        var total = 0
        for index in 0..<3 {
            let socket = try SpotterSocket(port: server.port, token: clients[index].access)
            let messages = try socket.wholeHistory(threads[index])
            let ids = messages.compactMap { $0["client_message_id"] as? String }
            let seqs = messages.compactMap { $0["seq"] as? Int }.sorted()
            #expect(Set(ids).count == ids.count, "client \(index): a message is stored twice")
            #expect(seqs == Array(1...max(1, seqs.count)).prefix(seqs.count).map { $0 }, "client \(index): seq has gaps")
            let mine = ackedNow.filter { $0.key.hasPrefix("c\(index)-") }
            let stored = Dictionary(uniqueKeysWithValues: zip(ids, messages.compactMap { $0["seq"] as? Int }))
            for (id, seq) in mine {
                #expect(stored[id] == seq, "acked \(id) (seq \(seq)) lost or moved")
            }
            total += messages.count
            // A retry after a lost ack (same id, same text) returns the original, creates nothing.
            if let last = mine.max(by: { $0.value < $1.value }) {
                let n = last.key.split(separator: "-").last!
                let retry = try socket.result("message.send", ["thread_id": threads[index], "client_message_id": last.key, "text": MessageBurst.text(n)])
                #expect(retry["seq"] as? Int == last.value)
            }
        }

        // The coach comes back and resumes from the old cursor: every message, once, in order.
        let back = try SpotterSocket(port: server.port, token: coach.access)
        let reply = try back.command("resume", ["cursor": coachCursor])
        #expect(reply["ok"] as? Bool == true, "\(reply)")
        let events = back.drain(for: 0.5).filter { $0["type"] as? String != "live" }
        let cursors = events.compactMap { $0["cursor"] as? Int }
        #expect(cursors.first == coachCursor + 1)
        #expect(zip(cursors, cursors.dropFirst()).allSatisfy { $1 == $0 + 1 }, "gaps or duplicates in the replay")
        let replayedMessages = events.filter { $0["type"] as? String == "message" }.count
        #expect(replayedMessages == total, "replayed \(replayedMessages) of \(total) messages")
    }

    @Test func ackedSessionChangesSurviveKill9() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("spotter-kill9-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var server = try ServerProcess(dataDirectory: directory)
        let api = APIClient(port: server.port)
        let coach = try api.signUp(role: "coach", name: "Coach", email: "coach@crash.test")
        let client = try api.signUp(role: "client", name: "Client", email: "client@crash.test")
        let thread = try #require(try api.call("POST", "/v1/me/coach", ["coach_id": coach.id], token: client.access).string("thread_id"))
        // The coach invites as fast as the socket's command budget allows, an hour apart (no overlaps); SIGKILL
        // lands mid-burst.
        let base = Int(Date().timeIntervalSince1970) + 86_400
        let acked = Mutex<[String]>([])
        let socket = try SpotterSocket(port: server.port, token: coach.access)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            defer { done.signal() }
            var n = 0
            while n < 2000 {
                guard let reply = try? socket.command("session.invite", [
                    "thread_id": thread, "start": base + n * 3600, "duration_minutes": 15, "purpose": "Burst \(n)",
                ]) else { return }  // the server is gone
                if let id = (reply["result"] as? [String: Any])?["id"] as? String {
                    acked.withLock { $0.append(id) }
                    n += 1
                } else {
                    Thread.sleep(forTimeInterval: 0.02)  // rate_limited: the socket's command budget refills
                }
            }
        }
        Thread.sleep(forTimeInterval: 1.0)
        server.stop(signal: SIGKILL)
        done.wait()
        let ackedNow = acked.withLock { $0 }
        #expect(ackedNow.count > 10, "too few invites acknowledged before the kill: \(ackedNow.count)")

        server = try ServerProcess(dataDirectory: directory)
        defer { #expect(server.stop() == 0, "SIGTERM must end the server cleanly") }
        let after = try SpotterSocket(port: server.port, token: coach.access)
        let list = try after.result("sessions", ["from": base - 60, "to": base + 91 * 86_400])
        let stored = Set((list["sessions"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String })
        #expect(Set(ackedNow).isSubset(of: stored), "\(Set(ackedNow).subtracting(stored).count) acknowledged invites lost")
    }
}

extension Tag {
    @Tag static var slow: Self

}
