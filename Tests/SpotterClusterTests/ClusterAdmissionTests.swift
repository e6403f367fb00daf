import Foundation
import Testing
import TestSupport

/// What a process decides before a command or an upload reaches its memory, held across processes: the account's
/// budget of session creates (counted in the shared `rateLimit` rows) and an upload to a thread this process has not
/// followed yet (read from the store before its head is decided).
@Suite("Cluster: admissions that hold across processes", .serialized)
struct ClusterAdmissionTests {
    /// A coach's three sockets on three processes share one budget of 30 session creates a minute: each process's
    /// own count (15 each) would let all 45 through.
    @Test func aCoachsInvitesOnThreeProcessesShareOneBudget() throws {
        let cluster = try ClusterFixture(processes: 3)
        defer { cluster.stop() }
        let (coach, _, thread) = try cluster.linkedPair("budget", coachOn: 0, clientOn: 1)
        let sockets = try (0..<3).map { try SpotterSocket(port: cluster.port($0), token: coach.access) }
        let base = Int(Date().timeIntervalSince1970) + 86_400
        var accepted = 0, limited: [[String: Any]] = [], other: [String] = []
        for index in 0..<45 {
            let reply = try sockets[index % 3].command("session.invite", ["thread_id": thread, "start": base + index * 3600,
                                                                          "duration_minutes": 30, "purpose": "Call \(index)"])
            if reply["ok"] as? Bool == true { accepted += 1 }
            else if errorCode(reply) == "rate_limited" { limited.append(reply["error"] as? [String: Any] ?? [:]) }
            else { other.append("\(reply)") }
        }
        // The pair's 20 open sessions come first: past them `too_many_sessions`, which is no budget's answer.
        #expect(accepted == 20)
        #expect(other.count + limited.count == 25)
        #expect(limited.count >= 45 - 30, "\(limited.count) refused by the budget, \(other.count) otherwise")
        #expect(limited.allSatisfy { ($0["retry_after"] as? Int ?? 0) >= 1 && $0["field"] as? String == "type" })
        for socket in sockets { #expect(try socket.result("me")["id"] as? String == coach.id) }
    }

    /// An upload to a thread linked on another process a moment ago (the log stream down, so the other process
    /// has not followed the link) is admitted after the thread is read, not refused `403` from memory; an
    /// outsider's upload to it and an upload to a thread that does not exist are still `403`, before any body.
    @Test func anUploadToAThreadJustLinkedElsewhereIsAdmitted() throws {
        let cluster = try ClusterFixture(processes: 2)
        defer { cluster.stop() }
        let pdf = Array("%PDF-1.7\n%âãÏÓ\n1 0 obj\n".utf8)
        func upload(_ thread: String, _ token: String) throws -> TestHTTPResponse {
            try HTTPTestClient(port: cluster.port(1)).request(
                "POST", "/v1/threads/\(thread)/attachments",
                headers: [("Authorization", "Bearer \(token)"), ("Content-Type", "application/pdf")], bytes: pdf)
        }
        let outsider = try APIClient(port: cluster.port(0)).signUp(role: "client", name: "Outsider", email: "outsider@upload.test")
        for round in 0..<2 {
            let coach = try APIClient(port: cluster.port(0)).signUp(role: "coach", name: "Coach", email: "coach\(round)@upload.test")
            let client = try APIClient(port: cluster.port(0)).signUp(role: "client", name: "Client", email: "client\(round)@upload.test")
            cluster.nats.stop()
            let link = try APIClient(port: cluster.port(0)).call("POST", "/v1/me/coach", ["coach_id": coach.id], token: client.access)
            let thread = try #require(link.string("thread_id"), "\(link.json)")
            let stranger = try upload(thread, outsider.access)
            #expect(stranger.status == 403, "round \(round): \(String(decoding: stranger.body, as: UTF8.self))")
            let uploaded = try upload(thread, client.access)
            #expect(uploaded.status == 201, "round \(round): \(String(decoding: uploaded.body, as: UTF8.self))")
            try cluster.nats.start()
        }
        #expect(try upload(UUID().uuidString.lowercased(), outsider.access).status == 403)
        // No token: refused at once, without reading anything.
        let anonymous = try HTTPTestClient(port: cluster.port(1)).request(
            "POST", "/v1/threads/\(UUID().uuidString.lowercased())/attachments", headers: [("Content-Type", "application/pdf")], bytes: pdf)
        #expect(anonymous.status == 401)
    }
}
