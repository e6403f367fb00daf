import ArgumentParser
import Foundation
import LoadSupport
import SpotterCore
import SpotterPostgres
import SpotterPorts
import SpotterStore

/// The log's append path, timed without the server: the same records through the SQLite engine (`ChatLog`) and
/// the PostgreSQL engine (`PostgresChatLog`), as the messaging hub hands them over (one `append` per loop
/// iteration carrying that iteration's records, a few appends in flight). What it reports per engine and batch
/// size: rows/s, and CPU per row of this process (the engine's client side and writer thread) and, for
/// PostgreSQL, of the server's processes (its backends, WAL writer, checkpointer), read from /proc.
@main
struct LogBench: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "spotter-log-bench",
                                                    abstract: "Times appends to the log on SQLite and on PostgreSQL.")

    @Option(help: "Rows per case.") var rows = 100_000
    @Option(help: "Rows per append call (comma-separated cases).") var batches = "10,100"
    @Option(help: "Append calls in flight.") var inFlight = 4
    @Option(help: "Threads the rows are spread over.") var threads = 5_000
    @Option(help: "A directory for the SQLite database (fresh per case).") var sqliteDirectory: String?
    @Option(help: "A PostgreSQL database URL; without it only SQLite runs.") var postgres: String?
    @Option(help: "The PostgreSQL data directory (its postmaster.pid gives the server's processes for CPU).") var pgData: String?

    func run() throws {
        let sizes = batches.split(separator: ",").compactMap { Int($0) }
        print("engine      batch   rows/s   client µs/row   server µs/row   total µs/row")
        for batch in sizes {
            let directory = (sqliteDirectory ?? NSTemporaryDirectory()) + "/log-bench-\(UUID().uuidString.prefix(8))"
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let store = try Store.open(directory: directory)
            let writer = StoreWriter(store: store)
            let sqlite = ChatLog(store: store, writer: writer)
            report("SQLite", batch, try measure(sqlite, batch: batch), server: nil)
            writer.stop()
            if let postgres {
                let store = try PostgresStore(url: postgres)
                let log = PostgresChatLog(store: store)
                let serverBefore = serverCPU()
                let result = try measure(log, batch: batch)
                let serverAfter = serverCPU()
                report("PostgreSQL", batch, result, server: serverBefore.flatMap { before in serverAfter.map { $0 - before } })
                store.close()
            }
        }
    }

    struct Result { let seconds: Double; let cpu: Double }

    func measure(_ log: any ChatLogEngine, batch: Int) throws -> Result {
        var seqs = [Int64](repeating: 0, count: threads + 1)
        // A per-run offset so that several runs on one PostgreSQL database never reuse a (thread, seq).
        let base = Int64(Date().timeIntervalSince1970) * 1_000
        let body = String(repeating: "x", count: 120)
        let slots = DispatchSemaphore(value: inFlight)
        let group = DispatchGroup()
        let failures = LockedCounter()
        let start = monotonicNanos()
        let cpuStart = ownCPUSeconds()
        var written = 0
        var thread = 0
        while written < rows {
            var records: [ChatRecord] = []
            records.reserveCapacity(batch)
            for _ in 0..<min(batch, rows - written) {
                thread = thread % threads + 1
                seqs[thread] += 1
                records.append(ChatRecord(threadNo: Int64(thread), side: .client, seq: base + seqs[thread], at: 1_800_000_000,
                                          .message(MessageRecord(clientMessageID: "m-\(thread)-\(seqs[thread])", body: body))))
            }
            written += records.count
            slots.wait()
            group.enter()
            log.append(records) { result in
                if case .failure = result { failures.add() }
                slots.signal()
                group.leave()
            }
        }
        group.wait()
        guard failures.value == 0 else { throw ValidationError("\(failures.value) appends failed") }
        return Result(seconds: seconds(start, monotonicNanos()), cpu: ownCPUSeconds() - cpuStart)
    }

    func report(_ engine: String, _ batch: Int, _ result: Result, server: Double?) {
        let perRow = { (seconds: Double) in fixed(seconds * 1e6 / Double(rows), 1) }
        let total = result.cpu + (server ?? 0)
        print("\(engine.padding(toLength: 10, withPad: " ", startingAt: 0))  \(String(batch).leftPad(5))  "
              + "\(String(Int(Double(rows) / result.seconds)).leftPad(7))  \(perRow(result.cpu).leftPad(14))  "
              + "\((server.map(perRow) ?? "-").leftPad(14))  \(perRow(total).leftPad(13))")
    }

    /// CPU seconds of the PostgreSQL server: the postmaster and every process it started.
    func serverCPU() -> Double? {
        guard let pgData, let text = readSmallFile(pgData + "/postmaster.pid"),
              let line = text.split(separator: "\n").first, let postmaster = Int32(line) else { return nil }
        var total = ProcessProbe(pid: postmaster).cpuSeconds() ?? 0
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = Int32(entry), let stat = readSmallFile("/proc/\(pid)/stat"), let paren = stat.lastIndex(of: ")") else { continue }
            let fields = stat[stat.index(after: paren)...].split(separator: " ")
            if fields.count > 1, Int32(fields[1]) == postmaster { total += ProcessProbe(pid: pid).cpuSeconds() ?? 0 }
        }
        return total
    }
}

final class LockedCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func add() { lock.lock(); count += 1; lock.unlock() }
    var value: Int { lock.lock(); defer { lock.unlock() }; return count }
}

extension String {
    func leftPad(_ width: Int) -> String { count >= width ? self : String(repeating: " ", count: width - count) + self }
}
