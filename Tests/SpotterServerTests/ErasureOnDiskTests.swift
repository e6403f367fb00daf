import Foundation
import Testing
import SpotterCore
import SpotterServer
import SpotterPorts
import TestSupport

/// After an erasure and the purge, the account's personal data is in no file under the data directory (SQLite: the
/// database, its WAL and shared memory, the attachments) and in no row (PostgreSQL): issue 29's "Done means".
@Suite("An erased account on disk", .serialized)
struct ErasureOnDiskTests {
    /// Strings that exist only in the erased account's data.
    static let markers = [
        "Zubaida Qx7name", "qx7mail@erase.test", "966551239876", "qx7avatar", "qx7medical", "qx7reason", "qx7device",
        "qx7message",
    ]

    /// A phone account with a name, an email, an avatar, onboarding answers, a push device, a coach, a thread with
    /// messages both ways and a pending change request; then erased with a phone code. Answers the admin's token.
    static func eraseAFullAccount(_ server: TestServer) throws -> String {
        let api = APIClient(port: server.port)
        let adminID = SecureRandom.uuid()
        _ = try server.accounts.createUser(id: adminID, role: "admin", fullName: "Admin", email: "admin@erase.test", phone: nil,
                                           passwordHash: PasswordHasher(logN: 10).hash("adminpass"), now: 0)
        let admin = try #require(try api.call("POST", "/v1/auth/signin", ["email": "admin@erase.test", "password": "adminpass"])
            .string("access_token"))
        let coach = try api.signUp(role: "coach", name: "Carter Coach", email: "carter@erase.test")
        let other = try api.signUp(role: "coach", name: "Other Coach", email: "other@erase.test")

        #expect(try api.call("POST", "/v1/auth/otp/request", ["phone": "0551239876"]).status == 202)
        let signedIn = try api.call("POST", "/v1/auth/otp/verify",
                                    ["phone": "0551239876", "code": try #require(server.otp.lastCode(for: "+966551239876"))])
        let token = try #require(signedIn.string("access_token"))
        #expect(try api.call("PUT", "/v1/me", ["full_name": "Zubaida Qx7name"], token: token).status == 200)
        #expect(try api.call("POST", "/v1/me/email", ["email": "qx7mail@erase.test"], token: token).status == 202)
        let emailCode = try #require(server.otp.lastCode(for: "qx7mail@erase.test"))
        #expect(try api.call("POST", "/v1/me/email/verify", ["code": emailCode], token: token).status == 200)
        let avatar = try HTTPTestClient(port: server.port).request(
            "PUT", "/v1/me/avatar", headers: [("Authorization", "Bearer \(token)"), ("Content-Type", "image/png")],
            bytes: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array("qx7avatar image".utf8))
        #expect(avatar.status == 200)
        var answers = CoachingFixture.onboarding
        answers["medical_conditions"] = ["qx7medical condition"]
        #expect(try api.call("PUT", "/v1/me/onboarding", answers, token: token).status == 200)
        #expect(try api.call("POST", "/v1/me/devices", ["platform": "fcm", "token": "qx7device-token"], token: token).status / 100 == 2)
        #expect(try api.call("POST", "/v1/me/coach", ["coach_id": coach.id], token: token).status == 201)
        let thread = try #require(try api.call("GET", "/v1/me/coach", token: token).string("thread_id"))
        let client = try SpotterSocket(port: server.port, token: token)
        let coaching = try SpotterSocket(port: server.port, token: coach.access)
        _ = try client.result("message.send", ["thread_id": thread, "client_message_id": "c1", "text": "hello qx7message"])
        _ = try coaching.result("message.send", ["thread_id": thread, "client_message_id": "k1", "text": "welcome, coach's words"])
        #expect(try api.call("POST", "/v1/me/coach-change-requests", ["coach_id": other.id, "reason": "qx7reason here"],
                             token: token).status == 201)
        #expect(try threadsOf(coaching).first?["peer_name"] as? String == "Zubaida Qx7name")

        #expect(try api.call("POST", "/v1/auth/otp/request", ["phone": "0551239876"]).status == 202)
        let code = try #require(server.otp.lastCode(for: "+966551239876"))
        #expect(try api.call("DELETE", "/v1/me", ["code": code], token: token).status == 204)
        let seen = try #require(try threadsOf(coaching).first)
        #expect(seen["peer_erased"] as? Bool == true && seen["peer_name"] == nil)
        // The log's erasure record: her message a tombstone, the coach's words kept; the coach heard user.erased.
        let history = try coaching.wholeHistory(thread)
        #expect(history.count == 2 && !history.contains { ($0["text"] as? String)?.contains("qx7message") == true })
        #expect(history.contains { $0["text"] as? String == "welcome, coach's words" })
        #expect(try coaching.next("user.erased")["thread_id"] as? String == thread)
        return admin
    }

    static func threadsOf(_ socket: SpotterSocket) throws -> [[String: Any]] {
        try socket.result("threads")["threads"] as? [[String: Any]] ?? []
    }

    /// The purge: `POST /v1/admin/purge` answers once the bytes are gone (SQLite's freed pages zeroed by
    /// `secure_delete` and the WAL truncated; PostgreSQL's tables vacuumed).
    static func purge(_ server: TestServer, admin: String) throws {
        let answered = try APIClient(port: server.port).call("POST", "/v1/admin/purge", token: admin)
        #expect(answered.status == 200 && answered.json["purged"] as? Bool == true, "\(answered.text)")
    }

    /// The markers found in any file under `directory` (every file, the database's -wal and -shm included).
    static func markersOnDisk(_ directory: String) throws -> [String: [String]] {
        var found: [String: [String]] = [:]
        let enumerator = try #require(FileManager.default.enumerator(atPath: directory))
        while let relative = enumerator.nextObject() as? String {
            let path = directory + "/" + relative
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else { continue }
            let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            for marker in markers where bytes.range(of: Data(marker.utf8)) != nil { found[marker, default: []].append(relative) }
        }
        return found
    }

    @Test func onSQLiteNoFileUnderTheDataDirectoryHoldsTheErasedAccount() throws {
        if TestServer.onPostgres { return }  // the PostgreSQL test below
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("spotter-erase-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = try TestServer(dataDirectory: directory)
        defer { server.stop() }
        // Before: the scan finds what it looks for (it can fail).
        let api = APIClient(port: server.port)
        let probe = try api.signUp(role: "client", name: "Zubaida Qx7name", email: "probe@erase.test")
        #expect(try Self.markersOnDisk(directory)["Zubaida Qx7name"] != nil)
        #expect(try api.call("PUT", "/v1/me", ["full_name": "Probe"], token: probe.access).status == 200)

        let admin = try Self.eraseAFullAccount(server)
        try Self.purge(server, admin: admin)
        let left = try Self.markersOnDisk(directory)
        #expect(left.isEmpty, "left on disk: \(left)")
        // The email and the phone are free for a new sign-up.
        #expect(try api.signUp(role: "client", name: "New", email: "qx7mail@erase.test").id.isEmpty == false)
    }

    @Test func onPostgreSQLNoRowHoldsTheErasedAccount() throws {
        let cluster = try PostgresCluster.shared()
        let url = try cluster.makeDatabase()
        let database = String(url.split(separator: "/").last!)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("spotter-erase-pg-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = try TestServer(dataDirectory: directory, postgresURL: url)
        defer { server.stop() }
        func rowsWith(_ marker: String) throws -> [String] {
            let tables = try cluster.psql(database, "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1")
                .split(separator: "\n").map(String.init)
            #expect(tables.contains("user") && tables.contains("log"))
            return try tables.filter { table in
                try cluster.psql(database, #"SELECT count(*) FROM "\#(table)" t WHERE t::text LIKE '%\#(marker)%'"#)
                    .trimmingCharacters(in: .whitespacesAndNewlines) != "0"
            }
        }
        let api = APIClient(port: server.port)
        _ = try api.signUp(role: "client", name: "Zubaida Qx7name", email: "probe@erase.test")
        #expect(try rowsWith("Zubaida Qx7name") == ["user"])  // the query finds what it looks for

        let admin = try Self.eraseAFullAccount(server)
        try Self.purge(server, admin: admin)
        for marker in Self.markers where marker != "Zubaida Qx7name" && marker != "qx7avatar" {
            #expect(try rowsWith(marker).isEmpty, "\(marker) is still in a row")
        }
        #expect(try rowsWith("Zubaida Qx7name") == ["user"], "only the probe's row holds the name")
        let files = try Self.markersOnDisk(directory)["qx7avatar"]
        #expect(files == nil, "the avatar file is still there: \(String(describing: files))")
        #expect(try api.signUp(role: "client", name: "New", email: "qx7mail@erase.test").id.isEmpty == false)
    }
}
