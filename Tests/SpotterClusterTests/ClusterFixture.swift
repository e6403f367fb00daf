import Foundation
import TestSupport

/// A cluster on loopback: a database of the suite's throwaway PostgreSQL, a `nats-server` of its own, and real
/// `spotter serve` processes on both (`--store`, `--broker`), sharing a token secret and a data directory. Each
/// process logs to `spotter-N.log` in the directory, which is kept when a test fails (`keep`).
final class ClusterFixture {
    let postgres: PostgresCluster
    let nats: NATSServer
    let store: String
    let directory: String
    let secret = (0..<4).map { _ in UUID().uuidString.replacingOccurrences(of: "-", with: "") }.joined()
    private(set) var processes: [ServerProcess?] = []
    /// Each process's log file (the newest start's).
    private(set) var logs: [Int: String] = [:]
    private let ownsPostgres: Bool
    var keep = ProcessInfo.processInfo.environment["SPOTTER_KEEP_CLUSTER"] != nil

    /// Extra `serve` options of every process.
    let options: [String]

    /// Whether `stop` stops `nats` (not when it is another cluster's).
    private let ownsNATS: Bool

    /// - Parameter ownPostgres: a PostgreSQL of the test's own (one it may stop) instead of the suite's shared one.
    /// - Parameter sharing: another cluster's `nats-server`, which this one uses too (two deployments wrongly
    ///   pointed at one server); it stops with its owner.
    init(processes count: Int, options: [String] = [], ownPostgres: Bool = false, sharing: NATSServer? = nil) throws {
        self.options = options
        postgres = ownPostgres ? try PostgresCluster.start() : try PostgresCluster.shared()
        ownsPostgres = ownPostgres
        nats = try sharing ?? NATSServer()
        ownsNATS = sharing == nil
        store = try postgres.makeDatabase()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("spotter-cluster-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        for index in 0..<count { processes.append(try start(index)) }
    }

    /// Starts (or starts again) process `index`, with `environment` added to its own (a fail point).
    @discardableResult
    func start(_ index: Int, environment: [String: String] = [:]) throws -> ServerProcess {
        let log = directory + "/spotter-\(index)-\(processes.count).log"
        let process = try ServerProcess(dataDirectory: directory, arguments: ["--broker", nats.url] + options, store: store,
                                        environment: environment.merging(["SPOTTER_TOKEN_SECRET": secret]) { $1 },
                                        logFile: log)
        if index < processes.count { processes[index] = process } else { processes.append(process) }
        logs[index] = log
        return process
    }

    func port(_ index: Int) -> Int { processes[index]!.port }

    /// Process `index`'s PID (to signal it without waiting), nil if it is not running.
    func pid(_ index: Int) -> Int32? { processes[index]?.process.processIdentifier }

    /// Process `index`'s log file (the newest start's).
    func logFile(_ index: Int) -> String? { logs[index] }

    /// The live processes whose log says `text`.
    func processesThatLogged(_ text: String) -> [Int] {
        logs.keys.sorted().filter { index in
            processes[index] != nil && ((try? String(contentsOfFile: logs[index]!, encoding: .utf8))?.contains(text) ?? false)
        }
    }

    /// A coach signed up on process `coachOn` and a client on `clientOn` who picks them there; waits until every
    /// process has followed the link.
    func linkedPair(_ tag: String, coachOn: Int = 0, clientOn: Int = 1) throws
        -> (coach: (access: String, refresh: String, id: String), client: (access: String, refresh: String, id: String), thread: String) {
        let coach = try APIClient(port: port(coachOn)).signUp(role: "coach", name: "Coach", email: "coach@\(tag).test")
        let client = try APIClient(port: port(clientOn)).signUp(role: "client", name: "Client", email: "client@\(tag).test")
        let link = try APIClient(port: port(clientOn)).call("POST", "/v1/me/coach", ["coach_id": coach.id], token: client.access)
        guard let thread = link.string("thread_id") else { throw BlockingSocket.Failure(description: "no link: \(link.json)") }
        Thread.sleep(forTimeInterval: 0.5)
        return (coach, client, thread)
    }

    /// Two one-process deployments on one `nats-server` (`options` each), a linked pair in each, and four
    /// messages in the second one's thread 1 — its records on the shared server. The caller stops both.
    static func twoDeploymentsOnOneNATS(options: [String] = [], otherOptions: [String] = []) throws
        -> (cluster: ClusterFixture, coach: SpotterSocket, thread: String, other: ClusterFixture, otherCoach: SpotterSocket, otherThread: String) {
        let cluster = try ClusterFixture(processes: 1, options: options)
        let other = try ClusterFixture(processes: 1, options: otherOptions, sharing: cluster.nats)
        let (coach, _, thread) = try cluster.linkedPair("twox", coachOn: 0, clientOn: 0)
        let (otherCoach, _, otherThread) = try other.linkedPair("twoy", coachOn: 0, clientOn: 0)
        let coachSocket = try SpotterSocket(port: cluster.port(0), token: coach.access)
        let otherSocket = try SpotterSocket(port: other.port(0), token: otherCoach.access)
        for n in 1...4 {
            _ = try otherSocket.result("message.send", ["thread_id": otherThread, "client_message_id": "y\(n)", "text": "y \(n)"])
        }
        Thread.sleep(forTimeInterval: 0.5)
        return (cluster, coachSocket, thread, other, otherSocket, otherThread)
    }

    /// kill -9 of process `index`, as a machine dying would.
    func kill9(_ index: Int) {
        _ = processes[index]?.stop(signal: SIGKILL)
        processes[index] = nil
    }

    func stop() {
        for process in processes.compactMap({ $0 }) { _ = process.stop() }
        processes = []
        if ownsNATS { nats.stop() }
        if ownsPostgres { postgres.stop() }
        if keep {
            print("cluster logs kept in \(directory)")
        } else {
            try? FileManager.default.removeItem(atPath: directory)
        }
    }
}

extension SpotterSocket {
    /// The next event of `type`, or a failure naming the socket and the event it waited for (and the line).
    func awaitEvent(_ type: String, _ socket: String, line: Int = #line) throws -> [String: Any] {
        do {
            return try next(type)
        } catch {
            throw BlockingSocket.Failure(description: "line \(line): \(socket) got no \(type) event (\(error))")
        }
    }

    /// Message events received so far plus those arriving until `count` are in (or `timeout` passes).
    func messages(atLeast count: Int, timeout: Double = 15) -> [[String: Any]] {
        var seen: [[String: Any]] = []
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            seen += drain(for: 0.2).filter { $0["type"] as? String == "message" }
            if seen.count >= count { break }
        }
        return seen
    }
}

/// The message inside a `message` event.
func message(_ event: [String: Any]) -> [String: Any] { event["message"] as? [String: Any] ?? [:] }
