import ArgumentParser

#if canImport(Glibc)
import Glibc
import LoadSupport
#endif

/// `spotter-load`: Spotter's load generator. Thousands of real `/v1/ws`
/// sockets on one libuv loop (the project's EventLoop and WebSocket modules
/// in client mode), speaking the real protocol. See LoadTests/README.md.
struct SpotterLoad: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "spotter-load",
        abstract: "Load generator for `spotter serve`: chat, idle, fan-in, reconnect, ceiling and video-session scenarios.",
        discussion: """
            Signs in as an admin, provisions accounts with POST /v1/admin/provision, \
            opens one socket per account and runs one scenario. Writes the result as \
            JSON (--json) and a Markdown section (--markdown). Exit status 1 if any \
            error was counted (lost or duplicated messages, cursor gaps, failed connects, \
            command errors, drops).
            """
    )

    enum Scenario: String, ExpressibleByArgument, CaseIterable { case chat, idle, fanin, reconnect, ceiling, sessions, quota, notify }

    @Argument(help: "chat | idle | fanin | reconnect | ceiling | sessions | quota (the server runs with --tiers) | notify (clients offline with a Web Push device each)")
    var scenario: Scenario

    @Option(help: ArgumentHelp("Server address (numeric IPv4).", valueName: "address"))
    var urlHost = "127.0.0.1"
    @Option(help: "Server port (provisioning, and the sockets unless --ports).")
    var port: Int
    @Option(help: ArgumentHelp(
        "Servers of one cluster to spread the sockets over: the coach of pair (or coach) i on ports[i % n], its clients on ports[(i + 1) % n], so with n > 1 every message crosses processes. Provisioning stays on --port.",
        valueName: "port,port,…"))
    var ports: CommaList<Int>?
    @Option(help: ArgumentHelp("Server process to sample (RSS, CPU from /proc).", valueName: "pid"))
    var serverPid: Int32?
    @Option(name: [.customLong("server-pids"), .customLong("pids")],
            help: ArgumentHelp("Several server processes to sample as one (CPU and RSS summed; RSS per process too).", valueName: "pid,pid,…"))
    var serverPids: CommaList<Int32>?
    @Option(help: "Admin account used for provisioning.")
    var adminEmail: String
    @Option(help: "Its password (or set SPOTTER_LOAD_ADMIN_PASSWORD).")
    var adminPassword: String?
    @Option(help: ArgumentHelp(
        "Provision the scenario's accounts, write them (ids, tokens, threads) here and stop: for servers started after provisioning, as a cluster's other processes, which read provisioned threads from the store only at start.",
        valueName: "path"))
    var provisionTo: String?
    @Option(help: ArgumentHelp("Use the accounts --provision-to wrote (same scenario and counts) instead of provisioning.", valueName: "path"))
    var accountsFile: String?

    @Option(help: "chat, reconnect, ceiling: coach–client pairs (two sockets each).")
    var pairs = 5000
    @Option(help: "idle: sockets (half coaches, half clients).")
    var sockets = 10000
    @Option(help: "fanin, sessions, notify: coaches (default 50, sessions 1000, notify 200).")
    var coaches: Int?
    @Option(help: "fanin, sessions, notify: clients per coach (default 200, sessions 10, notify 50).")
    var clientsPerCoach: Int?

    @Option(help: "Aggregate messages/s (chat, reconnect; the first step of ceiling; clients' total in fanin; session actions in sessions). Default 10000, fanin and sessions 1000, ceiling 500.")
    var rate: Double?
    @Option(help: ArgumentHelp("Measured window (chat, fanin, each ceiling step; reconnect: traffic after everyone resumed).", valueName: "seconds"))
    var duration: Double = 60
    @Option(help: ArgumentHelp("Traffic before the window (reconnect: before the drop).", valueName: "seconds"))
    var warmup: Double = 3
    @Option(help: ArgumentHelp("idle: how long the sockets are held.", valueName: "seconds"))
    var hold: Double = 60
    @Option(help: ArgumentHelp("After the window: time allowed for the last acks and deliveries.", valueName: "seconds"))
    var grace: Double = 10
    @Option(help: ArgumentHelp("reconnect: each socket comes back after a random delay in [0, jitter].", valueName: "seconds"))
    var jitter: Double = 2
    @Option(help: "fanin: commands per second each coach spends (thread.read + a reply per thread with news).")
    var coachCommandsPerSecond: Double = 20
    @Option(help: "ceiling: rate added per step (the next step is the larger of rate + step and rate × factor).")
    var ceilingStep: Double = 0
    @Option(help: "ceiling: rate multiplied per step.")
    var ceilingFactor: Double = 1.5
    @Option(help: "ceiling: highest rate tried.")
    var ceilingMax: Double = 60000
    @Option(help: "ceiling: after the first failing step, halve the gap to the highest passing one this many times.")
    var ceilingRefinements = 3
    @Option(help: ArgumentHelp("ceiling: no traffic for this long after a failed step, before the next (lower) one.", valueName: "seconds"))
    var ceilingCooldown: Double = 10
    @Option(help: "ceiling: a step fails above this p99 (send→ack or send→peer).")
    var ceilingP99Ms: Double = 50
    @Option(help: ArgumentHelp("ceiling: traffic before each step's window.", valueName: "seconds"))
    var stepWarmup: Double = 2

    @Option(help: "Spread sockets over 127.0.0.1...127.0.0.N (socket i binds 127.0.0.(1 + i % N)).")
    var sourceAddresses = 16
    @Option(help: "Connects (up to hello) in flight at once.")
    var maxPendingConnects = 200
    @Option(help: ArgumentHelp("Give up on a connect that has no hello after this long.", valueName: "seconds"))
    var connectTimeout: Double = 15
    @Option(help: "A socket with this many unanswered sends is skipped by the pacer (counted).")
    var maxPendingPerSocket = 50
    @Option(help: "chat: the pacer's round robin. adjacent: coach i, then its client (a thread's two sends 1/rate apart); spread: coach i, then the client of pair i + pairs/2 (half a round apart, as a reply a while later).")
    var senderOrder: SenderOrder = .adjacent
    @Option(help: ArgumentHelp("Hard bound on the whole run after setup.", valueName: "seconds"))
    var maxRunSeconds: Double = 600
    @Option(help: ArgumentHelp("notify: register a Web Push device for each client, endpoint <base>c<i> (the receiver's endpoint_base).", valueName: "url"))
    var webpushEndpointBase: String?
    @Option(help: "notify: the devices' subscription key p256dh (base64url; every device the same).")
    var webpushP256dh: String?
    @Option(help: "notify: the devices' auth secret (base64url).")
    var webpushAuth: String?
    @Flag(help: "notify: the server has a Web Push provider: wait until every acked message's push was sent.")
    var expectPushes = false
    @Option(help: ArgumentHelp("notify: at most this long for the pushes after the acks.", valueName: "seconds"))
    var pushWait: Double = 120
    @Option(help: ArgumentHelp("notify: LoadTests/push-receiver.py's --stats-file, read at the end.", valueName: "path"))
    var receiverStats: String?
    @Option(help: ArgumentHelp("Write the result as JSON here.", valueName: "path"))
    var json: String?
    @Option(help: ArgumentHelp("Write a Markdown section here.", valueName: "path"))
    var markdown: String?

    func validate() throws {
        guard ([port] + (ports?.values ?? [])).allSatisfy({ (1...65535).contains($0) }) else { throw ValidationError("ports must be 1...65535") }
        guard pairs >= 1, sockets >= 2, (coaches ?? 1) >= 1, (clientsPerCoach ?? 1) >= 1 else { throw ValidationError("counts must be positive") }
        guard (1...254).contains(sourceAddresses) else { throw ValidationError("--source-addresses must be 1...254") }
        guard duration > 0, hold >= 0, warmup >= 0, grace >= 0, jitter >= 0 else { throw ValidationError("times must not be negative") }
        if let rate, rate <= 0 { throw ValidationError("--rate must be positive") }
        guard ceilingStep > 0 || ceilingFactor > 1 else { throw ValidationError("ceiling needs --ceiling-step > 0 or --ceiling-factor > 1") }
        guard (0...20).contains(ceilingRefinements) else { throw ValidationError("--ceiling-refinements is 0...20") }
        guard (0...600).contains(ceilingCooldown) else { throw ValidationError("--ceiling-cooldown is 0...600 seconds") }
    }

    func run() throws {
        signal(SIGPIPE, SIG_IGN)
        let fileLimit = raiseOpenFileLimit()
        let password = adminPassword ?? (getenv("SPOTTER_LOAD_ADMIN_PASSWORD").map { String(cString: $0) } ?? "")
        let socketCount: Int
        let plan: (coaches: Int, perCoach: Int)
        switch scenario {
        case .chat, .reconnect, .ceiling, .quota: plan = (pairs, 1); socketCount = 2 * pairs
        case .idle: plan = (sockets / 2, 1); socketCount = 2 * (sockets / 2)
        case .fanin, .sessions:
            plan = scenario == .fanin ? (coaches ?? 50, clientsPerCoach ?? 200) : (coaches ?? 1000, clientsPerCoach ?? 10)
            socketCount = plan.coaches * (plan.perCoach + 1)
        case .notify: plan = (coaches ?? 200, clientsPerCoach ?? 50); socketCount = plan.coaches  // clients stay offline
        }
        if UInt64(socketCount) + 64 > fileLimit {
            throw ValidationError("\(socketCount) sockets need more file descriptors than the limit \(fileLimit)")
        }
        let defaultRate = scenario == .fanin || scenario == .sessions ? 1000.0 : scenario == .ceiling ? 500.0
            : scenario == .notify ? 2000.0 : 10000.0
        var config = LoadConfig(
            scenario: scenario.rawValue, host: urlHost, port: port, ports: ports?.values ?? [port],
            serverPIDs: (serverPid.map { [$0] } ?? []) + (serverPids?.values ?? []), sockets: socketCount,
            coaches: plan.coaches, clientsPerCoach: plan.perCoach, rate: rate ?? defaultRate, duration: duration,
            warmup: warmup, hold: hold, grace: grace, jitter: jitter, coachCommandsPerSecond: coachCommandsPerSecond,
            ceilingStep: ceilingStep, ceilingFactor: ceilingFactor, ceilingMax: ceilingMax, ceilingRefinements: ceilingRefinements, ceilingCooldown: ceilingCooldown, ceilingP99Micros: UInt64(ceilingP99Ms * 1000),
            stepWarmup: stepWarmup, sourceAddresses: sourceAddresses, maxPendingConnects: maxPendingConnects,
            connectTimeout: connectTimeout, maxPendingPerSocket: maxPendingPerSocket, senderOrder: senderOrder, maxRunSeconds: maxRunSeconds)
        config.expectPushes = expectPushes
        config.pushWait = pushWait
        config.receiverStats = receiverStats
        let perSocketRate = scenario == .fanin ? config.rate / Double(max(1, plan.coaches * plan.perCoach)) : config.rate / Double(socketCount)
        if perSocketRate > 25 || (scenario == .ceiling && config.ceilingMax / Double(socketCount) > 25) {
            throw ValidationError("that is more than 25 sends/s per socket; the server allows 30 (use more pairs)")
        }
        for pid in config.serverPIDs where ProcessProbe(pid: pid).residentBytes() == nil {
            throw ValidationError("cannot read /proc/\(pid)/status: are --server-pid and --server-pids right?")
        }

        let startedAt = utcTimestamp()
        let load = loadAverage()
        let setupStart = monotonicNanos()
        let accounts: Provisioned
        if let accountsFile {
            accounts = try Provisioned.read(from: accountsFile)
            guard accounts.coaches.count == plan.coaches, accounts.clients.count == plan.coaches * plan.perCoach else {
                throw ValidationError("\(accountsFile) holds \(accounts.coaches.count) coaches and \(accounts.clients.count) clients, not this run's")
            }
        } else {
            progress("\(scenario.rawValue): signing in as \(adminEmail), provisioning \(plan.coaches) coaches × \(plan.perCoach) clients")
            let adminToken = try Setup.signIn(host: urlHost, port: port, email: adminEmail, password: password)
            accounts = try Setup.provision(
                host: urlHost, port: port, adminToken: adminToken, coaches: plan.coaches, clientsPerCoach: plan.perCoach,
                password: "load-" + String(UInt64.random(in: 0...UInt64.max), radix: 36))
        }
        if let provisionTo {
            try accounts.write(to: provisionTo)
            return progress("provisioned \(accounts.coaches.count + accounts.clients.count) accounts into \(provisionTo)")
        }
        var result = ScenarioResult(
            scenario: scenario.rawValue, startedAt: startedAt, loadAverageBefore: load,
            commandLine: CommandLine.arguments.map { $0.contains(" ") ? "'\($0)'" : $0 }.joined(separator: " "), config: config)
        result.setupSeconds = seconds(setupStart, monotonicNanos())
        progress("\(accountsFile == nil ? "provisioned" : "read") \(accounts.coaches.count + accounts.clients.count) accounts in \(fixed(result.setupSeconds, 1)) s")

        var devices = 0
        var deviceSeconds = 0.0
        if scenario == .notify, let base = webpushEndpointBase {
            guard let p256dh = webpushP256dh, let auth = webpushAuth else { throw ValidationError("--webpush-endpoint-base needs --webpush-p256dh and --webpush-auth") }
            progress("notify: registering a Web Push device for each of \(accounts.clients.count) clients")
            let start = monotonicNanos()
            devices = try Setup.registerWebPushDevices(host: urlHost, port: port, clients: accounts.clients, endpointBase: base, p256dh: p256dh, auth: auth)
            deviceSeconds = seconds(start, monotonicNanos())
            progress("notify: \(devices) devices in \(fixed(deviceSeconds, 1)) s")
        }
        let runner = try Runner(config: config, accounts: accounts, result: result)
        runner.run { [unowned runner] in
            switch scenario {
            case .chat: runner.runChat()
            case .idle: runner.runIdle()
            case .fanin: runner.runFanIn()
            case .reconnect: runner.runReconnect()
            case .ceiling: runner.runCeiling()
            case .sessions: runner.runSessions()
            case .quota: runner.runQuota()
            case .notify: runner.runNotify(devices: devices, deviceSeconds: deviceSeconds)
            }
        }
        result = runner.result
        if result.errors == nil { result.errors = runner.errorSummary() }
        let text = result.markdown
        print(text)
        if let json { try writeJSON(result, to: json) }
        if let markdown { try writeFile(markdown, Array(text.utf8)) }
        if (result.errors?.total ?? 0) > 0 { throw ExitCode(1) }
    }
}

/// One run's settings; written into the JSON result.
struct LoadConfig: Codable {
    var scenario: String
    var host: String
    var port: Int
    /// The sockets' servers (`--ports`; just `port` without it).
    var ports: [Int]
    /// `--server-pid` and `--server-pids`: sampled as one.
    var serverPIDs: [Int32]
    var sockets: Int
    var coaches: Int
    var clientsPerCoach: Int
    var rate: Double
    var duration: Double
    var warmup: Double
    var hold: Double
    var grace: Double
    var jitter: Double
    var coachCommandsPerSecond: Double
    var ceilingStep: Double
    var ceilingFactor: Double
    var ceilingMax: Double
    var ceilingRefinements: Int
    var ceilingCooldown: Double
    var ceilingP99Micros: UInt64
    var stepWarmup: Double
    var sourceAddresses: Int
    var maxPendingConnects: Int
    var connectTimeout: Double
    var maxPendingPerSocket: Int
    var senderOrder: SenderOrder
    var maxRunSeconds: Double
    /// notify: wait for a push per acked message (a provider is configured), at most `pushWait` s; the receiver's figures.
    var expectPushes = false
    var pushWait = 120.0
    var receiverStats: String?

    func hostHeader(server: Int) -> String { "\(host):\(ports[server])" }

    /// The server (index into `ports`) of socket group `i`'s coach; its clients are on the next one.
    func coachServer(_ i: Int) -> Int { i % ports.count }
    func clientServer(_ i: Int) -> Int { (i + 1) % ports.count }
}

enum SenderOrder: String, ExpressibleByArgument, Codable { case adjacent, spread }

/// An option's comma-separated values (`--ports 8081,8082,8083`).
struct CommaList<Element: LosslessStringConvertible>: ExpressibleByArgument {
    var values: [Element]

    init?(argument: String) {
        let parsed = argument.split(separator: ",").map { Element(String($0)) }
        guard !parsed.isEmpty, parsed.allSatisfy({ $0 != nil }) else { return nil }
        values = parsed.map { $0! }
    }
}

SpotterLoad.main()
