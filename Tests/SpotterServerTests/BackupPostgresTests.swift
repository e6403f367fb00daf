import Foundation
import Testing
import TestSupport

/// The PostgreSQL recipe of deploy/README "Backup and restore", tested: `pg_dump -Fc` while clients send (one
/// consistent snapshot), `pg_restore` into a fresh database, the token secret copied into a new data directory;
/// a server on them serves the same history and a resume from a cursor of before the dump. Runs in the suite's
/// PostgreSQL pass (`SPOTTER_TEST_STORE=postgres`).
@Suite("Backup and restore on PostgreSQL", .serialized, .tags(.slow), .enabled(if: TestServer.onPostgres))
struct BackupPostgresTests {
    /// A PostgreSQL client program of the newest server version installed (the dump must not be older than the server).
    static func program(_ name: String) -> String {
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).compactMap(Int.init).sorted(by: >)
        return versions.map { "\(root)/\($0)/bin/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) } ?? name
    }

    @Test func pgDumpUnderChatLoadRestoresHistoryAndResumes() throws {
        let directory = BackupTests.temporary("pgbackup-live")
        let restoredDirectory = BackupTests.temporary("pgbackup-restored")
        let dump = BackupTests.temporary("pgbackup") + ".dump"
        defer {
            for path in [directory, restoredDirectory, dump] { try? FileManager.default.removeItem(atPath: path) }
        }
        let url = try TestServer.postgresDatabase(for: directory)
        var server = try ServerProcess(dataDirectory: directory, store: url)
        let api = APIClient(port: server.port)
        let chat = try api.coachWithClients(3, domain: "pgbackup.test")
        let coachPhone = try SpotterSocket(port: server.port, token: chat.coach.access)
        let coachCursor = coachPhone.helloCursor
        coachPhone.close()

        let burst = MessageBurst(try (0..<3).map { index in
            ("c\(index)", try SpotterSocket(port: server.port, token: chat.clients[index].access), chat.threads[index])
        })
        Thread.sleep(forTimeInterval: 1.0)
        let ackedBefore = burst.acknowledged()
        let dumped = Result { try PostgresCluster.run(Self.program("pg_dump"), ["-Fc", "--no-owner", "-d", url, "-f", dump]) }
        let ackedDuring = burst.acknowledged().count - ackedBefore.count
        Thread.sleep(forTimeInterval: 0.3)
        server.stop()
        let ackedAll = burst.waitForSenders()
        _ = try dumped.get()
        #expect(ackedBefore.count > 20, "too few messages before the dump: \(ackedBefore.count)")
        #expect(ackedDuring >= 0)

        // Restore: a fresh database, and a data directory with the token secret (and attachments, none here).
        let restoredURL = try PostgresCluster.shared().makeDatabase()
        _ = try PostgresCluster.run(Self.program("pg_restore"), ["--no-owner", "--exit-on-error", "-d", restoredURL, dump])
        try FileManager.default.createDirectory(atPath: restoredDirectory, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: directory + "/token-secret", toPath: restoredDirectory + "/token-secret")

        server = try ServerProcess(dataDirectory: directory, store: url)
        defer { server.stop() }
        let restored = try ServerProcess(dataDirectory: restoredDirectory, store: restoredURL)
        defer { #expect(restored.stop() == 0, "SIGTERM must end the restored server cleanly") }
        try BackupTests.expectRestored(restored, original: server, chat: chat, coachCursor: coachCursor,
                                       ackedBefore: ackedBefore, ackedAll: ackedAll)
    }
}
