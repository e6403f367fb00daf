import EventLoop
import Histogram
import WebSocket

#if canImport(Glibc)
import Glibc
import LoadSupport
#endif

/// Runs the three phases on one loop on the calling thread:
/// connect (bounded concurrency) → idle (server RSS) → echo (warm-up, then
/// the measured window) → close 1000 to everyone, then stop. Loop thread only.
final class Runner {
    enum Phase { case connecting, idle, echo, closing, done }

    let config: BenchConfig
    let loop = Loop()
    private var clients: [BenchClient] = []
    private var phase = Phase.connecting
    private let target: SocketAddress
    private let sources: [SocketAddress]
    private let probe: ProcessProbe?
    private var tick: Timer?
    private var phaseTimer: Timer?
    /// Every client's actions of one read.
    let actions = LoopActionBuffer()

    // Connect phase.
    private var nextToLaunch = 0
    private var pending = 0
    private var settled = 0
    private var launching = false
    private var connectStart: UInt64 = 0
    private var connectEnd: UInt64 = 0
    private(set) var opened = 0

    // Echo phase.
    private(set) var isSending = false
    private var measuring = false
    private var histogram = Histogram<UInt64>(highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: .three)
    private var measuredEchoes: UInt64 = 0
    private var windowStart: UInt64 = 0
    private var windowEnd: UInt64 = 0
    private var serverCPUStart: Double?
    private var serverCPUEnd: Double?
    private var clientCPUStart = 0.0
    private var clientCPUEnd = 0.0
    private var closingOutstanding = 0

    // Server memory.
    private var rssBefore: Int?
    private var rssAfterIdle: Int?

    // Errors.
    private var connectFailures = 0
    private var mismatches = 0
    private var dropped = 0
    private var closeFailures = 0
    private var reasons: [String: Int] = [:]

    init(config: BenchConfig) throws {
        self.config = config
        target = try SocketAddress(host: config.host, port: config.port)
        // With one source address the kernel's default (127.0.0.1 for a
        // loopback target) is the same address, so skip the explicit bind.
        sources = config.sourceAddresses > 1
            ? try (0..<config.sourceAddresses).map { try SocketAddress(host: "127.0.0.\(1 + $0)", port: 0) }
            : []
        probe = config.serverPID.map { ProcessProbe(pid: $0) }
        clients.reserveCapacity(config.connections)
    }

    /// Runs everything; returns when the last phase is over and every handle is closed.
    func run() {
        rssBefore = probe?.residentBytes()
        let tick = Timer(loop: loop)
        tick.start(after: 250, repeat: 250) { [unowned self] in onTick() }
        self.tick = tick
        phaseTimer = Timer(loop: loop)
        connectStart = monotonicNanos()
        launchMore()
        loop.run()
        loop.closeAllHandles()
    }

    // MARK: - Phase 1: connect

    private func launchMore() {
        guard !launching else { return }  // a connect that fails at once re-enters through clientSettled
        launching = true
        defer { launching = false }
        while pending < config.maxPendingConnects && nextToLaunch < config.connections {
            let client = BenchClient(index: nextToLaunch, runner: self, messageBytes: config.messageBytes, inFlight: config.inFlight)
            clients.append(client)
            let source = sources.isEmpty ? nil : sources[nextToLaunch % sources.count]
            nextToLaunch += 1
            pending += 1
            client.connect(to: target, from: source)
        }
    }

    func clientSettled(_ client: BenchClient, failure: String?) {
        pending -= 1
        settled += 1
        if let failure {
            connectFailures += 1
            note(failure)
        } else {
            opened += 1
        }
        if settled == config.connections {
            connectPhaseDone()
        } else {
            launchMore()
        }
    }

    private func connectPhaseDone() {
        connectEnd = monotonicNanos()
        progress("connected \(opened) of \(config.connections) in \(fixed(seconds(connectStart, connectEnd), 2)) s; idle \(fixed(config.idleSeconds)) s")
        phase = .idle
        if opened == 0 {
            phaseTimer?.start(after: 0) { [unowned self] in finish() }
            return
        }
        phaseTimer?.start(after: milliseconds(config.idleSeconds)) { [unowned self] in startEcho() }
    }

    private func onTick() {
        guard phase == .connecting else { return }
        let now = loop.nowMilliseconds
        let limit = milliseconds(config.connectTimeoutSeconds)
        for client in clients where client.isPending && now &- client.startedAt >= limit {
            client.fail("connect+upgrade timed out after \(fixed(config.connectTimeoutSeconds)) s")
        }
    }

    // MARK: - Phase 2 and 3: idle, then echo

    private func startEcho() {
        rssAfterIdle = probe?.residentBytes()
        phase = .echo
        isSending = true
        progress("echo: \(fixed(config.warmupSeconds)) s warm-up, then \(fixed(config.durationSeconds)) s measured")
        if config.warmupSeconds <= 0 { beginWindow() }
        for client in clients where client.isOpen { client.startEcho() }
        if config.warmupSeconds > 0 {
            phaseTimer?.start(after: milliseconds(config.warmupSeconds)) { [unowned self] in beginWindow() }
        }
    }

    private func beginWindow() {
        histogram.reset()
        measuredEchoes = 0
        serverCPUStart = probe?.cpuSeconds()
        clientCPUStart = ownCPUSeconds()
        windowStart = monotonicNanos()
        measuring = true
        phaseTimer?.start(after: milliseconds(config.durationSeconds)) { [unowned self] in endWindow() }
    }

    private func endWindow() {
        windowEnd = monotonicNanos()
        measuring = false
        isSending = false
        serverCPUEnd = probe?.cpuSeconds()
        clientCPUEnd = ownCPUSeconds()
        phase = .closing
        for client in clients where client.isOpen {
            client.sendClose()
            closingOutstanding += 1
        }
        progress("closing \(closingOutstanding) connections")
        if closingOutstanding == 0 { return finish() }
        phaseTimer?.start(after: milliseconds(config.closeGraceSeconds)) { [unowned self] in closeGraceElapsed() }
    }

    func recordEcho(nanoseconds: UInt64) {
        guard measuring else { return }
        measuredEchoes += 1
        histogram.record(min(nanoseconds / 1000, histogram.highestTrackableValue))
    }

    // MARK: - Closing

    func clientClosed(_ client: BenchClient) {
        guard phase == .closing, client.closeInitiated else { return }
        closingOutstanding -= 1
        if closingOutstanding == 0 { finish() }
    }

    private func closeGraceElapsed() {
        for client in clients where client.isClosing {
            guard client.closeInitiated else {
                client.forceClose()  // closed by the server earlier, already counted as dropped
                continue
            }
            recordCloseFailure("no close handshake within \(fixed(config.closeGraceSeconds)) s")
            client.forceClose()
        }
        finish()
    }

    private func finish() {
        guard phase != .done else { return }
        phase = .done
        tick?.close()
        phaseTimer?.close()
        loop.stop()
    }

    // MARK: - Errors

    func clientLost(_ client: BenchClient, reason: String) {
        dropped += 1
        note(reason)
    }

    func recordMismatch(_ reason: String) {
        mismatches += 1
        note(reason)
    }

    func recordCloseFailure(_ reason: String) {
        closeFailures += 1
        note(reason)
    }

    private func note(_ reason: String) {
        reasons[reason, default: 0] += 1
    }

    // MARK: - Helpers

    private func progress(_ text: String) {
        var line = "[echo-bench] " + text + "\n"
        line.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
    }

    // MARK: - Results

    func results(startedAt: String, loadAverage: String, commandLine: String) -> BenchResults {
        let connectSeconds = seconds(connectStart, connectEnd)
        let window = seconds(windowStart, windowEnd)
        let latency = LatencySummary(histogram)
        let echoes = measuredEchoes
        let perMessage = { (cpu: Double) -> Double? in echoes > 0 ? cpu * 1e6 / Double(echoes) : nil }
        var server: ServerSummary?
        if let pid = config.serverPID {
            var summary = ServerSummary(pid: pid, rssBeforeConnectBytes: rssBefore, rssAfterIdleBytes: rssAfterIdle)
            if let before = rssBefore, let after = rssAfterIdle, opened > 0 {
                summary.rssPerIdleConnectionBytes = (after - before) / opened
            }
            if let start = serverCPUStart, let end = serverCPUEnd {
                summary.cpuSecondsMeasured = end - start
                summary.cpuMicrosPerMessage = perMessage(end - start)
            }
            server = summary
        }
        let errors = ErrorSummary(
            total: connectFailures + mismatches + dropped + closeFailures,
            connectFailures: connectFailures, payloadMismatches: mismatches,
            droppedConnections: dropped, closeFailures: closeFailures, reasons: reasons)
        return BenchResults(
            startedAt: startedAt, loadAverageBefore: loadAverage, commandLine: commandLine, config: config,
            connectionsOpened: opened, connectSeconds: connectSeconds,
            connectRatePerSecond: connectSeconds > 0 ? Double(opened) / connectSeconds : 0,
            measuredSeconds: window, messagesMeasured: measuredEchoes,
            messagesPerSecond: window > 0 ? Double(measuredEchoes) / window : 0,
            latencyMicros: latency, errors: errors, server: server,
            clientCpuSecondsMeasured: clientCPUEnd - clientCPUStart,
            clientCpuMicrosPerMessage: perMessage(clientCPUEnd - clientCPUStart))
    }
}
