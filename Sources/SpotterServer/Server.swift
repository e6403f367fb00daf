import Dispatch
import EventLoop
import Logging
import SpotterCore
import SpotterBroker
import SpotterProtocol
import SpotterPorts
import SpotterStore
import SpotterTLS
import SpotterWeb
import WebSocket

#if canImport(Glibc)
import Glibc
#endif

/// The Spotter server: one libuv loop that owns every socket.
///
/// `start()` binds the port (so a caller learns it at once), `run()` turns
/// the calling thread into the loop thread until the server has shut down.
/// `requestShutdown()` is safe from any thread and from signal watchers:
/// the listener stops accepting, every WebSocket gets close 1001, and the
/// loop waits up to `shutdownGraceSeconds` for the closing handshakes.
public final class Server: @unchecked Sendable {
    public static let version = "0.1.0"

    public let config: ServerConfig
    let loop = Loop()
    let logger: Logger
    let metrics = ServerMetrics()
    let handshakePolicy: HandshakePolicy
    /// The chat, the accounts and their one writer: SQLite, or PostgreSQL (`--store`).
    let storage: any ServerStorage
    let echo = EchoEndpoint()
    /// The HTTP API and the sockets' commands.
    let api: API
    /// The core and the commit pipeline around it.
    let runner: CoreRunner

    /// The log's durable consumers (`--log-tap`, `config.logConsumers`); nil when there are none.
    var consumers: LogConsumerRunner?
    /// Sends the push outbox (when a push provider is configured).
    var pushDispatcher: PushDispatcher?
    /// Sends the webhook outbox (when `config.webhooks.transport` is set).
    var webhookDispatcher: WebhookDispatcher?
    /// Takes deleted words off the disk (`POST /v1/admin/purge`, and the purge consumer by `--purge-within`).
    let purger: Purger
    /// The purge as a log consumer: stopped before the consumers, so a wait for a purge's time ends at once.
    var purgeConsumer: PurgeConsumer?

    /// Cluster mode's parts (nil: one process alone).
    let cluster: ClusterSetup?
    var clusterBroker: (any ClusterBroker)?
    private var leaseTimer: Timer?
    private var leaseChecking = false

    private var listener: TCPListener?
    private var sweepTimer: Timer?
    /// The sweep's pass under way, a slice of the connections per loop iteration (`Server+Sweep`).
    var sweepPass = SweepPass()
    /// How long each loop iteration kept the loop from polling (`spotter_loop_*` at `/metrics`).
    private(set) var iterationMeter: IterationMeter?
    lazy var loopMetrics = LoopMetrics(metrics)
    private var checkpointTimer: Timer?
    private var signalWatchers: [SignalWatcher] = []
    /// New connections speak TLS made from this when set (`Server+TLS`); replaced on a reload. Loop thread.
    var tlsContext: TLSContext?
    private(set) var connections: [UInt64: Connection] = [:]
    /// App sockets by account, for the bound on what one account's sockets hold together.
    let outbound: OutboundLedger
    private var nextConnectionID: UInt64 = 1
    /// Every connection's actions of one read (one read at a time on the loop); a burst's large buffer is not kept.
    var actionBuffer = WebSocketSession.ActionBuffer(keptCapacity: 64)
    private(set) var startedAt: UInt64 = 0
    private(set) var isDraining = false
    private var drainDeadline: UInt64 = 0
    /// `Server+Operations`: the second listener (`--metrics-listen`), whether the broker is connected, and the
    /// drain announced by `/readyz` before it begins (`--drain-delay`).
    var metricsListener: TCPListener?
    var brokerConnected = true
    var drainAnnounced = false
    var drainDelayTimer: Timer?
    /// `--loops N` (`Server+SocketLoops`): the loops carrying app sockets, each with what this loop posts to it,
    /// the turn of the next socket to move, and where they post back.
    var socketLoops: [(socketLoop: SocketLoop, outbox: LoopOutbox<ToSocketLoop>)] = []
    var socketLoopTurn = -1
    var socketMailbox: LoopMailbox<FromSocketLoop>?

    /// - Parameters:
    ///   - store: the SQLite database, opened by the caller before the loop runs.
    ///   - otpSender: where sign-in codes go; the default writes them to the log.
    ///   - emailSender: where codes confirming a new email address go; the default writes them to the log.
    public convenience init(config: ServerConfig, store: Store, logger: Logger = Logger(label: "spotter"),
                            otpSender: (any OTPSender)? = nil, emailSender: (any OTPSender)? = nil) {
        self.init(config: config, storage: SQLiteStorage(store: store, filesDirectory: config.dataDirectory + "/attachments"),
                  logger: logger, otpSender: otpSender, emailSender: emailSender)
    }

    /// - Parameters:
    ///   - storage: where everything is kept (SQLite or PostgreSQL), opened by the caller before the loop runs.
    ///   - cluster: the broker between processes, the shared log to follow and the timer lease (cluster mode).
    public init(config: ServerConfig, storage: any ServerStorage, logger: Logger = Logger(label: "spotter"),
                otpSender: (any OTPSender)? = nil, emailSender: (any OTPSender)? = nil, cluster: ClusterSetup? = nil) {
        self.config = config
        self.storage = storage
        self.cluster = cluster
        self.logger = logger
        handshakePolicy = HandshakePolicy(allowedOrigins: config.allowedOrigins)
        let secret = config.tokenSecret ?? SecureRandom.bytes(32)
        let directory: UserDirectory
        do {
            directory = try storage.loadUsers()
        } catch {
            logger.error("could not load the users; connects read them from the database", metadata: ["error": "\(error)"])
            directory = UserDirectory()
        }
        // One writer for every write: the chat log's appends and the accounts' changes share its commits.
        let accounts = AccountStore(engine: storage.accounts, directory: directory)
        let services = APIServices(
            accounts: accounts,
            // Attachments beside the database; an in-memory store (tests) keeps them in a temporary folder.
            attachments: AttachmentStore(engine: storage.accounts, directory: storage.filesDirectory
                ?? "/tmp/spotter-attachments-\(getpid())-\(SecureRandom.uuid())"),
            hasher: PasswordHasher(logN: config.passwordHashLogN),
            signer: AccessTokenSigner(secret: secret), otpSender: otpSender ?? LogOTPSender(logger: logger),
            emailSender: emailSender ?? LogOTPSender(logger: logger, channel: "email"),
            accessLifetime: config.accessTokenLifetimeSeconds, refreshLifetime: config.refreshTokenLifetimeSeconds,
            otpPepper: Digest.sha256Hex("otp|" + String(decoding: secret, as: UTF8.self)),
            revealOTPCodes: config.development && otpSender == nil,
            revealEmailCodes: config.development && emailSender == nil, clock: config.clock,
            identity: IdentityVerification(settings: config.identity, logger: logger))
        // Access tokens of sessions revoked before a restart must stay refused.
        var revoked: [RevokedSession] = []
        do {
            revoked = try accounts.sessionsRevoked(since: config.clock.now - config.accessTokenLifetimeSeconds - 60)
        } catch {
            logger.error("could not load recent revocations; their access tokens work until they expire",
                         metadata: ["error": "\(error)"])
        }
        web = Self.webFiles(config.webRoot, logger)
        outbound = OutboundLedger(maxAccountBytes: config.maxAccountOutboundBytes)
        runner = CoreRunner(config: config, loop: loop, log: storage.chat, directory: directory, logger: logger, metrics: metrics)
        let metered = config.tiers
        runner.aiGenerations = { userID, now in try? accounts.aiGenerations(userID: userID, metered: metered, now: now) }
        api = API(server: ServerParts(config: config, loop: loop, logger: logger, metrics: metrics, runner: runner,
                                      outbound: outbound), services: services, revoked: revoked,
                  sharedLimits: storage.rateLimits)
        purger = Purger(storage: storage, attachments: services.attachments, metrics: metrics, logger: logger)
        api.server.purger = purger
        // Sessions another process revoked (its `account` record followed): refused and closed here too.
        let made = api
        runner.revokedElsewhere = { [weak made] sessions in made?.learnRevocations(sessions) }
    }

    private var chatLog: any ChatStore { storage.chat }
    /// The JavaScript client and the console.
    let web: WebFiles

    private static func webFiles(_ root: String?, _ logger: Logger) -> WebFiles {
        guard let root else { return .embedded }
        do {
            let files = try WebFiles.load(root: root, read: readWholeFile)
            logger.notice("serving /clients/ and /console/ from a folder", metadata: ["root": "\(root)"])
            return files
        } catch {
            logger.error("cannot read the web root; serving the built-in files", metadata: ["root": "\(root)", "error": "\(error)"])
            return .embedded
        }
    }

    /// The bound port (after `start()`).
    public private(set) var port = 0

    /// Binds the listening socket. Call before `run()`, on the thread that will run it.
    /// Loads the chat state first (the checkpointed views and the log after them).
    public func start(handleSignals: Bool = false) throws {
        let loaded = try chatLog.load()
        var broker: any Broker = InProcessBroker()
        if let cluster {
            let made = try cluster.makeBroker(loop)
            clusterBroker = made
            broker = made
        }
        runner.install(loaded, broker: broker)
        if let cluster, let clusterBroker {
            let follower = LogFollower(runner: runner, broker: clusterBroker, log: cluster.log, position: loaded.position)
            runner.follower = follower
            follower.interest.everyThread = cluster.followEveryThread
            try follower.start(loop: loop)
            logger.info("following the cluster's log", metadata: ["from": "\(loaded.position)"])
        }
        let consumerList = try makeConsumers()  // a tap that cannot be opened stops the start here
        if let lease = cluster?.lease {
            runner.holdsTimers = false
            startLease(lease)
        }
        logger.info("chat state loaded", metadata: [
            "threads": "\(runner.chat.threadCount)", "replayed": "\(loaded.tail.count)"])
        // A peer that vanished must surface as EPIPE from write, not kill the process.
        signal(SIGPIPE, SIG_IGN)
        try loadTLS()  // a certificate that cannot be used stops the start here
        let listener = TCPListener(loop: loop)
        do {
            try listener.listen(host: config.host, port: config.port, backlog: config.backlog) { [weak self] tcp in
                self?.accept(tcp)
            }
        } catch {
            listener.close()
            throw error
        }
        self.listener = listener
        port = listener.port
        do {
            try startOperatorParts()
        } catch {
            listener.close()
            throw error
        }
        loop.everyIteration { [outbound] in outbound.checkBackedUpAccounts() }
        iterationMeter = IterationMeter(loop: loop)
        removeLeftoverUploads()
        startedAt = loop.nowMilliseconds
        let timer = Timer(loop: loop)
        timer.start(after: 1000, repeat: 1000) { [weak self] in self?.sweep() }
        sweepTimer = timer
        let checkpoint = Timer(loop: loop)
        let every = max(10, config.checkpointIntervalMilliseconds)
        checkpoint.start(after: every, repeat: every) { [weak self] in
            guard let self else { return }
            runner.periodicCheckpoint()
            // A slice of the warm threads per tick (`ChatState.dropIdleWindows(…, atMost:)`), not all of them.
            runner.core.dropIdleWindows(nowMilliseconds: loop.nowMilliseconds, idleMilliseconds: 10 * 60 * 1000, atMost: 1024)
        }
        checkpointTimer = checkpoint
        runner.startTimers()
        startConsumers(consumerList)
        if handleSignals {
            // A parent may have started us with these blocked (a test
            // runner's thread did); a server that ignores SIGTERM cannot be stopped.
            var wanted = sigset_t()
            sigemptyset(&wanted)
            sigaddset(&wanted, SIGINT)
            sigaddset(&wanted, SIGTERM)
            sigaddset(&wanted, SIGHUP)
            pthread_sigmask(SIG_UNBLOCK, &wanted, nil)
            if let watcher = watchForTLSReload() { signalWatchers.append(watcher) }
            for signal in [SIGINT, SIGTERM] {
                signalWatchers.append(SignalWatcher(loop: loop, signal: signal) { [weak self] number in
                    guard let self else { return }
                    logger.info("signal received, shutting down", metadata: ["signal": "\(number)"])
                    shutdownRequested()
                })
            }
        }
        // Last: what this loop posts to the socket loops goes after every other hook of an iteration has run.
        startSocketLoops()
        logger.info("listening", metadata: ["host": "\(config.host)", "port": "\(port)", "echo": "\(config.echoEnabled)"])
    }

    /// Runs the loop on this thread until shutdown has finished, then frees every handle.
    public func run() {
        loop.run()
        stopSocketLoops()
        purgeConsumer?.stop()
        if consumers?.stop() == false { logger.warning("a log consumer did not stop in time; its batch comes again at the next start") }
        if pushDispatcher?.stop() == false { logger.warning("the push dispatcher did not stop in time; its pushes go at the next start") }
        if webhookDispatcher?.stop() == false { logger.warning("the webhook dispatcher did not stop in time; its deliveries go at the next start") }
        // Commit what is queued, and the views; acknowledgements to sockets already closed are dropped.
        runner.checkpointBeforeStop()
        runner.follower?.stop()
        clusterBroker?.close()  // the other processes drop this one's users at once
        cluster?.lease?.release()
        storage.stop()
        loop.closeAllHandles()
        connections = [:]  // each holds the server: let them go with their handles
        logger.info("stopped")
    }

    /// Runs one pass of the session timers now, on the loop, and returns once it has been decided (tests: with a
    /// `TestClock` moved past what is due, instead of waiting for the once-a-second pass). Safe from any thread.
    public func tickTimers() {
        let done = DispatchSemaphore(value: 0)
        loop.execute { [self] in
            runner.tick()
            runner.pipeline.flush()
            done.signal()
        }
        done.wait()
    }

    /// Starts a graceful shutdown. Safe from any thread.
    public func requestShutdown() {
        loop.execute { [self] in shutdownRequested() }
    }

    // MARK: - Connections

    func accept(_ tcp: TCPConnection, metricsListener: Bool = false) {
        guard !isDraining else {
            tcp.close()
            return
        }
        if httpPhaseCount >= config.maxHTTPConnections, !admitHTTPConnection() {
            metrics.httpConnectionsEvicted.increment()
            tcp.close()  // every HTTP-phase connection is busy with a request: refuse the newcomer
            return
        }
        let id = nextConnectionID
        nextConnectionID += 1
        tcp.setSendBufferSize(config.socketSendBufferBytes)
        guard attachTLS(to: tcp) else {
            tcp.close()
            return
        }
        let connection = Connection(id: id, tcp: tcp, server: self, now: loop.nowMilliseconds)
        connection.onMetricsListener = metricsListener
        connections[id] = connection
        httpPhaseCount += 1
        metrics.connectionsAccepted.increment()
        metrics.connectionsOpen.increment()
        connection.start()
    }

    /// Makes room under `maxHTTPConnections` by closing the oldest HTTP-phase
    /// connection that waits for a request. False if there is none to close.
    /// (Upgraded sockets are signed in and do not count.)
    private func admitHTTPConnection() -> Bool {
        var oldest: Connection?
        for connection in connections.values where connection.isWaitingForRequest {
            if connection.id < (oldest?.id ?? .max) { oldest = connection }
        }
        guard let oldest else { return false }
        logger.debug("HTTP-phase bound reached; closing the oldest waiting connection", metadata: ["connection": "\(oldest.id)"])
        oldest.evict()
        return true
    }

    func connectionClosed(_ connection: Connection) {
        connections[connection.id] = nil
        metrics.connectionsOpen.decrement()
        if isDraining && connections.isEmpty { finishShutdown() }
    }

    var openConnectionCount: Int { connections.count }

    /// Connections still in the HTTP phase (bounded by `maxHTTPConnections`).
    private(set) var httpPhaseCount = 0

    func leftHTTPPhase() { httpPhaseCount -= 1 }

    /// Where upload bodies are streamed while they arrive (`<attachments>/incoming`); leftovers untouched for an hour are removed at start.
    public var incomingUploadsDirectory: String { api.services.attachments.directory + "/incoming" }

    private func sweep() {
        let now = loop.nowMilliseconds
        api.pruneLimiters()
        if runner.follower != nil { api.pollRevocations() }  // the cluster's safety net for a lost `account` record
        beginSweepPass()
        if isDraining && now >= drainDeadline {
            logger.warning("shutdown grace elapsed; dropping connections", metadata: ["open": "\(connections.count)"])
            for connection in connections.values { connection.tcp.close() }
            finishShutdown()
        }
    }

    // MARK: - Shutdown

    func beginShutdown() {
        guard !isDraining else { return }
        isDraining = true
        drainDelayTimer?.close()
        metricsListener?.close()
        drainDeadline = loop.nowMilliseconds + UInt64(config.shutdownGraceSeconds) * 1000
        listener?.close()
        logger.info("draining", metadata: ["open": "\(connections.count)"])
        // Check the drain more often than the sweep does.
        sweepTimer?.start(after: 50, repeat: 50) { [weak self] in self?.sweep() }
        // Each client is told to wait a different 1-10 s, so a restart does
        // not bring every phone back in the same millisecond.
        for connection in connections.values {
            connection.close(.goingAway, reason: "server restarting; retry_after_ms=\(Int.random(in: 1000...10_000))")
        }
        if connections.isEmpty { finishShutdown() }
    }

    private var finished = false

    /// Asks for the timer lease every 2 s (off the loop: it is a database call); a process that loses it (its
    /// connection broke) stops firing timers, one that gets it starts.
    private func startLease(_ lease: any TimerLease) {
        let timer = Timer(loop: loop)
        timer.start(after: 0, repeat: 2000) { [weak self] in
            guard let self else { return }
            guard !leaseChecking else { return }
            leaseChecking = true
            loop.runBlocking({ lease.hold() }, then: { [weak self] held in
                guard let self else { return }
                leaseChecking = false
                let wasHeld = runner.holdsTimers
                // Its holder applies every record: stale threads are read first (`CoreRunner+Interest`).
                runner.leaseChanged(held) { [weak self] in
                    guard let self else { return }
                    if held != wasHeld { logger.notice(held ? "holding the session timers" : "session timers left to another process") }
                    consumers?.setActive(held)
                    pushDispatcher?.setActive(held)
                    webhookDispatcher?.setActive(held)
                }
            })
        }
        timer.unref()
        leaseTimer = timer
    }

    private func finishShutdown() {
        guard !finished else { return }
        finished = true
        sweepTimer?.close()
        checkpointTimer?.close()
        leaseTimer?.close()
        for watcher in signalWatchers { watcher.close() }
        loop.stop()
    }
}
