import ArgumentParser

#if canImport(Glibc)
import Glibc
import LoadSupport
#endif

/// `spotter-echo-bench`: many WebSocket clients on one libuv loop against
/// `spotter serve --echo`. See LoadTests/README.md for how to read the output.
struct EchoBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "spotter-echo-bench",
        abstract: "WebSocket echo benchmark for `spotter serve --echo`.",
        discussion: """
            Phase 1 opens --connections WebSockets (at most --max-pending-connects \
            connects+upgrades in flight) and checks every 101 and Sec-WebSocket-Accept. \
            Phase 2 leaves them idle for --idle-seconds, then samples the server's RSS. \
            Phase 3 keeps --in-flight text messages outstanding per connection for \
            --warmup + --duration seconds, checking every echo and timing it; only the \
            --duration window after the warm-up counts. Then every connection is closed \
            with 1000. Exit status 1 if any error was counted.
            """
    )

    @Option(help: ArgumentHelp("Server address, numeric IPv4 or IPv6.", valueName: "address"))
    var urlHost = "127.0.0.1"

    @Option(help: "Server port.")
    var port: Int

    @Option(help: "WebSocket path.")
    var path = "/echo"

    @Option(help: "WebSocket connections to open.")
    var connections = 1000

    @Option(help: "Bytes per text message (at least 16: the send stamp is 16 hex digits).")
    var messageBytes = 100

    @Option(help: ArgumentHelp("Measured echo window, after the warm-up.", valueName: "seconds"))
    var duration: Double = 10

    @Option(help: ArgumentHelp("Echo time before the window, left out of every statistic.", valueName: "seconds"))
    var warmup: Double = 2

    @Option(help: "Messages each connection keeps outstanding (1: send, wait for the echo, send the next).")
    var inFlight = 1

    @Option(help: ArgumentHelp("Server process to sample: RSS from /proc/PID/status, CPU from /proc/PID/stat.", valueName: "pid"))
    var serverPid: Int32?

    @Option(help: "Spread connections over source addresses 127.0.0.1...127.0.0.N (connection i uses 127.0.0.(1 + i % N)).")
    var sourceAddresses = 1

    @Option(help: ArgumentHelp("Also write the results as JSON to this file.", valueName: "path"))
    var json: String?

    @Option(help: ArgumentHelp("Idle time after the last connect, before the server's RSS is sampled.", valueName: "seconds"))
    var idleSeconds: Double = 3

    @Option(help: ArgumentHelp("Give up on a connect+upgrade after this long.", valueName: "seconds"))
    var connectTimeout: Double = 10

    @Option(help: "Connects+upgrades in flight at once, so the server's accept backlog is not overrun.")
    var maxPendingConnects = 200

    @Option(help: ArgumentHelp("Wait this long for the closing handshakes at the end.", valueName: "seconds"))
    var closeGrace: Double = 3

    func validate() throws {
        guard (1...65535).contains(port) else { throw ValidationError("--port must be 1...65535") }
        guard path.hasPrefix("/") else { throw ValidationError("--path must start with /") }
        guard connections >= 1 else { throw ValidationError("--connections must be at least 1") }
        guard (16...65536).contains(messageBytes) else {
            throw ValidationError("--message-bytes must be 16...65536 (the stamp takes 16; the server accepts 64 KiB)")
        }
        guard duration > 0 else { throw ValidationError("--duration must be positive") }
        guard warmup >= 0, idleSeconds >= 0, closeGrace >= 0 else {
            throw ValidationError("--warmup, --idle-seconds and --close-grace cannot be negative")
        }
        guard connectTimeout > 0 else { throw ValidationError("--connect-timeout must be positive") }
        guard inFlight >= 1 else { throw ValidationError("--in-flight must be at least 1") }
        guard maxPendingConnects >= 1 else { throw ValidationError("--max-pending-connects must be at least 1") }
        guard (1...254).contains(sourceAddresses) else { throw ValidationError("--source-addresses must be 1...254") }
        if sourceAddresses > 1 && !urlHost.hasPrefix("127.") {
            throw ValidationError("--source-addresses > 1 needs a loopback --url-host (127.x.x.x)")
        }
    }

    func run() throws {
        signal(SIGPIPE, SIG_IGN)
        let fileLimit = raiseOpenFileLimit()
        if UInt64(connections) + 64 > fileLimit {
            throw ValidationError("--connections \(connections) needs more file descriptors than the limit \(fileLimit)")
        }
        if let pid = serverPid, ProcessProbe(pid: pid).residentBytes() == nil {
            throw ValidationError("cannot read /proc/\(pid)/status: is --server-pid right?")
        }
        let config = BenchConfig(
            host: urlHost, port: port, path: path, connections: connections, messageBytes: messageBytes,
            durationSeconds: duration, warmupSeconds: warmup, inFlight: inFlight, sourceAddresses: sourceAddresses,
            idleSeconds: idleSeconds, connectTimeoutSeconds: connectTimeout, maxPendingConnects: maxPendingConnects,
            closeGraceSeconds: closeGrace, serverPID: serverPid)
        let startedAt = utcTimestamp()
        let load = loadAverage()
        let runner = try Runner(config: config)
        runner.run()
        let results = runner.results(
            startedAt: startedAt, loadAverage: load, commandLine: CommandLine.arguments.joined(separator: " "))
        print(results.summary)
        if let json {
            try writeJSON(results, to: json)
            print("json              \(json)")
        }
        if results.errors.total > 0 { throw ExitCode(1) }
    }
}

/// What one run does; also written into the JSON results.
struct BenchConfig: Codable {
    var host: String
    var port: Int
    var path: String
    var connections: Int
    var messageBytes: Int
    var durationSeconds: Double
    var warmupSeconds: Double
    var inFlight: Int
    var sourceAddresses: Int
    var idleSeconds: Double
    var connectTimeoutSeconds: Double
    var maxPendingConnects: Int
    var closeGraceSeconds: Double
    var serverPID: Int32?

    var hostHeader: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

EchoBench.main()
