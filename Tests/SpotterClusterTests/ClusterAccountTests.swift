import Foundation
import Testing
import TestSupport
import WebSocket

/// What the cluster agrees on about accounts (issue 31 item 5): a sign-out, a reused refresh token and a password
/// change on one process close the sessions' sockets (4003) on the others and refuse their access tokens (401
/// `session_revoked`, over HTTP and on a new socket) within a second; a profile change (name, language, time zone)
/// and a tier change made on one process are what the others show, without a restart. Each goes through the log's
/// `account` record; a record lost to a crash is covered by each process reading recent revocations every few
/// seconds. Three real processes, loopback only.
///
/// Each test fails without the change (checked by hand, 2026-11-27): with `applyFollowed` not calling
/// `accountChangedElsewhere` and the server's sweep not calling `pollRevocations`, all six fail (sockets never
/// closed, stale profile and tier); with only the poll off, the five record tests pass and the crash test fails.
@Suite("Cluster: accounts agree across processes", .serialized)
struct ClusterAccountTests {
    typealias Session = (access: String, refresh: String)

    /// Signs in again (another session of the same account) on process `on`.
    static func signIn(_ cluster: ClusterFixture, on index: Int, _ email: String, password: String = "secret1") throws -> Session {
        let response = try APIClient(port: cluster.port(index)).call("POST", "/v1/auth/signin", ["email": email, "password": password])
        guard response.status == 200, let access = response.string("access_token"), let refresh = response.string("refresh_token") else {
            throw BlockingSocket.Failure(description: "sign-in failed: \(response.status) \(response.text)")
        }
        return (access, refresh)
    }

    /// Every listed process refuses `token` over HTTP and for a new socket with `session_revoked`.
    static func expectRefused(_ cluster: ClusterFixture, _ token: String, on processes: [Int], line: Int = #line) throws {
        for index in processes {
            let me = try APIClient(port: cluster.port(index)).call("GET", "/v1/me", token: token)
            #expect(me.status == 401 && me.errorCode == "session_revoked", "process \(index), line \(line): \(me.status) \(me.text)")
            let upgrade = try APIClient(port: cluster.port(index)).call("GET", "/v1/ws", token: token)
            #expect(upgrade.status == 401 && upgrade.errorCode == "session_revoked", "process \(index), line \(line): \(upgrade.text)")
            #expect(throws: (any Error).self, "a new socket opened on process \(index)") { try SpotterSocket(port: cluster.port(index), token: token) }
        }
    }

    /// Waits for each socket's close and checks that it is 4003 and came within a second of `since`.
    static func expectClosedWithinASecond(_ sockets: [(String, SpotterSocket)], since: Date, line: Int = #line) throws {
        for (name, socket) in sockets {
            let code = try socket.ws.awaitClose()
            let after = Date().timeIntervalSince(since)
            #expect(code == .some(CloseCode(4003)), "\(name), line \(line): \(String(describing: code))")
            #expect(after < 1, "\(name) closed \(after) s after the change (line \(line))")
        }
    }

    @Test func aSignOutOnOneProcessIsRefusedOnTheOthersWithinASecond() throws {
        let cluster = try ClusterFixture(processes: 3)
        defer { cluster.stop() }
        let client = try APIClient(port: cluster.port(0)).signUp(role: "client", name: "Client", email: "client@signout.test")
        let other = try Self.signIn(cluster, on: 1, "client@signout.test")  // the phone stays signed in
        let onB = try SpotterSocket(port: cluster.port(1), token: client.access)
        let onC = try SpotterSocket(port: cluster.port(2), token: client.access)
        let phoneOnB = try SpotterSocket(port: cluster.port(1), token: other.access)
        Thread.sleep(forTimeInterval: 0.3)

        let signedOut = try APIClient(port: cluster.port(0)).call("POST", "/v1/auth/signout", ["refresh_token": client.refresh])
        let at = Date()
        #expect(signedOut.status == 204, "\(signedOut.text)")
        try Self.expectClosedWithinASecond([("B", onB), ("C", onC)], since: at)
        try Self.expectRefused(cluster, client.access, on: [0, 1, 2])
        // Only that session: the other one still works everywhere.
        _ = try phoneOnB.result("threads")
        for index in 0..<3 {
            #expect(try APIClient(port: cluster.port(index)).call("GET", "/v1/me", token: other.access).status == 200)
        }
    }

    @Test func aReusedRefreshTokenRevokesItsSessionOnEveryProcess() throws {
        let cluster = try ClusterFixture(processes: 3)
        defer { cluster.stop() }
        let client = try APIClient(port: cluster.port(0)).signUp(role: "client", name: "Client", email: "client@reuse.test")
        let refreshed = try APIClient(port: cluster.port(2)).call("POST", "/v1/auth/refresh", ["refresh_token": client.refresh])
        let access = try #require(refreshed.string("access_token"), "\(refreshed.text)")
        let onB = try SpotterSocket(port: cluster.port(1), token: access)
        let onC = try SpotterSocket(port: cluster.port(2), token: client.access)
        Thread.sleep(forTimeInterval: 0.3)

        // The rotated token again (stolen, or a confused client): the whole session is revoked, on A.
        let reused = try APIClient(port: cluster.port(0)).call("POST", "/v1/auth/refresh", ["refresh_token": client.refresh])
        let at = Date()
        #expect(reused.errorCode == "refresh_token_reused", "\(reused.text)")
        try Self.expectClosedWithinASecond([("B", onB), ("C", onC)], since: at)
        try Self.expectRefused(cluster, access, on: [1, 2])
        try Self.expectRefused(cluster, client.access, on: [1, 2])
    }

    @Test func aPasswordChangeSignsOutTheOtherSessionsOnEveryProcess() throws {
        let cluster = try ClusterFixture(processes: 3)
        defer { cluster.stop() }
        let client = try APIClient(port: cluster.port(0)).signUp(role: "client", name: "Client", email: "client@password.test")
        let tablet = try Self.signIn(cluster, on: 1, "client@password.test")
        let laptop = try Self.signIn(cluster, on: 2, "client@password.test")
        let tabletOnB = try SpotterSocket(port: cluster.port(1), token: tablet.access)
        let laptopOnC = try SpotterSocket(port: cluster.port(2), token: laptop.access)
        let laptopOnB = try SpotterSocket(port: cluster.port(1), token: laptop.access)
        let keptOnC = try SpotterSocket(port: cluster.port(2), token: client.access)
        Thread.sleep(forTimeInterval: 0.3)

        let changed = try APIClient(port: cluster.port(0)).call("PUT", "/v1/me/password", [
            "current_password": "secret1", "new_password": "secret2x", "new_password_confirmation": "secret2x",
        ], token: client.access)
        let at = Date()
        #expect(changed.status == 204, "\(changed.text)")
        try Self.expectClosedWithinASecond([("tablet on B", tabletOnB), ("laptop on C", laptopOnC), ("laptop on B", laptopOnB)], since: at)
        try Self.expectRefused(cluster, tablet.access, on: [1, 2])
        try Self.expectRefused(cluster, laptop.access, on: [1, 2])
        // The session that changed it stays signed in, here and elsewhere.
        _ = try keptOnC.result("threads")
        #expect(try APIClient(port: cluster.port(1)).call("GET", "/v1/me", token: client.access).status == 200)
    }

    @Test func aProfileChangedOnOneProcessIsWhatTheOthersShow() throws {
        let cluster = try ClusterFixture(processes: 3)
        defer { cluster.stop() }
        let (coach, client, thread) = try cluster.linkedPair("profile", coachOn: 1, clientOn: 2)
        let coachOnB = try SpotterSocket(port: cluster.port(1), token: coach.access)
        let listed = try #require((try coachOnB.result("threads")["threads"] as? [[String: Any]])?.first)
        #expect(listed["peer_name"] as? String == "Client" && listed["thread_id"] as? String == thread)

        let updated = try APIClient(port: cluster.port(0)).call("PUT", "/v1/me", [
            "full_name": "Amal Al-Harbi", "language": "ar", "time_zone": "Asia/Riyadh",
        ], token: client.access)
        #expect(updated.status == 200, "\(updated.text)")
        // Within a second: the coach's thread list on B names the client anew, and B and C answer the new profile.
        try waitUntil(1, "the new name in the coach's thread list on B") {
            ((try? coachOnB.result("threads"))?["threads"] as? [[String: Any]])?.first?["peer_name"] as? String == "Amal Al-Harbi"
        }
        for index in [1, 2] {
            try waitUntil(1, "the new profile on process \(index)") {
                let me = (try? APIClient(port: cluster.port(index)).call("GET", "/v1/me", token: client.access))?.json ?? [:]
                return me["full_name"] as? String == "Amal Al-Harbi" && me["language"] as? String == "ar"
                    && me["time_zone"] as? String == "Asia/Riyadh"
            }
        }
        // Another change, of the language alone: the name stays.
        _ = try APIClient(port: cluster.port(2)).call("PUT", "/v1/me/language", ["language": "en"], token: client.access)
        try waitUntil(1, "the language back to English on process 1") {
            let me = (try? APIClient(port: cluster.port(1)).call("GET", "/v1/me", token: client.access))?.json ?? [:]
            return me["language"] as? String == "en" && me["full_name"] as? String == "Amal Al-Harbi"
        }
    }

    @Test func aTierChangedOnOneProcessIsWhatTheOthersMeter() throws {
        let cluster = try ClusterFixture(processes: 3, options: ["--tiers"])
        defer { cluster.stop() }
        try Self.createAdmin(cluster)
        let admin = try Self.signIn(cluster, on: 0, "ops@accounts.test", password: "adminpass1")
        // A client with no coach yet: no thread to log the tier on.
        let client = try APIClient(port: cluster.port(1)).signUp(role: "client", name: "Client", email: "client@tier.test")
        let before = try APIClient(port: cluster.port(1)).call("GET", "/v1/admin/users/\(client.id)/usage", token: admin.access)
        #expect(before.string("tier") == "freemium", "\(before.text)")
        let freemiumLimit = ((before.object("quota")?["messages"]) as? [String: Any])?["limit"] as? Int

        let set = try APIClient(port: cluster.port(0)).call("PUT", "/v1/admin/users/\(client.id)/tier", ["tier": "premium"], token: admin.access)
        #expect(set.status == 200, "\(set.text)")
        let premiumLimit = ((set.object("quota")?["messages"]) as? [String: Any])?["limit"] as? Int
        #expect(premiumLimit != nil && premiumLimit != freemiumLimit)
        // (Process 1 knows the client: signed up there. A process that never saw them reads the row when asked.)
        for index in [1] {
            try waitUntil(1, "the premium tier metered on process \(index)") {
                let usage = try? APIClient(port: cluster.port(index)).call("GET", "/v1/admin/users/\(client.id)/usage", token: admin.access)
                return usage?.string("tier") == "premium"
                    && ((usage?.object("quota")?["messages"]) as? [String: Any])?["limit"] as? Int == premiumLimit
            }
        }
    }

    /// The process that signed the session out dies before its record is logged: the others still refuse the token
    /// within their periodic read of revocations (every 3 s), not at the token's expiry.
    @Test func aRevocationWhoseRecordWasLostIsLearntFromTheAccounts() throws {
        let cluster = try ClusterFixture(processes: 2)
        defer { cluster.stop() }
        try cluster.start(2, environment: ["SPOTTER_FAIL_POINT": "account.committed"])
        let client = try APIClient(port: cluster.port(2)).signUp(role: "client", name: "Client", email: "client@lost.test")
        let onB = try SpotterSocket(port: cluster.port(1), token: client.access)
        Thread.sleep(forTimeInterval: 0.3)

        _ = try? APIClient(port: cluster.port(2)).call("POST", "/v1/auth/signout", ["refresh_token": client.refresh])
        let died = cluster.processes[2]?.process
        try waitUntil(10, "the signing-out process dies at its fail point") { died?.isRunning == false }
        #expect(try onB.ws.awaitClose() == .some(CloseCode(4003)))
        try Self.expectRefused(cluster, client.access, on: [0, 1])
        // Operators see that the net caught one.
        let metrics = try APIClient(port: cluster.port(1)).call("GET", "/metrics").text
        #expect(metrics.contains("spotter_cluster_revocations_from_accounts_total 1"), "\(metrics.split(separator: "\n").filter { $0.contains("revocations") })")
    }

    /// `spotter admin create-admin` on the cluster's database: ops@accounts.test, password adminpass1.
    static func createAdmin(_ cluster: ClusterFixture) throws {
        let process = Process()
        process.executableURL = ServerProcess.binary
        process.arguments = ["admin", "create-admin", "--data-dir", cluster.directory, "--store", cluster.store,
                             "--email", "ops@accounts.test", "--full-name", "Ops", "--log-level", "warning"]
        process.environment = ProcessInfo.processInfo.environment.merging(["SPOTTER_ADMIN_PASSWORD": "adminpass1"]) { $1 }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "spotter admin create-admin failed")
    }
}
