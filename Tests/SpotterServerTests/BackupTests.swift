import Foundation
import GRDB
import Testing
import TestSupport

/// `spotter admin backup` against the real binary: a backup taken while clients send is a data directory a server
/// starts on, with every message acknowledged before the backup began, seqs without gaps, and a resume from a
/// cursor taken before the backup; refusals exit with their codes and touch nothing; a backup killed midway
/// leaves no directory under the output's name. SQLite only (PostgreSQL is backed up with pg_dump: deploy/README).
@Suite("Backup and restore", .serialized, .tags(.slow), .enabled(if: !TestServer.onPostgres))
struct BackupTests {
    static func temporary(_ name: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("spotter-\(name)-\(UUID().uuidString)").path
    }

    /// Runs `spotter` with `arguments`; its exit status and what it printed.
    static func spotter(_ arguments: [String]) throws -> (status: Int32, out: String, err: String) {
        let process = Process()
        process.executableURL = ServerProcess.binary
        process.arguments = arguments
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let printed = out.fileHandleForReading.readDataToEndOfFile()
        let complained = err.fileHandleForReading.readDataToEndOfFile()
        let status = reap(process, timeout: 120) ?? -1
        return (status, String(decoding: printed, as: UTF8.self), String(decoding: complained, as: UTF8.self))
    }

    /// A data directory with a migrated database and no server.
    static func migratedDataDirectory() throws -> String {
        let directory = temporary("backup-data")
        let migrated = try spotter(["migrate", "--data-dir", directory, "--log-level", "error"])
        #expect(migrated.status == 0, "\(migrated.err)")
        return directory
    }

    @Test func backupUnderChatLoadServesTheSameHistoryAndResumes() throws {
        let directory = Self.temporary("backup-live")
        let output = Self.temporary("backup-out")
        defer {
            try? FileManager.default.removeItem(atPath: directory)
            try? FileManager.default.removeItem(atPath: output)
        }
        var server = try ServerProcess(dataDirectory: directory)
        let api = APIClient(port: server.port)
        let (coach, clients, threads) = try api.coachWithClients(3, domain: "backup.test")
        // The coach's phone saw everything up to here, then went quiet until after the restore.
        let coachPhone = try SpotterSocket(port: server.port, token: coach.access)
        let coachCursor = coachPhone.helloCursor
        coachPhone.close()

        let burst = MessageBurst(try (0..<3).map { index in
            ("c\(index)", try SpotterSocket(port: server.port, token: clients[index].access), threads[index])
        })
        Thread.sleep(forTimeInterval: 1.0)
        let ackedBefore = burst.acknowledged()
        let backup = try Self.spotter(["admin", "backup", "--data-dir", directory, "--output", output, "--pages-per-step", "16"])
        let ackedDuring = burst.acknowledged().count - ackedBefore.count
        Thread.sleep(forTimeInterval: 0.3)
        server.stop()
        let ackedAll = burst.waitForSenders()
        #expect(backup.status == 0, "backup failed: \(backup.err)")
        #expect(backup.out.contains("backed up"), "\(backup.out)")
        #expect(ackedBefore.count > 20, "too few messages before the backup: \(ackedBefore.count)")
        #expect(ackedDuring > 0, "the server acknowledged nothing while the backup ran")
        #expect(!FileManager.default.fileExists(atPath: output + ".partial"))
        #expect(FileManager.default.fileExists(atPath: output + "/token-secret"))

        // The original, restarted, and a server on the backup, side by side.
        server = try ServerProcess(dataDirectory: directory)
        defer { server.stop() }
        let restored = try ServerProcess(dataDirectory: output)
        defer { #expect(restored.stop() == 0, "SIGTERM must end the restored server cleanly") }
        try Self.expectRestored(restored, original: server, chat: (coach, clients, threads), coachCursor: coachCursor,
                                ackedBefore: ackedBefore, ackedAll: ackedAll)
    }

    /// What a server on a backup must serve: every message acknowledged before the backup began at its seq, seqs
    /// from 1 without gaps, the original's history as of one moment (a prefix of it, message for message), a
    /// resume from the coach's cursor of before the backup replaying every record once, and new sends after it.
    static func expectRestored(_ restored: ServerProcess, original server: ServerProcess,
                               chat: (coach: APIClient.Account, clients: [APIClient.Account], threads: [String]),
                               coachCursor: Int, ackedBefore: [String: Int], ackedAll: [String: Int]) throws {
        let (coach, clients, threads) = chat
        var total = 0
        for index in 0..<clients.count {
            // Tokens signed before the backup hold on the restored server: the token secret came along.
            // Oldest first (a history page comes newest first).
            let bySeq = { (a: [String: Any], b: [String: Any]) in (a["seq"] as? Int ?? 0) < (b["seq"] as? Int ?? 0) }
            let copy = try SpotterSocket(port: restored.port, token: clients[index].access).wholeHistory(threads[index]).sorted(by: bySeq)
            let original = try SpotterSocket(port: server.port, token: clients[index].access).wholeHistory(threads[index]).sorted(by: bySeq)
            let pairs = copy.map { ($0["client_message_id"] as? String ?? "", $0["seq"] as? Int ?? -1) }
            let seqs = pairs.map(\.1)
            #expect(seqs == Array(1...max(1, seqs.count)).prefix(seqs.count).map { $0 }, "client \(index): seqs have gaps")
            let stored = Dictionary(pairs, uniquingKeysWith: { first, _ in first })
            #expect(stored.count == pairs.count, "client \(index): a message is stored twice")
            for (id, seq) in ackedBefore where id.hasPrefix("c\(index)-") {
                #expect(stored[id] == seq, "acknowledged before the backup: \(id) (seq \(seq)) missing or moved")
            }
            let originalPairs = original.prefix(copy.count).map { ($0["client_message_id"] as? String ?? "", $0["seq"] as? Int ?? -1) }
            #expect(originalPairs.map(\.0) == pairs.map(\.0) && originalPairs.map(\.1) == seqs, "client \(index): not a prefix")
            #expect(copy.count <= ackedAll.filter { $0.key.hasPrefix("c\(index)-") }.count + 1)
            total += copy.count
        }

        // The coach comes back to the restored server with the cursor from before the backup.
        let back = try SpotterSocket(port: restored.port, token: coach.access)
        let reply = try back.command("resume", ["cursor": coachCursor])
        #expect(reply["ok"] as? Bool == true, "\(reply)")
        let events = back.drain(for: 0.5).filter { $0["type"] as? String != "live" }
        let cursors = events.compactMap { $0["cursor"] as? Int }
        #expect(cursors.first == coachCursor + 1)
        #expect(zip(cursors, cursors.dropFirst()).allSatisfy { $1 == $0 + 1 }, "gaps or duplicates in the replay")
        #expect(events.filter { $0["type"] as? String == "message" }.count == total)
        // The restored server takes new messages after the copied ones.
        let next = try SpotterSocket(port: restored.port, token: clients[0].access)
            .result("message.send", ["thread_id": threads[0], "client_message_id": "after-restore", "text": "hello again"])
        let firstCount = try SpotterSocket(port: restored.port, token: clients[0].access).wholeHistory(threads[0]).count
        #expect(next["seq"] as? Int == firstCount)
    }

    @Test func refusalsExitWithTheirCodesAndTouchNothing() throws {
        let data = try Self.migratedDataDirectory()
        let scratch = Self.temporary("backup-scratch")
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        defer {
            try? FileManager.default.removeItem(atPath: data)
            try? FileManager.default.removeItem(atPath: scratch)
        }
        // No data directory; a directory without a database (a PostgreSQL server's).
        let missing = try Self.spotter(["admin", "backup", "--data-dir", scratch + "/nowhere", "--output", scratch + "/a"])
        #expect(missing.status == 66 && missing.err.contains("no data directory"), "\(missing)")
        try FileManager.default.createDirectory(atPath: scratch + "/empty-data", withIntermediateDirectories: true)
        let noDatabase = try Self.spotter(["admin", "backup", "--data-dir", scratch + "/empty-data", "--output", scratch + "/a"])
        #expect(noDatabase.status == 66 && noDatabase.err.contains("no SQLite database"), "\(noDatabase)")
        #expect(!FileManager.default.fileExists(atPath: scratch + "/a") && !FileManager.default.fileExists(atPath: scratch + "/a.partial"))

        // An output with something in it stays as it was.
        try FileManager.default.createDirectory(atPath: scratch + "/full", withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: scratch + "/full/keep", contents: Data("mine".utf8))
        let full = try Self.spotter(["admin", "backup", "--data-dir", data, "--output", scratch + "/full"])
        #expect(full.status == 73 && full.err.contains("exists"), "\(full)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch + "/full") == ["keep"])
        FileManager.default.createFile(atPath: scratch + "/file", contents: Data("x".utf8))
        #expect(try Self.spotter(["admin", "backup", "--data-dir", data, "--output", scratch + "/file"]).status == 73)
        // Inside the data directory (also spelled with a trailing slash and through "..").
        #expect(try Self.spotter(["admin", "backup", "--data-dir", data, "--output", data + "/backup"]).status == 64)
        #expect(try Self.spotter(["admin", "backup", "--data-dir", data, "--output", data + "/attachments/../b/"]).status != 0)
        #expect(try Self.spotter(["admin", "backup", "--data-dir", data + "/", "--output", data]).status == 64)
        // Something not ours at <output>.partial is not removed.
        try FileManager.default.createDirectory(atPath: scratch + "/b.partial", withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: scratch + "/b.partial/keep", contents: Data("mine".utf8))
        let foreign = try Self.spotter(["admin", "backup", "--data-dir", data, "--output", scratch + "/b"])
        #expect(foreign.status == 73 && foreign.err.contains("not an unfinished backup"), "\(foreign)")
        #expect(FileManager.default.fileExists(atPath: scratch + "/b.partial/keep"))
        // Options out of range.
        #expect(try Self.spotter(["admin", "backup", "--data-dir", data, "--output", scratch + "/c", "--pages-per-step", "0"]).status == 64)
        #expect(try Self.spotter(["admin", "backup", "--data-dir", data, "--output", scratch + "/c", "--step-pause", "-1"]).status == 64)
        #expect(try Self.spotter(["admin", "backup", "--data-dir", data, "--output", scratch + "/c",
                                  "--pages-per-step", "9223372036854775808"]).status == 64)

        // An empty directory is a fine output; a server that is not running is backed up all the same.
        try FileManager.default.createDirectory(atPath: scratch + "/ready", withIntermediateDirectories: true)
        let done = try Self.spotter(["admin", "backup", "--data-dir", data, "--output", scratch + "/ready"])
        #expect(done.status == 0, "\(done)")
        #expect(FileManager.default.fileExists(atPath: scratch + "/ready/spotter.sqlite"))
        #expect(!FileManager.default.fileExists(atPath: scratch + "/ready/.spotter-backup-unfinished"))
    }

    @Test func attachmentsAreCopiedAndOnlyKeptFiles() throws {
        let data = try Self.migratedDataDirectory()
        let output = Self.temporary("backup-files")
        defer {
            try? FileManager.default.removeItem(atPath: data)
            try? FileManager.default.removeItem(atPath: output)
        }
        let attachments = data + "/attachments"
        try FileManager.default.createDirectory(atPath: attachments + "/uploads", withIntermediateDirectories: true)
        let digest = String(repeating: "ab", count: 32)
        let big = Data((0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) })  // over the 1 MiB copy buffer
        FileManager.default.createFile(atPath: attachments + "/" + digest, contents: big)
        FileManager.default.createFile(atPath: attachments + "/" + digest + ".thumbnail", contents: Data([0xFF, 0xD8]))
        FileManager.default.createFile(atPath: attachments + "/" + String(repeating: "0", count: 64), contents: Data())
        for junk in [digest + ".partial-1-2", String(repeating: "AB", count: 32), "notes.txt", "uploads/x"] {
            FileManager.default.createFile(atPath: attachments + "/" + junk, contents: Data("junk".utf8))
        }
        FileManager.default.createFile(atPath: data + "/token-secret", contents: Data((String(repeating: "7f", count: 32) + "\n").utf8))
        // The database names the big file and one whose file is gone (purged after the snapshot, say).
        let gone = String(repeating: "cd", count: 32)
        let database = try DatabaseQueue(path: data + "/spotter.sqlite")
        try database.write { db in
            for id in [digest, gone] {
                try db.execute(sql: "INSERT INTO attachment (id, threadId, uploaderId, type, bytes, createdAt) VALUES (?, 't', 'u', 'image/png', 1, 0)",
                               arguments: [id])
            }
        }
        try database.close()

        let done = try Self.spotter(["admin", "backup", "--data-dir", data, "--output", output])
        #expect(done.status == 0, "\(done)")
        #expect(done.out.contains("3 attachment files") && done.out.contains("1 attachments purged since the snapshot"), "\(done.out)")
        let copied = try FileManager.default.contentsOfDirectory(atPath: output + "/attachments").sorted()
        #expect(copied == [String(repeating: "0", count: 64), digest, digest + ".thumbnail"].sorted())
        #expect(FileManager.default.contents(atPath: output + "/attachments/" + digest) == big)
        #expect(FileManager.default.contents(atPath: output + "/token-secret") == FileManager.default.contents(atPath: data + "/token-secret"))
        let mode = try FileManager.default.attributesOfItem(atPath: output + "/token-secret")[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }

    @Test func aBackupKilledMidwayLeavesNothingUnderTheOutputsName() throws {
        let data = try Self.migratedDataDirectory()
        let output = Self.temporary("backup-killed")
        defer {
            try? FileManager.default.removeItem(atPath: data)
            try? FileManager.default.removeItem(atPath: output)
            try? FileManager.default.removeItem(atPath: output + ".partial")
        }
        // One page per step, 50 ms apart: the copy takes seconds, and is killed once it has begun.
        let process = Process()
        process.executableURL = ServerProcess.binary
        process.arguments = ["admin", "backup", "--data-dir", data, "--output", output, "--pages-per-step", "1", "--step-pause", "50"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        try waitUntil(20) { FileManager.default.fileExists(atPath: output + ".partial/spotter.sqlite") }
        Thread.sleep(forTimeInterval: 0.3)
        kill(process.processIdentifier, SIGKILL)
        #expect(reap(process) == SIGKILL, "the backup ended before the kill: make it slower")
        #expect(!FileManager.default.fileExists(atPath: output), "a killed backup left a directory under the output's name")
        #expect(FileManager.default.fileExists(atPath: output + ".partial/.spotter-backup-unfinished"))

        // The next run removes the unfinished copy and finishes; a server starts on the result.
        let again = try Self.spotter(["admin", "backup", "--data-dir", data, "--output", output])
        #expect(again.status == 0, "\(again)")
        #expect(!FileManager.default.fileExists(atPath: output + ".partial"))
        let server = try ServerProcess(dataDirectory: output)
        #expect(server.stop() == 0)
    }
}
