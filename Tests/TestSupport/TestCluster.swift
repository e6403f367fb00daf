import Synchronization
import Foundation
import Logging
import SpotterNATS
import SpotterPorts
import SpotterPostgres
import SpotterServer

/// `SPOTTER_TEST_CLUSTER=3`: every test server is a cluster of that many nodes on one PostgreSQL database and
/// its own `nats-server` (`nats(for:)`), wired as `spotter serve --store postgres://… --broker
/// nats://…` wires a process (`ClusterSetup`: the NATS broker, the shared log followed, the timer lease).
///
/// A cluster answers on a **balanced port**: a port number reserved (bound, never listening) for it alone, which
/// the tests' sockets (`BlockingSocket`) never reach; each connection a test opens to it goes to the next node in
/// turn instead, as a round-robin balancer in front of the processes would send it. So a test that opens a coach's
/// socket and then a client's has them on two different nodes, and its HTTP calls (one connection each) go to
/// every node, without the test changing. A node's own port (`TestServer.ports`) reaches that node only.
///
/// Before each such connection, and before each frame a test sends on a socket it opened so, the cluster **settles**: every node has followed the shared log to the same
/// position (`Server.followedPosition`; in-process nodes only), as a client acting on what its own socket told it
/// (an id from an event, not from another user's reply) would find it. Without that, a node answers from what it has followed so far: a socket opened right after
/// a link made on another node says `hello` with the cursor before the link, an upload to that thread is refused
/// `403`, a signed-out token still works for a moment there, a session made a moment ago on another node is
/// `session_not_found`. `SPOTTER_TEST_CLUSTER_STRICT=1` turns settling off to
/// see those (Sources/SpotterPostgres/CLUSTER.md, "The suites on three processes").
///
/// Tests that cannot hold on a cluster say why with `.disabled(if: TestCluster.isOn, "…")` (Swift Testing prints
/// the reason beside the skipped test).
public enum TestCluster {
    /// Nodes of every test server: `SPOTTER_TEST_CLUSTER`, 1 (no cluster) unless set to 2 or more.
    public static let size: Int = max(1, ProcessInfo.processInfo.environment["SPOTTER_TEST_CLUSTER"].flatMap { Int($0) } ?? 1)
    public static var isOn: Bool { size > 1 }

    /// `SPOTTER_TEST_CLUSTER_STRICT=1`: new connections do not wait for the cluster to settle.
    public static let strict = ProcessInfo.processInfo.environment["SPOTTER_TEST_CLUSTER_STRICT"] == "1"

    private struct Group {
        var ports: [Int]
        var next = 0
        let reservation: Int32
        let settle: (() -> Void)?
    }

    private static let lock = NSLock()
    nonisolated(unsafe) private static var groups: [Int: Group] = [:]

    /// Reserves a port for `ports` (the nodes, in the order connections go to them); returns it.
    /// `settle` returns once the nodes agree (called before each connection unless `strict`).
    public static func balance(_ ports: [Int], settle: (() -> Void)? = nil) throws -> Int {
        let (fd, port) = try ServerProcess.boundLoopbackSocket()
        lock.lock()
        defer { lock.unlock() }
        groups[port] = Group(ports: ports, reservation: fd, settle: strict ? nil : settle)
        return port
    }

    /// Waits (at most 5 s) until every node has followed the log (read through `database`) up to its last record.
    public static func settle(_ nodes: [Server], database: any AccountsEngine) {
        let head: Int64
        do {
            head = try database.read { db in try db.fetchOne("SELECT coalesce(max(pos), 0) AS head FROM log")?["head"] } ?? 0
        } catch {
            print("TestCluster: cannot read the log's head to settle on: \(error)")
            return
        }
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline {
            if nodes.allSatisfy({ ($0.followedPosition(timeoutSeconds: 1) ?? -1) >= head }) { return }
            Thread.sleep(forTimeInterval: 0.005)
        }
    }

    /// Frees a balanced port (the cluster stopped).
    public static func release(_ port: Int) {
        lock.lock()
        let group = groups.removeValue(forKey: port)
        lock.unlock()
        if let group { close(group.reservation) }
    }

    /// Waits until the cluster behind a balanced port has settled (nothing for another port, or `strict`).
    /// `pause` more after that: a node that followed a record may still be reading what it names (a thread linked
    /// elsewhere) when a new connection says `hello`.
    public static func settle(_ port: Int, pause: Double = 0) {
        lock.lock()
        let settle = groups[port]?.settle
        lock.unlock()
        guard let settle else { return }
        settle()
        if pause > 0 { Thread.sleep(forTimeInterval: pause) }
    }

    /// The port a new connection to `port` goes to: the next node of a balanced port, `port` itself otherwise.
    public static func route(_ port: Int) -> Int {
        settle(port, pause: 0.25)
        lock.lock()
        defer { lock.unlock() }
        guard var group = groups[port] else { return port }
        let chosen = group.ports[group.next % group.ports.count]
        group.next += 1
        groups[port] = group
        return chosen
    }

    /// Whether `port` is a cluster's balanced port.
    public static func isBalanced(_ port: Int) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        return groups[port] != nil
    }

    /// The `nats-server` of the cluster on `key` (the processes' data directory), started on first use and
    /// stopped by its watchdog when the runner exits. One per cluster: the log stream and the users' subjects
    /// are the same names in every cluster, so clusters of tests running at once on one server followed each
    /// other's records (a node applied another database's thread 1: "followed a record of an unknown thread",
    /// seqs guessed past its own log).
    public static func nats(for key: String) throws -> NATSServer {
        try natsByCluster.withLock { servers in
            if let server = servers[key] { return server }
            let server = try NATSServer()
            servers[key] = server
            return server
        }
    }
    private static let natsByCluster = Mutex<[String: NATSServer]>([:])

    /// What makes one in-process node a member of the cluster on `url`, as `spotter serve --broker` builds it:
    /// `broker` is the cluster's own `nats-server`.
    public static func setup(storage: PostgresStorage, url: String, broker: NATSServer, logger: Logger) throws -> ClusterSetup {
        let broker = broker.url
        return ClusterSetup(makeBroker: { loop in try NATSBroker(loop: loop, url: broker, logger: logger) },
                            log: storage.followableLog, lease: PostgresTimerLease(url: url))
    }
}
