import Foundation
import GRDB

#if canImport(Glibc)
import Glibc
#endif

/// Why a backup was refused or failed; each has an exit code after sysexits.h, so a script can tell a mistake in
/// its arguments from a full disk.
public enum BackupError: Error, Equatable, CustomStringConvertible {
    /// The data directory does not exist or is not a directory.
    case noDataDirectory(String)
    /// The data directory has no `spotter.sqlite` (a server on PostgreSQL, or the wrong path).
    case noDatabase(String)
    /// The output exists and is not an empty directory: a backup never writes over anything.
    case outputExists(String)
    /// The output would be inside the data directory.
    case outputInsideData(String)
    /// `<output>.partial` exists and is not a backup this command left unfinished.
    case partialInTheWay(String)
    /// The copy failed SQLite's check, or SQLite refused the copy.
    case copyFailed(String)
    /// A file operation failed (`errno`).
    case io(String, Int32)

    public var exitCode: Int32 {
        switch self {
        case .noDataDirectory, .noDatabase: 66  // EX_NOINPUT
        case .outputExists, .partialInTheWay: 73  // EX_CANTCREAT
        case .outputInsideData: 64  // EX_USAGE
        case .copyFailed: 65  // EX_DATAERR
        case .io: 74  // EX_IOERR
        }
    }

    public var description: String {
        switch self {
        case .noDataDirectory(let path): "no data directory at \(path)"
        case .noDatabase(let path):
            "no SQLite database at \(path) (a server with --store postgres://… keeps its data in PostgreSQL: back it up with pg_dump, see deploy/README.md)"
        case .outputExists(let path): "the output \(path) exists and is not an empty directory; a backup never writes over anything"
        case .outputInsideData(let path): "the output \(path) is inside the data directory; put backups elsewhere"
        case .partialInTheWay(let path): "\(path) exists and is not an unfinished backup of this command; move it away"
        case .copyFailed(let why): "the copy of the database is not usable: \(why)"
        case .io(let what, let code): "\(what): \(String(cString: strerror(code)))"
        }
    }
}

/// What a backup copied.
public struct BackupReport: Sendable {
    /// The copy's size and SQLite pages.
    public var databaseBytes: Int64 = 0
    public var pages: Int = 0
    /// The newest log position in the copy: every record up to it is there, none after it.
    public var lastLogPosition: Int64 = 0
    /// Attachment files (originals and thumbnails) copied, and their bytes.
    public var files = 0
    public var fileBytes: Int64 = 0
    /// Attachments the copy names whose file was gone from the data directory when it was copied (purged since).
    public var missingFiles = 0
    /// How long the snapshot (the read transaction on the live database) was held, and the whole backup.
    public var snapshotSeconds = 0.0
    public var seconds = 0.0
}

/// `spotter admin backup`: a copy of a data directory a server can start on, taken while the server runs.
///
/// The database is copied with SQLite's online backup API from inside one read transaction on the live file, so
/// the copy is the database as of that transaction's start (a consistent snapshot: every record committed before
/// it, none after), whatever the server commits meanwhile. In WAL mode a reader never blocks the writer; the
/// copy goes `pagesPerStep` pages at a time with `pause` between steps to leave the disk to the server. Only the
/// checkpoints cannot go past the snapshot while it is held, so the WAL grows by what is written meanwhile.
///
/// Then the attachments: every original and thumbnail in `attachments/`, copied after the database (a file is
/// renamed into place before its row commits, so every file the copy names was there already); and the token
/// secret, so tokens signed before the backup stay valid on a server started on it.
///
/// Everything goes into `<output>.partial` (marked unfinished), is fsynced, and is renamed to `<output>` last: a
/// backup killed midway leaves only `<output>.partial`, which the next run removes and starts again.
public enum StoreBackup {
    public static let databaseName = "spotter.sqlite"
    static let attachmentsName = "attachments"
    static let tokenSecretName = "token-secret"
    static let unfinishedMarker = ".spotter-backup-unfinished"
    /// Pages (4 KiB) copied between two syncs of the copy: 4 MiB.
    static let syncEveryPages = 1024

    public static func run(dataDirectory: String, output: String, pagesPerStep: Int32 = 1024,
                           pauseMicroseconds: UInt32 = 1000, clock: () -> Double = StoreBackup.monotonicSeconds) throws -> BackupReport {
        let started = clock()
        let data = try existingDirectory(dataDirectory)
        guard isRegularFile(data + "/" + databaseName) else { throw BackupError.noDatabase(data + "/" + databaseName) }
        let target = try checkedOutput(output, data: data)
        let partial = target + ".partial"
        try preparePartial(partial)

        var report = BackupReport()
        let named = try copyDatabase(from: data + "/" + databaseName, to: partial + "/" + databaseName,
                                     pagesPerStep: max(1, pagesPerStep), pauseMicroseconds: pauseMicroseconds,
                                     report: &report, clock: clock)
        try BackupFiles.copy(data + "/" + tokenSecretName, to: partial + "/" + tokenSecretName, mode: 0o600, optional: true)
        let attachments = partial + "/" + attachmentsName
        try BackupFiles.makeDirectory(attachments, mode: 0o750)
        (report.files, report.fileBytes) = try BackupFiles.copyAttachments(from: data + "/" + attachmentsName, to: attachments)
        report.missingFiles = named.filter { access(attachments + "/" + $0, F_OK) != 0 }.count
        try BackupFiles.syncDirectory(attachments)

        // Finished: unmark, make the directory durable, then give it its name.
        guard unlink(partial + "/" + unfinishedMarker) == 0 else { throw BackupError.io("unlink \(partial)/\(unfinishedMarker)", errno) }
        try BackupFiles.syncDirectory(partial)
        guard rename(partial, target) == 0 else { throw BackupError.io("rename \(partial) to \(target)", errno) }
        try BackupFiles.syncDirectory(parent(of: target))
        report.seconds = clock() - started
        return report
    }

    public static func monotonicSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    /// Copies the live database within one read transaction; returns the attachment ids the copy names.
    static func copyDatabase(from source: String, to destination: String, pagesPerStep: Int32, pauseMicroseconds: UInt32,
                             report: inout BackupReport, clock: () -> Double) throws -> [String] {
        var configuration = Configuration()
        configuration.readonly = true  // the backup never writes to the live database, and migrates nothing
        configuration.busyMode = .timeout(5)
        configuration.label = "spotter.backup.source"
        var named: [String] = []
        do {
            let live = try DatabaseQueue(path: source, configuration: configuration)
            let copy = try DatabaseQueue(path: destination)
            // No journal and no syncs of SQLite's own: the copy is new, whole only once renamed (`run`), and synced
            // here as it grows, a few MiB at a time, so the disk never has the whole copy to flush at once (measured:
            // one flush at the end held a concurrent writer's commit for ~100 ms per 500 MB).
            try copy.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA journal_mode = OFF")
                try db.execute(sql: "PRAGMA synchronous = OFF")
            }
            let syncing = open(destination, O_RDONLY | O_CLOEXEC)
            defer { if syncing >= 0 { close(syncing) } }
            try live.inDatabase { from in
                try from.execute(sql: "BEGIN DEFERRED")
                let opened = clock()
                // The first read fixes the snapshot; the backup's steps all read inside it.
                report.lastLogPosition = try Int64.fetchOne(from, sql: "SELECT COALESCE(MAX(pos), 0) FROM log") ?? 0
                var pages = 0
                var syncedAt = 0
                try copy.writeWithoutTransaction { to in
                    try from.backup(to: to, pagesPerStep: pagesPerStep) { progress in
                        pages = progress.totalPageCount
                        let copied = progress.totalPageCount - progress.remainingPageCount
                        if copied - syncedAt >= syncEveryPages && syncing >= 0 {
                            fdatasync(syncing)
                            syncedAt = copied
                        }
                        if !progress.isCompleted && pauseMicroseconds > 0 { usleep(pauseMicroseconds) }
                    }
                }
                report.pages = pages
                try from.execute(sql: "COMMIT")
                report.snapshotSeconds = clock() - opened
            }
            try live.close()
            try copy.inDatabase { db in
                let check = try String.fetchAll(db, sql: "PRAGMA quick_check")
                guard check == ["ok"] else { throw BackupError.copyFailed(check.prefix(5).joined(separator: "; ")) }
                named = try String.fetchAll(db, sql: "SELECT DISTINCT id FROM attachment")
            }
            try copy.close()
        } catch let error as BackupError {
            throw error
        } catch let error as DatabaseError {
            throw BackupError.copyFailed(error.description)
        } catch {
            throw BackupError.copyFailed("\(error)")
        }
        try BackupFiles.syncFile(destination)
        report.databaseBytes = BackupFiles.size(destination)
        return named
    }

    /// The data directory, resolved; it must exist.
    static func existingDirectory(_ path: String) throws -> String {
        guard let resolved = realpath(path, nil) else { throw BackupError.noDataDirectory(path) }
        defer { free(resolved) }
        let text = String(cString: resolved)
        guard isDirectory(text) else { throw BackupError.noDataDirectory(path) }
        return text
    }

    /// The output, with its parent resolved: absent, or an empty directory; not in the data directory.
    static func checkedOutput(_ output: String, data: String) throws -> String {
        var trimmed = output
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed.removeLast() }
        let name = String(trimmed.split(separator: "/", omittingEmptySubsequences: false).last ?? "")
        guard !name.isEmpty, name != ".", name != ".." else { throw BackupError.outputExists(output) }
        let parentPath = trimmed.contains("/") ? parent(of: trimmed) : "."
        guard let resolved = realpath(parentPath.isEmpty ? "/" : parentPath, nil) else {
            throw BackupError.io("the output's parent \(parentPath)", errno)
        }
        defer { free(resolved) }
        let parentText = String(cString: resolved)
        let target = (parentText == "/" ? "" : parentText) + "/" + name
        if target == data || target.hasPrefix(data + "/") { throw BackupError.outputInsideData(output) }
        var info = stat()
        if lstat(target, &info) == 0 {
            guard (info.st_mode & S_IFMT) == S_IFDIR, BackupFiles.names(in: target)?.isEmpty == true else {
                throw BackupError.outputExists(output)
            }
        }
        return target
    }

    /// Makes `<output>.partial` anew, marked unfinished; an unfinished one from a killed run is removed first.
    static func preparePartial(_ partial: String) throws {
        var info = stat()
        if lstat(partial, &info) == 0 {
            guard (info.st_mode & S_IFMT) == S_IFDIR, access(partial + "/" + unfinishedMarker, F_OK) == 0 else {
                throw BackupError.partialInTheWay(partial)
            }
            do { try FileManager.default.removeItem(atPath: partial) } catch {
                throw BackupError.io("removing the unfinished \(partial)", EIO)
            }
        }
        try BackupFiles.makeDirectory(partial, mode: 0o700)
        let fd = open(partial + "/" + unfinishedMarker, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard fd >= 0 else { throw BackupError.io("creating \(partial)/\(unfinishedMarker)", errno) }
        close(fd)
        try BackupFiles.syncDirectory(partial)
    }

    static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }

    static func isRegularFile(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
    }
}
