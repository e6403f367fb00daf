import Foundation
import Logging
import SpotterPostgres
import SpotterServer
import GRDB
import SpotterPorts
import SpotterStore

/// Runs a real `Server` on its own thread on a free loopback port; with `SPOTTER_TEST_CLUSTER=N`, N of them as
/// one cluster (`TestCluster`) behind a balanced port.
public final class TestServer: @unchecked Sendable {
    /// The server (a cluster's first node).
    public var server: Server { nodes[0] }
    /// Every node: one unless `SPOTTER_TEST_CLUSTER` is set.
    public let nodes: [Server]
    /// Where tests connect: the server's port, or a cluster's balanced port (each connection to the next node).
    public var port: Int { balancedPort ?? server.port }
    /// Each node's own port.
    public var ports: [Int] { nodes.map(\.port) }
    private let balancedPort: Int?
    /// A cluster's `nats-server` (`SPOTTER_TEST_CLUSTER`), stopped with it.
    private var clusterBroker: NATSServer?
    private let finished = DispatchSemaphore(value: 0)

    /// Sign-in codes the server sent, newest last.
    public let otp = RecordingOTPSender()
    /// The SQLite database; nil when the server keeps everything in PostgreSQL (`SPOTTER_TEST_STORE=postgres`).
    public let store: Store!
    /// The accounts, on whichever engine the server uses (behind the server's back: for setting up admins).
    public let accounts: AccountStore
    /// The PostgreSQL database's name, in PostgreSQL mode.
    private let postgresDatabase: String?

    /// Starts a server with `configure` applied to a test configuration
    /// (port 0, echo on, cheap password hashing, a fixed token secret) on an
    /// in-memory database, or on `dataDirectory` when given.
    /// With `logOTPCodes`, codes go to the server's log sender (as in a
    /// deployment without SMS) instead of `otp`; with `otpSender`, to that sender.
    /// With `postgresURL`, the server keeps everything in that database whatever `SPOTTER_TEST_STORE` says.
    public init(dataDirectory: String? = nil, logOTPCodes: Bool = false, otpSender: (any OTPSender)? = nil,
                postgresURL: String? = nil, _ configure: (inout ServerConfig) -> Void = { _ in }) throws {
        var config = ServerConfig()
        config.port = 0
        config.echoEnabled = true
        config.passwordHashLogN = 10
        config.tokenSecret = Array("spotter-tests-secret-0123456789abcdef".utf8)
        config.loadTestProvisioning = true
        if let dataDirectory { config.dataDirectory = dataDirectory }  // files (attachments) beside the database
        config.loops = TestServer.loops
        configure(&config)
        var logger = Logger(label: "spotter.test")
        logger.logLevel = .warning
        let storage: any ServerStorage
        var cluster: [ClusterSetup?] = [nil]
        var others: [any ServerStorage] = []  // a cluster's nodes after the first
        if TestCluster.isOn {
            // Nodes of one cluster: one database, its files in one directory (as processes on one machine share
            // the data directory), each node its own connections to PostgreSQL and NATS.
            let url = try postgresURL ?? TestServer.postgresDatabase(for: dataDirectory)
            let files = (dataDirectory ?? NSTemporaryDirectory() + "spotter-cluster-files-\(UUID().uuidString)") + "/attachments"
            try FileManager.default.createDirectory(atPath: files, withIntermediateDirectories: true)
            let made = try (0..<TestCluster.size).map { _ in
                try PostgresStorage(store: PostgresStore(url: url), filesDirectory: files, version: Server.version, startedAt: 0)
            }
            let broker = try NATSServer()  // this cluster's own (`TestCluster.nats(for:)` says why)
            clusterBroker = broker
            cluster = try made.map { try TestCluster.setup(storage: $0, url: url, broker: broker, logger: logger) }
            storage = made[0]
            others = Array(made.dropFirst())
            store = nil
            postgresDatabase = String(url.split(separator: "/").last!)
        } else if TestServer.onPostgres || postgresURL != nil {
            // One database per data directory, so that a restart on the same directory finds what it left.
            let url = try postgresURL ?? TestServer.postgresDatabase(for: dataDirectory)
            let files = dataDirectory.map { $0 + "/attachments" }
            if let dataDirectory { try StoreDirectory.make(dataDirectory) }
            storage = try PostgresStorage(store: PostgresStore(url: url), filesDirectory: files, version: Server.version, startedAt: 0)
            store = nil
            postgresDatabase = String(url.split(separator: "/").last!)
        } else {
            let opened = try dataDirectory.map { try Store.open(directory: $0) } ?? Store.inMemory()
            let store = try opened.recordingStart(version: Server.version, at: 0)
            self.store = store
            storage = SQLiteStorage(store: store, filesDirectory: config.dataDirectory + "/attachments")
            postgresDatabase = nil
        }
        accounts = AccountStore(engine: storage.accounts)
        // Codes confirming a new email address are recorded in `otp` too, under the address.
        let recorder = otp
        nodes = ([storage] + others).enumerated().map { index, storage in
            Server(config: config, storage: storage, logger: logger, otpSender: logOTPCodes ? nil : otpSender ?? recorder,
                   emailSender: logOTPCodes ? nil : recorder, cluster: cluster[index])
        }
        for server in nodes {
            try server.start()
            let finished = self.finished
            Thread.detachNewThread {
                server.run()
                finished.signal()
            }
        }
        let nodes = self.nodes, database = storage.accounts
        balancedPort = TestCluster.isOn ? try TestCluster.balance(nodes.map(\.port)) { TestCluster.settle(nodes, database: database) } : nil
    }

    /// Runs one SQL statement on the server's database behind its back (tests that break and repair tables).
    public func execute(_ sql: String) throws {
        if let postgresDatabase {
            try PostgresCluster.shared().psql(postgresDatabase, sql)
        } else {
            try store.writer.write { db in try db.execute(sql: sql) }
        }
    }

    /// PostgreSQL mode: the tables with a row whose text holds `marker` anywhere (every column, as the row's text);
    /// empty on SQLite (the caller searches the data directory's files instead).
    public func postgresTablesHolding(_ marker: String) throws -> [String] {
        guard let postgresDatabase else { return [] }
        let cluster = try PostgresCluster.shared()
        let tables = try cluster.psql(postgresDatabase, "SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
            .split(separator: "\n").map(String.init).filter { !$0.isEmpty }
        let escaped = marker.replacingOccurrences(of: "'", with: "''")
        return try tables.filter { table in
            let count = try cluster.psql(postgresDatabase, "SELECT count(*) FROM \"\(table)\" t WHERE t::text LIKE '%\(escaped)%'")
            return count.trimmingCharacters(in: .whitespacesAndNewlines) != "0"
        }
    }

    /// Whether test servers keep everything in PostgreSQL (`SPOTTER_TEST_STORE=postgres`: the suite's PostgreSQL
    /// pass, which runs the server's suites again on the cluster store).
    /// Event loops of test servers (`SPOTTER_TEST_LOOPS=2`: app sockets on a socket loop), 1 unless set.
    public static var loops: Int { ProcessInfo.processInfo.environment["SPOTTER_TEST_LOOPS"].flatMap { Int($0) } ?? 1 }

    public static var onPostgres: Bool {
        ProcessInfo.processInfo.environment["SPOTTER_TEST_STORE"] == "postgres" || TestCluster.isOn  // a cluster's store
    }

    private static let databases = NSLock()
    nonisolated(unsafe) private static var databaseByDirectory: [String: String] = [:]

    /// The PostgreSQL database of a data directory (a new one for none), made on first use.
    public static func postgresDatabase(for directory: String?) throws -> String {
        let cluster = try PostgresCluster.shared()
        guard let directory else { return try cluster.makeDatabase() }
        databases.lock()
        defer { databases.unlock() }
        if let known = databaseByDirectory[directory] { return known }
        let url = try cluster.makeDatabase()
        databaseByDirectory[directory] = url
        return url
    }

    /// Asks for a graceful shutdown and waits until `run()` has returned.
    /// Returns false if it did not within `timeoutSeconds`.
    @discardableResult
    public func stop(timeoutSeconds: Double = 15) -> Bool {
        if let balancedPort { TestCluster.release(balancedPort) }
        for server in nodes { server.requestShutdown() }
        let stopped = waitUntilStopped(timeoutSeconds: timeoutSeconds)
        clusterBroker?.stop()
        return stopped
    }

    /// Waits for `run()` to return by itself (e.g. after a signal), on every node.
    public func waitUntilStopped(timeoutSeconds: Double) -> Bool {
        let deadline = DispatchTime.now() + timeoutSeconds
        return nodes.allSatisfy { _ in finished.wait(timeout: deadline) == .success }
    }

    /// GET /metrics on a fresh connection, as lines (a cluster's first node's).
    public func metricsText() throws -> String {
        let client = try HTTPTestClient(port: server.port)
        return try client.request("GET", "/metrics").bodyText
    }

    /// The value of one metric line (exact name with labels), or nil; a cluster's is the sum over its nodes (as a
    /// dashboard adds up the processes' counters).
    public func metric(_ name: String) throws -> Double? {
        var total: Double?
        for port in ports {
            let text = try HTTPTestClient(port: port).request("GET", "/metrics").bodyText
            for line in text.split(separator: "\n") where line.hasPrefix(name + " ") {
                total = (total ?? 0) + (Double(line.split(separator: " ").last!) ?? .nan)
                break
            }
        }
        return total
    }
}

/// Captures one-time codes instead of sending them.
public final class RecordingOTPSender: OTPSender, @unchecked Sendable {
    private let lock = NSLock()
    private var sent: [(phone: String, code: String)] = []

    public func send(code: String, to phone: String) throws {
        lock.lock()
        defer { lock.unlock() }
        sent.append((phone, code))
    }

    /// The last code sent to `phone` (or email address).
    public func lastCode(for phone: String) -> String? {
        lock.lock()
        defer { lock.unlock() }
        return sent.last { $0.phone == phone }?.code
    }

    public var count: Int {
        lock.lock()
        defer { lock.unlock() }
        return sent.count
    }
}
