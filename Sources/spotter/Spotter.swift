import ArgumentParser
import Logging
import SpotterCore
import FoundationEssentials
import SpotterServer
import SpotterNATS
import SpotterPostgres
import SpotterSMS
import SpotterPorts
import SpotterStore

#if canImport(Glibc)
import Glibc
#endif

@main
struct Spotter: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "spotter",
        abstract: "The real-time server for coaching apps.",
        version: Server.version,
        subcommands: [Serve.self, Migrate.self, Admin.self],
        defaultSubcommand: Serve.self
    )
}

struct Serve: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve WebSocket and HTTP on one port until SIGINT or SIGTERM.",
        discussion: """
            Every option can also be set by the environment variable named in its \
            help; a flag wins over the environment. On SIGINT/SIGTERM the server \
            stops accepting, sends close 1001 to every WebSocket, waits up to the \
            shutdown grace for the closing handshakes, and exits 0.
            """
    )

    @OptionGroup var storage: StorageOptions
    @OptionGroup var push: PushOptions
    @OptionGroup var webhooks: WebhookOptions
    @OptionGroup var forgetting: ForgettingOptions
    @OptionGroup var identity: IdentityOptions
    @OptionGroup var proxies: ProxyOptions
    @OptionGroup var operators: OperatorOptions

    @OptionGroup var cluster: ClusterOptions

    @Option(help: ArgumentHelp("Address to listen on. [env: SPOTTER_HOST] (default: 127.0.0.1)", valueName: "address"))
    var host: String?

    @Option(help: ArgumentHelp("TCP port; 0 picks a free one. [env: SPOTTER_PORT] (default: 8080)", valueName: "port"))
    var port: Int?

    @Option(help: ArgumentHelp(
        "Certificate (PEM, chain after it) for TLS on the port: HTTPS and wss:// (with --tls-key; SIGHUP reloads both). [env: SPOTTER_TLS_CERT] (default: none, plain HTTP and ws://)",
        valueName: "path"))
    var tlsCert: String?

    @Option(help: ArgumentHelp("Private key (PEM) of --tls-cert. [env: SPOTTER_TLS_KEY]", valueName: "path"))
    var tlsKey: String?

    @Option(help: ArgumentHelp(
        "Largest WebSocket message in bytes; larger ones close with 1009. [env: SPOTTER_MAX_MESSAGE_BYTES] (default: 65536)",
        valueName: "bytes"))
    var maxMessageBytes: Int?

    @Option(help: ArgumentHelp(
        "Unsent bytes a connection may queue before it is closed as a slow reader (1008). [env: SPOTTER_MAX_OUTBOUND_BYTES] (default: 1048576)",
        valueName: "bytes"))
    var maxOutboundBytes: Int?

    @Option(help: ArgumentHelp(
        "Unsent bytes all of one account's sockets may hold (the server's queues and the kernel's) before the slowest are closed (1008). [env: SPOTTER_MAX_ACCOUNT_OUTBOUND_BYTES] (default: 4194304, or --max-outbound-bytes when that is larger)",
        valueName: "bytes"))
    var maxAccountOutboundBytes: Int?

    @Option(help: ArgumentHelp(
        "The kernel's send buffer per socket (SO_SNDBUF; Linux doubles it); 0 leaves the kernel's autotuning. [env: SPOTTER_SOCKET_SEND_BUFFER_BYTES] (default: 262144)",
        valueName: "bytes"))
    var socketSendBufferBytes: Int?

    @Option(help: ArgumentHelp(
        "Upload bytes received at once over all connections; past it an upload gets 503 from its head. [env: SPOTTER_MAX_UPLOAD_BYTES_IN_FLIGHT] (default: 268435456)",
        valueName: "bytes"))
    var maxUploadBytesInFlight: Int?

    @Option(help: ArgumentHelp(
        "Seconds of silence before a connection is closed; WebSockets are pinged at half of it. [env: SPOTTER_IDLE_TIMEOUT] (default: 60)",
        valueName: "seconds"))
    var idleTimeout: Int?

    @Option(help: ArgumentHelp(
        "Seconds of silence before the server pings a WebSocket. [env: SPOTTER_PING_INTERVAL] (default: idle timeout / 2)",
        valueName: "seconds"))
    var pingInterval: Int?

    @Option(help: ArgumentHelp(
        "Seconds a shutdown waits for closing handshakes. [env: SPOTTER_SHUTDOWN_GRACE] (default: 10)",
        valueName: "seconds"))
    var shutdownGrace: Int?

    @Option(name: .customLong("allow-origin"), help: ArgumentHelp(
        "A browser Origin allowed to connect (repeatable; none means any). [env: SPOTTER_ALLOWED_ORIGINS, comma-separated]",
        valueName: "origin"))
    var allowedOrigins: [String] = []

    @Option(help: ArgumentHelp(
        "Seconds a request's head and body may take from its first byte; then 408 and close. [env: SPOTTER_REQUEST_TIMEOUT] (default: 10)",
        valueName: "seconds"))
    var requestTimeout: Int?

    @Option(name: .customLong("max-http-connections"), help: ArgumentHelp(
        "Connections not yet upgraded; past it the oldest one waiting for a request is closed. [env: SPOTTER_MAX_HTTP_CONNECTIONS] (default: 4096)",
        valueName: "count"))
    var maxHTTPConnections: Int?

    @Option(help: ArgumentHelp(
        "Threads that hash passwords, apart from the database pool. [env: SPOTTER_HASH_THREADS] (default: 1)",
        valueName: "count"))
    var hashThreads: Int?

    @Option(help: ArgumentHelp(
        "Password hashes that may wait; past it sign-up and sign-in get 429 server_busy. [env: SPOTTER_HASH_QUEUE] (default: 16)",
        valueName: "count"))
    var hashQueue: Int?

    @Option(help: ArgumentHelp(
        "Sign-ups per client address per hour; past it 429 rate_limited. [env: SPOTTER_SIGNUPS_PER_HOUR] (default: 20)",
        valueName: "count"))
    var signupsPerHour: Int?

    @Option(help: ArgumentHelp(
        "Session invites and requests per account per minute, over all its sockets; past it rate_limited. [env: SPOTTER_SESSION_CREATES_PER_MINUTE] (default: 30)",
        valueName: "count"))
    var sessionCreatesPerMinute: Int?

    @Option(help: ArgumentHelp(
        "Session actions (session.act) per account per minute, over all its sockets; past it rate_limited. [env: SPOTTER_SESSION_ACTS_PER_MINUTE] (default: 120)",
        valueName: "count"))
    var sessionActsPerMinute: Int?

    @Option(help: ArgumentHelp(
        "Event-loop threads, 1...64: loop 0 keeps the core, the HTTP API and the timers; loops 1...N-1 carry the app WebSockets (not TLS ones). [env: SPOTTER_LOOPS] (default: 1)",
        valueName: "count"))
    var loops: Int?

    @Flag(help: "Serve an echo WebSocket at /echo, for conformance runs and benchmarks only. [env: SPOTTER_ECHO=1]")
    var echo = false

    @Option(help: ArgumentHelp(
        "Seconds an access token lives (5 or more); sockets get auth.expiring 60 s (at most half of it) before. [env: SPOTTER_ACCESS_TOKEN_LIFETIME] (default: 900)",
        valueName: "seconds"))
    var accessTokenLifetime: Int?

    @Option(help: ArgumentHelp(
        "Serve /clients/ and /console/ from this folder (as Sources/SpotterWeb/files), read at start, instead of the built-in copies: for working on them. [env: SPOTTER_WEB_ROOT]",
        valueName: "path"))
    var webRoot: String?

    @Flag(help: """
        Development mode, never in production: phone-code replies carry the code (log sender only) \
        and POST /v1/dev/reset-limits clears the rate limits. [env: SPOTTER_DEVELOPMENT=1]
        """)
    var development = false

    @Flag(help: """
        Open POST /v1/admin/provision (admin only): bulk accounts with access tokens, for load tests. \
        Never in production. [env: SPOTTER_LOAD_TEST_PROVISIONING=1]
        """)
    var loadTestProvisioning = false

    @Option(help: """
        Video sessions: the meeting link's base URL; a room name with 128 random bits is appended. \
        [env: SPOTTER_MEET_BASE_URL] (default: https://meet.jit.si/)
        """)
    var meetBaseURL: String?

    @Option(help: "Video sessions: seconds before the start from which a join is accepted. [env: SPOTTER_SESSION_JOIN_EARLY] (default: 600)")
    var sessionJoinEarly: Int?

    @Option(help: "Video sessions: seconds before the start of the \"starting soon\" event. [env: SPOTTER_SESSION_REMINDER] (default: 600)")
    var sessionReminder: Int?

    @Option(help: "Video sessions: seconds after the end when a session in progress completes by itself. [env: SPOTTER_SESSION_AUTO_COMPLETE] (default: 1800)")
    var sessionAutoComplete: Int?

    @Flag(help: """
        Subscription tiers: clients get Freemium, Premium or Smart Premium limits (messages and video calls per \
        month, call length). Off, nothing is limited. [env: SPOTTER_TIERS=1]
        """)
    var tiers = false

    @Flag(help: "Ratings: clients are asked to rate their coach after every 10th message and each completed video session. [env: SPOTTER_RATINGS=1]")
    var ratings = false

    @Option(name: .customLong("sms-gateway-url"), help: ArgumentHelp("""
        Send phone sign-in codes by POSTing JSON ({"to","code","text"}) to this SMS gateway URL (http or https); \
        the bearer token comes from SPOTTER_SMS_GATEWAY_TOKEN only. Without it codes go to the log at debug level. \
        Session reminders go there too ({"id","kind","subject","text","to"}) for people who chose SMS or have no device. \
        [env: SPOTTER_SMS_GATEWAY_URL]
        """, valueName: "url"))
    var smsGatewayURL: String?

    @Option(name: .customLong("email-gateway-url"), help: ArgumentHelp("""
        Send the codes that confirm a new email address by POSTing the same JSON ({"to","code","text"}, "to" being \
        the address) to this mail gateway URL (http or https); the bearer token comes from \
        SPOTTER_EMAIL_GATEWAY_TOKEN only. Without it codes go to the log at debug level. Session reminders go there too \
        for people who chose email or have no device. [env: SPOTTER_EMAIL_GATEWAY_URL]
        """, valueName: "url"))
    var emailGatewayURL: String?

    @Option(help: ArgumentHelp("""
        Append every record of the log (messages, receipts, links, sessions…) to this file as one JSON line: its \
        delivery id, position, kind, thread, side, seq, reference and time, no bodies. At least once and in log \
        order, from a position kept in the database, so it survives restarts and crashes; it starts at the newest \
        record the first time. [env: SPOTTER_LOG_TAP]
        """, valueName: "file"))
    var logTap: String?

    /// The SMS gateway sender, when one is configured.
    func makeOTPSender() throws -> (any OTPSender)? {
        try gatewaySender(smsGatewayURL ?? env("SPOTTER_SMS_GATEWAY_URL"), "SMS", token: env("SPOTTER_SMS_GATEWAY_TOKEN"))
    }

    /// The mail gateway sender, when one is configured.
    func makeEmailSender() throws -> (any OTPSender)? {
        try gatewaySender(emailGatewayURL ?? env("SPOTTER_EMAIL_GATEWAY_URL"), "email", token: env("SPOTTER_EMAIL_GATEWAY_TOKEN"))
    }

    private func gatewaySender(_ text: String?, _ name: String, token: String?) throws -> HTTPOTPSender? {
        guard let text else { return nil }
        guard let url = URL(string: text), ["http", "https"].contains(url.scheme?.lowercased() ?? ""), url.host != nil else {
            throw ValidationError("the \(name) gateway URL must be an http or https URL, got '\(text)'")
        }
        return HTTPOTPSender(url: url, token: token)
    }

    func makeConfig() throws -> ServerConfig {
        var config = ServerConfig()
        config.host = host ?? env("SPOTTER_HOST") ?? config.host
        config.port = try port ?? envInt("SPOTTER_PORT") ?? config.port
        config.dataDirectory = storage.resolvedDataDirectory
        config.tlsCertificatePath = tlsCert ?? env("SPOTTER_TLS_CERT")
        config.tlsKeyPath = tlsKey ?? env("SPOTTER_TLS_KEY")
        guard (config.tlsCertificatePath == nil) == (config.tlsKeyPath == nil) else {
            throw ValidationError("--tls-cert and --tls-key go together")
        }
        config.maxMessageBytes = try maxMessageBytes ?? envInt("SPOTTER_MAX_MESSAGE_BYTES") ?? config.maxMessageBytes
        config.maxOutboundBytes = try maxOutboundBytes ?? envInt("SPOTTER_MAX_OUTBOUND_BYTES") ?? config.maxOutboundBytes
        // Not given: the default, or one socket's bound if that was raised above it (a per-socket bound past the
        // account's would make the account's the only one).
        config.maxAccountOutboundBytes = try maxAccountOutboundBytes ?? envInt("SPOTTER_MAX_ACCOUNT_OUTBOUND_BYTES")
            ?? max(config.maxAccountOutboundBytes, config.maxOutboundBytes)
        config.socketSendBufferBytes = try socketSendBufferBytes ?? envInt("SPOTTER_SOCKET_SEND_BUFFER_BYTES")
            ?? config.socketSendBufferBytes
        config.maxUploadBytesInFlight = try maxUploadBytesInFlight ?? envInt("SPOTTER_MAX_UPLOAD_BYTES_IN_FLIGHT")
            ?? config.maxUploadBytesInFlight
        config.idleTimeoutSeconds = try idleTimeout ?? envInt("SPOTTER_IDLE_TIMEOUT") ?? config.idleTimeoutSeconds
        config.pingIntervalSeconds = try pingInterval ?? envInt("SPOTTER_PING_INTERVAL")
        config.shutdownGraceSeconds = try shutdownGrace ?? envInt("SPOTTER_SHUTDOWN_GRACE") ?? config.shutdownGraceSeconds
        let origins = allowedOrigins.isEmpty
            ? (env("SPOTTER_ALLOWED_ORIGINS") ?? "").split(separator: ",").map { String($0).trimmed() }
            : allowedOrigins
        config.allowedOrigins = Set(origins.filter { !$0.isEmpty })
        config.echoEnabled = echo || env("SPOTTER_ECHO") == "1"
        config.webRoot = webRoot ?? env("SPOTTER_WEB_ROOT")
        config.logTapPath = logTap ?? env("SPOTTER_LOG_TAP")
        if let lifetime = try accessTokenLifetime ?? envInt("SPOTTER_ACCESS_TOKEN_LIFETIME") {
            guard lifetime >= 5 else { throw ValidationError("the access token lifetime must be at least 5 seconds") }
            config.accessTokenLifetimeSeconds = Int64(lifetime)
            config.tokenExpiryWarningSeconds = min(config.tokenExpiryWarningSeconds, Int64(lifetime / 2))
        }
        config.development = development || env("SPOTTER_DEVELOPMENT") == "1"
        config.loadTestProvisioning = loadTestProvisioning || env("SPOTTER_LOAD_TEST_PROVISIONING") == "1"
        if let text = env("SPOTTER_FAIL_POINT") {
            guard let points = FailPoints(text) else {
                throw ValidationError("SPOTTER_FAIL_POINT must be name or name:n (n ≥ 1) with a name of \(FailPoint.allCases.map(\.rawValue))")
            }
            config.failPoints = points
        }
        config.tiers = tiers || env("SPOTTER_TIERS") == "1"
        config.ratings = ratings || env("SPOTTER_RATINGS") == "1"
        config.meetBaseURL = meetBaseURL ?? env("SPOTTER_MEET_BASE_URL") ?? config.meetBaseURL
        config.sessionJoinEarlySeconds = Int64(try sessionJoinEarly ?? envInt("SPOTTER_SESSION_JOIN_EARLY") ?? Int(config.sessionJoinEarlySeconds))
        config.sessionReminderSeconds = Int64(try sessionReminder ?? envInt("SPOTTER_SESSION_REMINDER") ?? Int(config.sessionReminderSeconds))
        config.sessionAutoCompleteSeconds = Int64(try sessionAutoComplete ?? envInt("SPOTTER_SESSION_AUTO_COMPLETE") ?? Int(config.sessionAutoCompleteSeconds))
        guard config.sessionJoinEarlySeconds >= 0, config.sessionReminderSeconds >= 0, config.sessionAutoCompleteSeconds >= 0 else {
            throw ValidationError("session times must not be negative")
        }
        config.requestTimeoutSeconds = try requestTimeout ?? envInt("SPOTTER_REQUEST_TIMEOUT") ?? config.requestTimeoutSeconds
        config.maxHTTPConnections = try maxHTTPConnections ?? envInt("SPOTTER_MAX_HTTP_CONNECTIONS") ?? config.maxHTTPConnections
        config.hashThreads = try hashThreads ?? envInt("SPOTTER_HASH_THREADS") ?? config.hashThreads
        config.hashQueueLimit = try hashQueue ?? envInt("SPOTTER_HASH_QUEUE") ?? config.hashQueueLimit
        config.signupsPerHour = try signupsPerHour ?? envInt("SPOTTER_SIGNUPS_PER_HOUR") ?? config.signupsPerHour
        config.sessionCreatesPerMinute = try sessionCreatesPerMinute ?? envInt("SPOTTER_SESSION_CREATES_PER_MINUTE")
            ?? config.sessionCreatesPerMinute
        config.sessionActsPerMinute = try sessionActsPerMinute ?? envInt("SPOTTER_SESSION_ACTS_PER_MINUTE") ?? config.sessionActsPerMinute
        guard config.requestTimeoutSeconds >= 1 else { throw ValidationError("request timeout must be at least 1 second") }
        guard config.maxHTTPConnections >= 1 else { throw ValidationError("max HTTP connections must be at least 1") }
        guard (1...64).contains(config.hashThreads) else { throw ValidationError("hash threads must be 1...64") }
        config.loops = try loops ?? envInt("SPOTTER_LOOPS") ?? config.loops
        guard ServerConfig.loopRange.contains(config.loops) else {
            throw ValidationError("loops must be 1...64, got \(config.loops)")
        }
        guard config.hashQueueLimit >= 0 else { throw ValidationError("hash queue must be 0 or more") }
        guard config.signupsPerHour >= 1 else { throw ValidationError("sign-ups per hour must be at least 1") }
        guard config.sessionCreatesPerMinute >= 1, config.sessionActsPerMinute >= 1 else {
            throw ValidationError("session creates and acts per minute must be at least 1")
        }
        guard (0...65535).contains(config.port) else { throw ValidationError("port must be 0...65535") }
        guard config.maxMessageBytes >= 125 else { throw ValidationError("max message bytes must be at least 125") }
        guard config.maxOutboundBytes >= config.maxMessageBytes else {
            throw ValidationError("max outbound bytes must be at least max message bytes, or echoes of large messages would be refused")
        }
        guard config.maxAccountOutboundBytes >= config.maxOutboundBytes else {
            throw ValidationError("max account outbound bytes must be at least max outbound bytes")
        }
        guard (0...(64 << 20)).contains(config.socketSendBufferBytes) else {
            throw ValidationError("socket send buffer bytes must be 0...67108864")
        }
        guard config.maxUploadBytesInFlight >= 0 else { throw ValidationError("max upload bytes in flight must be 0 or more") }
        // Upper bound: the loops count deadlines in milliseconds (seconds × 1000 in UInt64), so 2^63 would trap there.
        guard (2...86_400).contains(config.idleTimeoutSeconds) else {
            throw ValidationError("idle timeout must be 2...86400 seconds")
        }
        if let ping = config.pingIntervalSeconds, ping < 1 || ping >= config.idleTimeoutSeconds {
            throw ValidationError("ping interval must be between 1 second and the idle timeout")
        }
        return config
    }

    func run() throws {
        let config = try makeConfig()
        let logger = try storage.makeLogger()
        let serverStorage: any ServerStorage
        var clusterSetup: ClusterSetup?
        let brokerURL = try cluster.brokerURL()
        if let url = try storage.postgresURL() {
            try StoreDirectory.make(config.dataDirectory)  // the token secret and attachment files stay there
            let postgres = try PostgresStorage(store: PostgresStore(url: url, logger: logger),
                                               filesDirectory: config.dataDirectory + "/attachments",
                                               version: Server.version, startedAt: config.clock.now)
            serverStorage = postgres
            if let brokerURL {
                clusterSetup = try cluster.setup(brokerURL: brokerURL, postgresURL: url, log: postgres.followableLog, logger: logger)
            }
            logger.info("keeping everything in PostgreSQL", metadata: ["run": "\(serverStorage.runNumber.map(String.init) ?? "?")"])
        } else {
            guard brokerURL == nil else {
                throw ValidationError("--broker needs --store postgres://…: the processes of a cluster share one PostgreSQL database")
            }
            let store = try Store.open(directory: config.dataDirectory, logger: logger)
                .recordingStart(version: Server.version, at: config.clock.now)
            serverStorage = SQLiteStorage(store: store, filesDirectory: config.dataDirectory + "/attachments")
        }
        var configured = config
        configured.tokenSecret = try TokenSecret.load(directory: config.dataDirectory)
        _ = try push.apply(to: &configured, logger: logger)
        try webhooks.apply(to: &configured)
        try forgetting.apply(to: &configured)
        try identity.apply(to: &configured)
        try proxies.apply(to: &configured, logger: logger)
        try operators.apply(to: &configured)
        let sender = try makeOTPSender()
        let emailSender = try makeEmailSender()
        // Session reminders off the app go through the same gateways (a development server without them logs them).
        if let sms = sender as? HTTPOTPSender { configured.reminderSenders[.sms] = sms }
        if let email = emailSender as? HTTPOTPSender { configured.reminderSenders[.email] = email }
        if configured.reminderSenders.isEmpty && config.development {
            configured.reminderSenders = [.sms: LogNotificationSender(logger: logger), .email: LogNotificationSender(logger: logger)]
        }
        let server = Server(config: configured, storage: serverStorage, logger: logger, otpSender: sender, emailSender: emailSender,
                            cluster: clusterSetup)
        if let sender = sender as? HTTPOTPSender {
            logger.info("sign-in codes go to the SMS gateway", metadata: ["host": "\(sender.url.host ?? "")"])
        }
        if let emailSender = emailSender as? HTTPOTPSender {
            logger.info("email confirmation codes go to the mail gateway", metadata: ["host": "\(emailSender.url.host ?? "")"])
        }
        if config.development { logger.warning("development mode: phone codes in replies, /v1/dev/reset-limits open") }
        try server.start(handleSignals: true)
        server.run()
    }
}
