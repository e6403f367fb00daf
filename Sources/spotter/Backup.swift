import ArgumentParser
import SpotterStore

#if canImport(Glibc)
import Glibc
#endif

/// `spotter admin backup`: a data directory a server can start on, copied from a running server's (see
/// `StoreBackup`). Exit codes: 0 done; 64 the output is inside the data directory (or a bad option); 65 the copy
/// failed SQLite's check; 66 no data directory or no database in it; 73 the output exists (or something not ours
/// is at `<output>.partial`); 74 a file operation failed (a full disk).
struct Backup: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Copy a running server's SQLite database, attachments and token secret into a new data directory.",
        discussion: """
            The database is copied inside one read transaction (SQLite's online backup API): the copy holds every \
            record committed before the backup started and none after, and the server keeps writing meanwhile. \
            Everything is written into OUTPUT.partial and renamed to OUTPUT at the end, so OUTPUT exists only \
            when the backup is whole. Restore: stop the server, put OUTPUT in place of the data directory, start \
            it (or start a server with --data-dir OUTPUT). Exit codes: 0 done, 64 output inside the data \
            directory, 65 the copy failed SQLite's check, 66 no data directory or database, 73 the output \
            exists, 74 a file operation failed.
            """
    )

    @Option(name: .customLong("data-dir"), help: ArgumentHelp(
        "The server's data directory. [env: SPOTTER_DATA_DIR] (default: data)", valueName: "path"))
    var dataDirectory: String?

    @Option(help: ArgumentHelp("The new directory to create; must not exist (or be an empty directory).", valueName: "path"))
    var output: String

    @Option(help: ArgumentHelp("SQLite pages (4 KiB) copied per step.", valueName: "pages"))
    var pagesPerStep: Int = 1024

    @Option(help: ArgumentHelp("Milliseconds to pause between steps, leaving the disk to the server.",
                               valueName: "ms"))
    var stepPause: Int = 1

    func validate() throws {
        guard (1...1_000_000).contains(pagesPerStep) else { throw ValidationError("--pages-per-step must be 1...1000000") }
        guard (0...10_000).contains(stepPause) else { throw ValidationError("--step-pause must be 0...10000 ms") }
    }

    func run() throws {
        let data = dataDirectory ?? env("SPOTTER_DATA_DIR") ?? "data"
        do {
            let report = try StoreBackup.run(dataDirectory: data, output: output, pagesPerStep: Int32(pagesPerStep),
                                             pauseMicroseconds: UInt32(stepPause) * 1000)
            print("""
                backed up \(data) to \(output): database \(report.databaseBytes) bytes (\(report.pages) pages, log up to \
                position \(report.lastLogPosition)), \(report.files) attachment files (\(report.fileBytes) bytes)\
                \(report.missingFiles > 0 ? ", \(report.missingFiles) attachments purged since the snapshot" : ""); \
                snapshot held \(milliseconds(report.snapshotSeconds)) ms, \(milliseconds(report.seconds)) ms in all
                """)
        } catch let error as BackupError {
            let text = "spotter admin backup: \(error.description)\n"
            _ = text.withCString { write(STDERR_FILENO, $0, strlen($0)) }
            throw ExitCode(error.exitCode)
        }
    }

    private func milliseconds(_ seconds: Double) -> Int { Int((seconds * 1000).rounded()) }
}
