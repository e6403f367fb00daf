import EventLoop
import Histogram
import WebSocket

#if canImport(Glibc)
import Glibc
import LoadSupport
#endif

/// Drives one scenario on one loop on the calling thread. Loop thread only.
///
/// Everything is bounded: connects by `--connect-timeout`, the scenario by
/// its phases' timers, and the whole run by `--max-run-seconds`.
final class Runner {
    let config: LoadConfig
    let accounts: Provisioned
    let loop = Loop()
    /// One address per `config.ports`; a socket connects to its `server`'s.
    private let targets: [SocketAddress]
    private let sources: [SocketAddress]
    /// The server processes, sampled as one (nil without --server-pid(s)).
    let probe: ProcessGroupProbe?
    private(set) var clients: [LoadClient] = []
    /// Every client's actions of one read.
    let actions = LoopActionBuffer()
    private var ticker: Timer?
    private var timers: [Timer] = []
    private var finished = false
    let runStart = monotonicNanos()
    var result: ScenarioResult
    /// The `sessions` scenario's bookkeeping (nil in the others).
    var sessionsDriver: SessionsDriver?
    /// The `ceiling` scenario's next rate.
    var ceilingSearch = CeilingSearch(factor: 1.5, step: 0, maximum: 0, refinements: 0)

    // MARK: Threads and their sequence checks

    struct ThreadState {
        let id: String
        let coach: Int   // socket index
        let client: Int  // socket index
        var seen: [[Bool]] = [[false], [false]]  // [side][seq]: 0 coach, 1 client
        var lastSeen: [Int64] = [0, 0]
        var acked: [(seq: Int64, byCoach: Bool)] = []
        var lastSeq: Int64 = 0
        var coachRead: Int64 = 0
        var coachDirty = false
    }
    var threads: [ThreadState] = []
    private(set) var threadIndex: [String: Int] = [:]

    // MARK: Connect queue

    private var queue: [(index: Int, notBefore: UInt64)] = []
    private var queueHead = 0
    private var pendingConnects = 0
    private var launching = false
    private var expectedSettles = 0
    private var settled = 0
    private var onAllSettled: (() -> Void)?
    private var connectHistogram = Histogram<UInt64>(highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: .three)
    private var firstConnectAt: UInt64 = 0
    private var lastHelloAt: UInt64 = 0
    private var opened = 0

    // MARK: Traffic

    private var sending = false
    private var rate = 0.0
    private var sendStart: UInt64 = 0
    private var sendsDue: UInt64 = 0
    private var roundRobin = 0
    private var senders: [Int] = []
    private var measuring = false
    private(set) var windowStart: UInt64 = .max
    private(set) var windowEnd: UInt64 = .max
    var ackHistogram = Histogram<UInt64>(highestTrackableValue: 120_000_000, numberOfSignificantValueDigits: .three)
    var deliveryHistogram = Histogram<UInt64>(highestTrackableValue: 120_000_000, numberOfSignificantValueDigits: .three)
    private var sentInWindow: UInt64 = 0
    private var ackedInWindow: UInt64 = 0
    private var deliveredInWindow: UInt64 = 0
    var skippedSends: UInt64 = 0
    private(set) var ackedTotal: UInt64 = 0
    private(set) var peerDeliveredTotal: UInt64 = 0
    private var serverCPUStart: Double?
    private var ownCPUStart = 0.0

    // MARK: Checks and errors

    var seqDuplicates = 0
    var seqOutOfOrder = 0
    var contentDuplicates = 0
    var cursorGaps = 0
    var cursorDuplicates = 0
    var overlapDiscarded = 0
    var connectFailures = 0
    var dropped = 0
    var commandErrors = 0
    var protocolErrors = 0
    var reasons: [String: Int] = [:]
    private var expectingDrops = false
    /// `notify`: the clients (side 1) hold no socket, so nothing they should have seen counts as lost or a hole.
    var offlineSide: Int?

    // MARK: Reconnect storm

    private var resumeExpected = 0
    private var resumedCount = 0
    private var replayedEvents = 0
    private var dropAt: UInt64 = 0
    private var allHelloAt: UInt64 = 0
    private var allResumedAt: UInt64 = 0
    private var onAllResumed: (() -> Void)?

    init(config: LoadConfig, accounts: Provisioned, result: ScenarioResult) throws {
        self.config = config
        self.accounts = accounts
        self.result = result
        targets = try config.ports.map { try SocketAddress(host: config.host, port: $0) }
        sources = config.sourceAddresses > 1
            ? try (0..<config.sourceAddresses).map { try SocketAddress(host: "127.0.0.\(1 + $0)", port: 0) }
            : []
        probe = config.serverPIDs.isEmpty ? nil : ProcessGroupProbe(pids: config.serverPIDs)
        buildClients()
    }

    /// Sockets in the order coach0, client0(of coach0), ..., so that a
    /// round robin over them alternates coaches and clients in chat.
    /// Coach i's socket goes to server `coachServer(i)`, its clients' to
    /// `clientServer(i)` (the same one unless --ports names several).
    private func buildClients() {
        var coachSocket: [Int] = []
        func add(_ account: Provisioned.Account, coach: Bool, server: Int) -> Int {
            let client = LoadClient(
                index: clients.count, isCoach: coach, userID: account.id, token: account.token, server: server, runner: self)
            clients.append(client)
            return client.index
        }
        if accounts.clients.count == accounts.coaches.count {
            // Chat: coach i, then their one client, so a round robin alternates roles.
            for (i, coach) in accounts.coaches.enumerated() {
                coachSocket.append(add(coach, coach: true, server: config.coachServer(i)))
                let clientSocket = add(accounts.clients[i], coach: false, server: config.clientServer(i))
                addThread(accounts.clients[i], coachSocket: coachSocket, clientSocket: clientSocket)
            }
        } else {
            for (i, coach) in accounts.coaches.enumerated() { coachSocket.append(add(coach, coach: true, server: config.coachServer(i))) }
            for account in accounts.clients {
                let clientSocket = add(account, coach: false, server: config.clientServer(account.coachIndex ?? 0))
                addThread(account, coachSocket: coachSocket, clientSocket: clientSocket)
            }
        }
    }

    private func addThread(_ account: Provisioned.Account, coachSocket: [Int], clientSocket: Int) {
        guard let id = account.threadID, let coachIndex = account.coachIndex else { return }
        let t = threads.count
        threads.append(ThreadState(id: id, coach: coachSocket[coachIndex], client: clientSocket))
        threadIndex[id] = t
        clients[coachSocket[coachIndex]].threads.append(t)
        clients[clientSocket].threads.append(t)
    }

    // MARK: - Running

    func run(_ start: @escaping () -> Void) {
        let ticker = Timer(loop: loop)
        ticker.start(after: 5, repeat: 5) { [unowned self] in onTick() }
        self.ticker = ticker
        after(config.maxRunSeconds) { [unowned self] in
            note("run stopped at --max-run-seconds \(fixed(config.maxRunSeconds, 0))")
            result.timedOut = true
            finish()
        }
        start()
        loop.run()
        loop.closeAllHandles()
    }

    /// A one-shot timer.
    func after(_ seconds: Double, _ body: @escaping () -> Void) {
        let timer = Timer(loop: loop)
        timers.append(timer)
        timer.start(after: milliseconds(seconds)) { body() }
    }

    var nowSeconds: Double { seconds(runStart, monotonicNanos()) }

    func finish() {
        guard !finished else { return }
        finished = true
        sending = false
        for client in clients { client.sendClose() }
        // Let the close frames leave, then stop.
        let stopper = Timer(loop: loop)
        timers.append(stopper)
        stopper.start(after: 300) { [unowned self] in
            for client in clients { client.forceClose() }
            ticker?.close()
            for timer in timers { timer.close() }
            loop.stop()
        }
    }

    private var tickCount = 0
    private var onTickHooks: [() -> Void] = []
    func everyTick(_ body: @escaping () -> Void) { onTickHooks.append(body) }

    private func onTick() {
        tickCount += 1
        launchMore()
        if tickCount % 50 == 0 { checkConnectTimeouts() }
        if sending { pace() }
        for hook in onTickHooks { hook() }
    }

    // MARK: - Connecting

    /// Connects `indices`, each not before its `notBefore` (monotonic ns); `then` once every one has settled.
    func connect(_ indices: [(Int, UInt64)], then: @escaping () -> Void) {
        queue = indices.sorted { $0.1 < $1.1 }.map { (index: $0.0, notBefore: $0.1) }
        queueHead = 0
        expectedSettles = indices.count
        settled = 0
        opened = 0
        firstConnectAt = 0
        lastHelloAt = 0
        onAllSettled = then
        connectHistogram.reset()
        if indices.isEmpty { then() } else { launchMore() }
    }

    private func launchMore() {
        guard !launching else { return }
        launching = true
        defer { launching = false }
        let now = monotonicNanos()
        while pendingConnects < config.maxPendingConnects && queueHead < queue.count && queue[queueHead].notBefore <= now {
            let index = queue[queueHead].index
            queueHead += 1
            pendingConnects += 1
            if firstConnectAt == 0 { firstConnectAt = now }
            let source = sources.isEmpty ? nil : sources[index % sources.count]
            clients[index].connect(to: targets[clients[index].server], from: source)
        }
    }

    private func checkConnectTimeouts() {
        let now = loop.nowMilliseconds
        let limit = milliseconds(config.connectTimeout)
        for client in clients where client.isPending && now &- client.startedAtMs >= limit {
            client.fail("connect+hello timed out after \(fixed(config.connectTimeout, 0)) s")
        }
    }

    func connectSettled(_ client: LoadClient, failure: String?) {
        pendingConnects -= 1
        settled += 1
        let now = monotonicNanos()
        if let failure {
            connectFailures += 1
            note(failure)
        } else {
            opened += 1
            lastHelloAt = now
            connectHistogram.record(min((now &- client.startedAtNanos) / 1000, connectHistogram.highestTrackableValue))
        }
        if settled == expectedSettles, let done = onAllSettled {
            onAllSettled = nil
            done()
        } else {
            launchMore()
        }
    }

    /// Connect statistics of the last `connect` call.
    func connectSummary(requested: Int) -> ConnectSummary {
        let span = lastHelloAt > firstConnectAt ? seconds(firstConnectAt, lastHelloAt) : 0
        return ConnectSummary(
            requested: requested, opened: opened, failures: connectFailures, seconds: span,
            ratePerSecond: span > 0 ? Double(opened) / span : 0, latencyMicros: LatencySummary(connectHistogram))
    }

    // MARK: - Traffic

    /// Starts open-loop sending at `rate` msgs/s over `senders` (socket indexes, round robin).
    func startSending(rate: Double, senders: [Int]) {
        self.rate = rate
        self.senders = senders
        sendStart = monotonicNanos()
        sendsDue = 0
        sending = true
    }

    /// Starts open-loop actions at `rate` per second: `action` is called once per action due (`sessions`).
    func startActions(rate: Double, _ action: @escaping () -> Void) {
        paceAction = action
        startSending(rate: rate, senders: [0])
    }

    private var paceAction: (() -> Void)?

    func stopSending() { sending = false }

    /// Calls `then` once `condition` holds, or after `limit` s.
    func waitFor(limit: Double, _ condition: @escaping () -> Bool, then: @escaping () -> Void) {
        let deadline = monotonicNanos() + UInt64(limit * 1e9)
        var done = false
        everyTick {
            guard !done, condition() || monotonicNanos() >= deadline else { return }
            done = true
            then()
        }
    }

    private func pace() {
        let now = monotonicNanos()
        let due = UInt64(rate * seconds(sendStart, now))
        guard due > sendsDue, !senders.isEmpty else { return }
        var budget = due - sendsDue
        sendsDue = due
        // Never more than 100 ms of sends in one tick (a stalled generator does not burst).
        let cap = UInt64(max(1, rate / 10))
        if budget > cap {
            skippedSends += budget - cap
            note("generator behind: sends skipped")
            budget = cap
        }
        if let paceAction {
            for _ in 0..<budget { paceAction() }
            return
        }
        while budget > 0 {
            budget -= 1
            let client = clients[senders[roundRobin % senders.count]]
            roundRobin &+= 1
            guard client.isLive, client.pendingCount < config.maxPendingPerSocket, !client.threads.isEmpty else {
                skippedSends += 1
                continue
            }
            let t = client.threads.count == 1 ? client.threads[0] : client.threads[roundRobin % client.threads.count]
            client.sendMessage(thread: t, threadID: threads[t].id)
        }
    }

    func beginWindow() {
        ackHistogram.reset()
        deliveryHistogram.reset()
        sentInWindow = 0
        ackedInWindow = 0
        deliveredInWindow = 0
        skippedSends = 0
        windowStart = monotonicNanos()
        windowEnd = .max
        measuring = true
        serverCPUStart = probe?.cpuSeconds()
        ownCPUStart = ownCPUSeconds()
    }

    /// Ends the window and returns its traffic figures (latencies of sends made in it).
    func endWindow() -> WindowFigures {
        windowEnd = monotonicNanos()
        measuring = false
        let length = seconds(windowStart, windowEnd)
        let serverCPU = probe?.cpuSeconds().flatMap { end in serverCPUStart.map { end - $0 } }
        let ownCPU = ownCPUSeconds() - ownCPUStart
        return WindowFigures(
            targetRate: rate, seconds: length, sent: sentInWindow, skipped: skippedSends,
            serverCPUSeconds: serverCPU, generatorCPUSeconds: ownCPU)
    }

    /// Adds what arrived after the window (acks and deliveries of sends made in it) once drained.
    func completeWindow(_ window: WindowFigures) -> TrafficSummary {
        let delivered = deliveredInWindow
        return TrafficSummary(
            targetRatePerSecond: window.targetRate, windowSeconds: window.seconds, sent: window.sent,
            skippedSends: window.skipped, acked: ackedInWindow,
            ackedPerSecond: window.seconds > 0 ? Double(ackedInWindow) / window.seconds : 0,
            deliveredToPeer: delivered,
            deliveredPerSecond: window.seconds > 0 ? Double(delivered) / window.seconds : 0,
            ackLatencyMicros: LatencySummary(ackHistogram), deliveryLatencyMicros: LatencySummary(deliveryHistogram),
            serverCPUSeconds: window.serverCPUSeconds,
            serverCPUMicrosPerDeliveredMessage: window.serverCPUSeconds.flatMap { delivered > 0 ? $0 * 1e6 / Double(delivered) : nil },
            generatorCPUSeconds: window.generatorCPUSeconds,
            generatorCoreShare: window.seconds > 0 ? window.generatorCPUSeconds / window.seconds : 0)
    }

    /// Calls `then` once nothing is outstanding (every send answered, every acked message at its peer), at most `limit` s.
    func drain(limit: Double, then: @escaping (Bool) -> Void) {
        let deadline = monotonicNanos() + UInt64(limit * 1e9)
        var done = false
        everyTick { [unowned self] in
            guard !done, tickCount % 4 == 0 else { return }
            let settled = outstandingSends == 0 && peerDeliveredTotal >= ackedTotal
            if settled || monotonicNanos() >= deadline {
                done = true
                then(settled)
            }
        }
    }

    var outstandingSends: Int { clients.reduce(0) { $0 + $1.pendingCount } }

    // MARK: - Client callbacks

    /// Every message.send (pacer or fan-in coach) counts here.
    func noteSent() { if measuring { sentInWindow += 1 } }

    func sendAcked(by client: LoadClient, thread t: Int, seq: Int64, sentAt: UInt64) {
        ackedTotal += 1
        threads[t].acked.append((seq, client.isCoach))
        threads[t].lastSeq = max(threads[t].lastSeq, seq)
        if client.isCoach { threads[t].coachRead = max(threads[t].coachRead, seq) }
        if sentAt >= windowStart && sentAt < windowEnd {
            ackedInWindow += 1
            ackHistogram.record(min((monotonicNanos() &- sentAt) / 1000, ackHistogram.highestTrackableValue))
        }
    }

    func messageSeen(by client: LoadClient, threadID: String, seq: Int64, fromSelf: Bool, stamp: UInt64?) {
        guard let t = threadIndex[threadID], seq > 0 else { return protocolError("message on an unknown thread") }
        let side = client.isCoach ? 0 : 1
        let q = Int(seq)
        if threads[t].seen[side].count <= q {
            threads[t].seen[side].append(contentsOf: repeatElement(false, count: max(q + 1 - threads[t].seen[side].count, 64)))
        }
        if threads[t].seen[side][q] {
            seqDuplicates += 1
            note("message seq seen twice by a receiver")
            return
        }
        threads[t].seen[side][q] = true
        if seq != threads[t].lastSeen[side] + 1 { seqOutOfOrder += 1 }
        threads[t].lastSeen[side] = max(threads[t].lastSeen[side], seq)
        threads[t].lastSeq = max(threads[t].lastSeq, seq)
        guard !fromSelf else { return }
        peerDeliveredTotal += 1
        if client.isCoach { threads[t].coachDirty = true }
        if let stamp, stamp >= windowStart, stamp < windowEnd {
            deliveredInWindow += 1
            deliveryHistogram.record(min((monotonicNanos() &- stamp) / 1000, deliveryHistogram.highestTrackableValue))
        }
    }

    /// A send refused by its quota (the `quota` scenario): answered, nothing to deliver.
    func sendRefused(sentAt: UInt64) {
        if sentAt >= windowStart && sentAt < windowEnd {
            refusedInWindow += 1
            refusalHistogram.record(min((monotonicNanos() &- sentAt) / 1000, refusalHistogram.highestTrackableValue))
        }
    }

    private(set) var refusedInWindow: UInt64 = 0
    private(set) var refusalHistogram = Histogram<UInt64>(highestTrackableValue: 120_000_000, numberOfSignificantValueDigits: .three)

    func readAcked(by client: LoadClient, threadID: String?, readSeq: Int64?) {
        guard let threadID, let t = threadIndex[threadID], let readSeq else { return }
        threads[t].coachRead = max(threads[t].coachRead, readSeq)
    }

    var threadsAnswers: [Int: Int64] = [:]
    var threadsAnswerHook: ((LoadClient, Int64?) -> Void)?
    func threadsAnswered(by client: LoadClient, totalUnread: Int64?, scan: Scan) {
        // The result holds per-thread "unread" values too; total_unread is the last key of the result.
        threadsAnswerHook?(client, totalUnread)
    }

    func resumed(_ client: LoadClient, replayed: Int) {
        resumedCount += 1
        replayedEvents += replayed
        if resumedCount == resumeExpected {
            allResumedAt = monotonicNanos()
            onAllResumed?()
            onAllResumed = nil
        }
    }

    func clientLost(_ client: LoadClient, reason: String) {
        if expectingDrops { return }
        dropped += 1
        note(reason)
    }

    func commandFailed(_ code: String) {
        commandErrors += 1
        note("command error: \(code)")
    }

    func protocolError(_ reason: String) {
        protocolErrors += 1
        note(reason)
    }

    func noteOverlap() { overlapDiscarded += 1 }
    func cursorDuplicate() { cursorDuplicates += 1; note("event cursor repeated") }
    func cursorGap(_ missing: Int) { cursorGaps += missing; note("event cursor skipped") }
    func contentDuplicate() { contentDuplicates += 1; note("client_message_id stored twice") }

    func note(_ reason: String) { reasons[reason, default: 0] += 1 }

    // MARK: - Final checks

    /// Acked messages that never reached the peer, and holes in what each side saw.
    func integrity() -> IntegritySummary {
        var lost = 0, holes = 0
        for thread in threads {
            for (seq, byCoach) in thread.acked {
                let peer = byCoach ? 1 : 0
                if peer == offlineSide { continue }
                let q = Int(seq)
                if q >= thread.seen[peer].count || !thread.seen[peer][q] { lost += 1 }
            }
            for side in 0..<2 where side != offlineSide {
                let top = Int(thread.lastSeq)
                for q in stride(from: 1, through: top, by: 1) where q >= thread.seen[side].count || !thread.seen[side][q] { holes += 1 }
            }
        }
        return IntegritySummary(
            unanswered: outstandingSends, acked: ackedTotal, deliveredToPeer: peerDeliveredTotal, lost: lost, seqHoles: holes,
            seqDuplicates: seqDuplicates, seqOutOfOrder: seqOutOfOrder, contentDuplicates: contentDuplicates,
            cursorGaps: cursorGaps, cursorDuplicates: cursorDuplicates)
    }

    func errorSummary() -> ErrorSummary {
        let integrity = integrity()
        let total = connectFailures + dropped + commandErrors + protocolErrors + integrity.lost + integrity.seqHoles + integrity.unanswered
            + integrity.seqDuplicates + integrity.contentDuplicates + integrity.cursorGaps + integrity.cursorDuplicates
            + (result.timedOut ? 1 : 0)
        return ErrorSummary(
            total: total, connectFailures: connectFailures, droppedConnections: dropped, commandErrors: commandErrors,
            protocolErrors: protocolErrors, reasons: reasons)
    }

    // MARK: - Reconnect storm support

    /// Drops every open socket at once; each reconnects after a random delay in [0, jitter] and resumes.
    func storm(jitter: Double, onAllHello: @escaping () -> Void, onAllResumed: @escaping () -> Void) {
        expectingDrops = true
        let now = monotonicNanos()
        dropAt = now
        var indices: [(Int, UInt64)] = []
        for client in clients where client.isOpen {
            client.abortConnection()
            indices.append((client.index, now + UInt64(Double.random(in: 0...max(0, jitter)) * 1e9)))
        }
        resumeExpected = indices.count
        resumedCount = 0
        self.onAllResumed = onAllResumed
        connect(indices) { [unowned self] in
            allHelloAt = monotonicNanos()
            expectingDrops = false
            onAllHello()
        }
    }

    func stormFigures(dropped count: Int, jitter: Double) -> ReconnectSummary {
        ReconnectSummary(
            dropped: count, reconnected: opened, resumed: resumedCount, jitterSeconds: jitter,
            allHelloSeconds: allHelloAt > 0 ? seconds(dropAt, allHelloAt) : nil,
            recoverySeconds: allResumedAt > 0 ? seconds(dropAt, allResumedAt) : nil,
            replayedEvents: replayedEvents, overlapDiscarded: overlapDiscarded,
            reconnectLatencyMicros: LatencySummary(connectHistogram))
    }
}

struct WindowFigures {
    var targetRate: Double
    var seconds: Double
    var sent: UInt64
    var skipped: UInt64
    var serverCPUSeconds: Double?
    var generatorCPUSeconds: Double
}
