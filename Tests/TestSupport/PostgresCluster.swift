import Foundation
import SpotterPostgres
import SpotterPorts

/// A throwaway PostgreSQL cluster for the cluster-mode tests: `initdb` into a temp directory, `pg_ctl start` on a
/// free loopback port, one fresh database per caller, stopped (`-m immediate`) when the test process exits. Needs
/// no root and touches no system cluster; when the tests run as root (CI), the server runs as the `postgres`
/// user the Debian package creates (PostgreSQL refuses to run as root).
///
/// Without the server binaries it throws with what to install: the cluster tests fail loudly, never skip.
public final class PostgresCluster: @unchecked Sendable {
    public let directory: String
    public let port: Int
    private let bin: String
    private let lock = NSLock()
    private var databases = 0

    /// The one cluster of this test process, started on first use.
    public static func shared() throws -> PostgresCluster {
        try sharedResult.get()
    }

    private static let sharedResult: Result<PostgresCluster, any Error> = Result(catching: {
        let cluster = try PostgresCluster()
        PostgresCluster.started = cluster
        atexit { PostgresCluster.started?.stop() }
        return cluster
    })
    nonisolated(unsafe) private static var started: PostgresCluster?

    /// Where Debian puts the server's programs (newest major version first); `SPOTTER_PG_BIN` overrides.
    static func findBin() -> String? {
        if let path = ProcessInfo.processInfo.environment["SPOTTER_PG_BIN"] { return path }
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? [])
            .compactMap(Int.init).sorted(by: >)
        return versions.map { "\(root)/\($0)/bin" }.first { FileManager.default.isExecutableFile(atPath: $0 + "/initdb") }
    }

    /// A cluster of its own (for tests that stop and start the server); `stop()` it at the end.
    public static func start() throws -> PostgresCluster { try PostgresCluster() }

    private init() throws {
        guard let bin = PostgresCluster.findBin() else {
            throw BlockingSocket.Failure(description: """
                PostgreSQL server programs not found (initdb, pg_ctl under /usr/lib/postgresql/*/bin): install Debian's \
                postgresql package (deploy/install-deps.sh --test does) — the cluster tests need a real server
                """)
        }
        self.bin = bin
        directory = NSTemporaryDirectory() + "spotter-pg-" + UUID().uuidString.prefix(8)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        if getuid() == 0 {
            _ = try PostgresCluster.run("/bin/chown", ["postgres:postgres", directory])
        }
        port = try ServerProcess.freePort()
        try runAsServerUser(bin + "/initdb", ["-D", directory + "/data", "-U", "spotter", "-A", "trust", "-E", "UTF8",
                                              "--locale=C", "--no-sync"])
        // fsync off: these tests kill Spotter processes, never PostgreSQL or the machine, so the OS page cache
        // is as durable as the disk for them.
        try runAsServerUser(bin + "/pg_ctl", ["-D", directory + "/data", "-l", directory + "/server.log", "-w", "-t", "30",
                                              "-o", "-p \(port) -k \(directory) -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200",
                                              "start"])
        // The test runner does not always run `atexit` handlers (seen here: a cluster left running after a
        // passing run), and a killed runner never does.
        let stopAs = getuid() == 0 ? "/usr/sbin/runuser -u postgres -- " : ""
        try whenRunnerExits(run: """
            \(stopAs)\(bin)/pg_ctl -D '\(directory)/data' -m immediate -w stop >/dev/null 2>&1
            rm -rf '\(directory)'
            """)
    }

    /// A new, empty database; its URL.
    public func makeDatabase() throws -> String {
        lock.lock()
        databases += 1
        let name = "spotter_test_\(databases)"
        lock.unlock()
        try psql("postgres", "CREATE DATABASE \(name)")
        return url(database: name)
    }

    public func url(database: String) -> String {
        "postgresql://spotter@127.0.0.1:\(port)/\(database)"
    }

    /// Runs SQL through psql (tests use it to break and repair things behind the engine's back).
    @discardableResult
    public func psql(_ database: String, _ sql: String) throws -> String {
        try PostgresCluster.run(bin + "/psql", ["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1",
                                                "-p", String(port), "-U", "spotter", "-d", database, "-c", sql])
    }

    /// Stops the server at once (as a crash would) or cleanly, and starts it again: for outage tests.
    public func stopServer(immediate: Bool = true) throws {
        try runAsServerUser(bin + "/pg_ctl", ["-D", directory + "/data", "-m", immediate ? "immediate" : "fast", "-w", "stop"])
    }

    public func startServer() throws {
        try runAsServerUser(bin + "/pg_ctl", ["-D", directory + "/data", "-l", directory + "/server.log", "-w", "-t", "30",
                                              "-o", "-p \(port) -k \(directory) -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200",
                                              "start"])
    }

    /// Stops the server and removes its directory.
    public func stop() {
        _ = try? runAsServerUser(bin + "/pg_ctl", ["-D", directory + "/data", "-m", "immediate", "-w", "stop"])
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func runAsServerUser(_ program: String, _ arguments: [String]) throws {
        if getuid() == 0 {
            _ = try PostgresCluster.run("/usr/sbin/runuser", ["-u", "postgres", "--", program] + arguments)
        } else {
            _ = try PostgresCluster.run(program, arguments)
        }
    }

    /// Runs a program to its end; its output, or an error with what it printed. posix_spawn and waitpid rather
    /// than Foundation's Process: under `runuser`, Process sometimes never saw its child end (seen here: a
    /// defunct runuser and waitUntilExit waiting for ever).
    public static func run(_ program: String, _ arguments: [String]) throws -> String {
        let outputPath = NSTemporaryDirectory() + "spotter-run-" + UUID().uuidString
        defer { unlink(outputPath) }
        var actions: posix_spawn_file_actions_t = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv: [UnsafeMutablePointer<CChar>?] = ([program] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, program, &actions, nil, argv, environ)
        guard spawned == 0 else {
            throw BlockingSocket.Failure(description: "cannot start \(program): \(String(cString: strerror(spawned)))")
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        // Exited normally with 0 (WIFEXITED and WEXITSTATUS, spelled out: Glibc's macros do not reach Swift).
        guard status & 0x7f == 0 && (status >> 8) & 0xff == 0 else {
            throw BlockingSocket.Failure(description: "\(program) \(arguments.joined(separator: " ")) failed (status \(status)): \(text)")
        }
        return text
    }
}

extension PostgresCluster {
    /// A fresh database with users and linked pairs made through the accounts' own SQL: for each pair, the coach
    /// and the client (full names are their ids upper-cased) and the link with its thread (`threadID`), whose
    /// `link` record is in the log. Threads are numbered 1… and their link records take positions 1…, in order.
    public func databaseWithPairs(_ pairs: [(coach: String, client: String, threadID: String)]) throws -> String {
        let url = try makeDatabase()
        let store = try PostgresStore(url: url)
        defer { store.close() }
        let accounts = AccountStore(engine: PostgresAccounts(store: store))
        var made: Set<String> = []
        for pair in pairs {
            for (id, role) in [(pair.coach, "coach"), (pair.client, "client")] where made.insert(id).inserted {
                try accounts.createUser(id: id, role: role, fullName: id.uppercased(), email: "\(id)@example.com", phone: nil,
                                        passwordHash: nil, now: 0)
            }
        }
        let log = PostgresChatLog(store: store)
        for (index, pair) in pairs.enumerated() {
            let done = DispatchSemaphore(value: 0)
            let outcome = LockedResult()
            log.createLink(clientID: pair.client, coachID: pair.coach, threadID: pair.threadID, now: Int64(10 + index)) { result in
                outcome.set(result.map { _ in () })
                done.signal()
            }
            done.wait()
            try outcome.get()
        }
        return url
    }
}

private final class LockedResult: @unchecked Sendable {
    private let lock = NSLock()
    private var result: Result<Void, any Error> = .success(())
    func set(_ value: Result<Void, any Error>) { lock.lock(); result = value; lock.unlock() }
    func get() throws { lock.lock(); defer { lock.unlock() }; try result.get() }
}
