import EventLoop
import LoadSupport

/// The scenarios, as phases chained by timers on the runner's loop.
extension Runner {
    private var everyone: [(Int, UInt64)] { clients.indices.map { ($0, 0) } }

    /// Connects every socket (`only`: those sockets), then `then`.
    func connectEveryone(only: [Int]? = nil, _ then: @escaping () -> Void) {
        result.server = probe.map { ServerSummary(pids: $0.pids, rssBeforeConnectBytes: $0.residentBytes()) }
        let chosen = only.map { $0.map { ($0, UInt64(0)) } } ?? everyone
        progress("connecting \(chosen.count) sockets")
        connect(chosen) { [unowned self] in
            let summary = connectSummary(requested: chosen.count)
            result.connect = summary
            result.server?.rssAfterConnectBytes = probe?.residentBytes()
            progress("\(summary.opened) of \(summary.requested) sockets open in \(fixed(summary.seconds, 2)) s "
                + "(\(fixed(summary.ratePerSecond, 0))/s), \(summary.failures) failed")
            if summary.opened == 0 { return finish() }
            then()
        }
    }

    func closeOut() {
        result.integrity = integrity()
        result.errors = errorSummary()
        noteEndRSS()
        finish()
    }

    /// The servers' RSS now, summed and per process, as the end figures.
    private func noteEndRSS() {
        let each = probe?.residentBytesEach()
        result.server?.rssEndBytesPerProcess = each
        result.server?.rssEndBytes = each?.reduce(0, +)
    }

    // MARK: - chat

    func runChat() {
        connectEveryone { [unowned self] in
            progress("chat: \(fixed(config.rate, 0)) msgs/s, \(fixed(config.warmup, 0)) s warm-up + \(fixed(config.duration, 0)) s measured")
            startSending(rate: config.rate, senders: chatSenders())
            let sendStart = monotonicNanos()
            after(config.warmup) { [unowned self] in
                beginWindow()
                after(config.duration) { [unowned self] in
                    let window = endWindow()
                    stopSending()
                    progress("chat: window over, draining (at most \(fixed(config.grace, 0)) s)")
                    drain(limit: config.grace) { [unowned self] _ in
                        result.traffic = completeWindow(window)
                        result.overallAckedPerSecond = Double(ackedTotal) / seconds(sendStart, monotonicNanos())
                        closeOut()
                    }
                }
            }
        }
    }

    /// The sockets in the pacer's order (`--sender-order`); pair i is sockets 2i (coach) and 2i + 1 (client).
    private func chatSenders() -> [Int] {
        let pairs = clients.count / 2
        switch config.senderOrder {
        case .adjacent: return Array(clients.indices)
        case .spread: return (0..<pairs).flatMap { [2 * $0, 2 * (($0 + pairs / 2) % pairs) + 1] }
        }
    }

    // MARK: - idle

    func runIdle() {
        connectEveryone { [unowned self] in
            progress("idle: holding \(clients.count) sockets for \(fixed(config.hold, 0)) s")
            let cpuStart = probe?.cpuSeconds()
            let ownStart = ownCPUSeconds()
            after(config.hold) { [unowned self] in
                result.idleServerCPUSeconds = probe?.cpuSeconds().flatMap { end in cpuStart.map { end - $0 } }
                result.idleGeneratorCPUSeconds = ownCPUSeconds() - ownStart
                noteEndRSS()
                if let before = result.server?.rssBeforeConnectBytes, let end = result.server?.rssEndBytes,
                   let opened = result.connect?.opened, opened > 0 {
                    result.server?.rssGrowthPerSocketBytes = (end - before) / opened
                }
                result.idle = IdleSummary(
                    holdSeconds: config.hold, pongsSent: clients.reduce(0) { $0 + $1.pongsSent },
                    socketsOpenAtEnd: clients.filter(\.isOpen).count)
                result.errors = errorSummary()
                finish()
            }
        }
    }

    // MARK: - fan-in

    func runFanIn() {
        connectEveryone { [unowned self] in
            let coachSockets = clients.filter(\.isCoach).map(\.index)
            let clientSockets = clients.filter { !$0.isCoach }.map(\.index)
            progress("fan-in: \(coachSockets.count) coaches, \(clientSockets.count) clients sending \(fixed(config.rate, 0)) msgs/s; "
                + "coaches read and reply with \(fixed(config.coachCommandsPerSecond, 0)) commands/s each")
            var coachesActive = true
            var budget = [Double](repeating: 0, count: clients.count)
            var cursor = [Int](repeating: 0, count: clients.count)
            var ticks = 0
            everyTick { [unowned self] in
                ticks += 1
                guard coachesActive, ticks % 20 == 0 else { return }  // every 100 ms
                for c in coachSockets {
                    let coach = clients[c]
                    guard coach.isLive else { continue }
                    budget[c] = min(budget[c] + config.coachCommandsPerSecond / 10, 10)
                    let mine = coach.threads
                    var looked = 0
                    while budget[c] >= 2 && looked < mine.count {
                        let t = mine[cursor[c] % mine.count]
                        cursor[c] += 1
                        looked += 1
                        guard threads[t].coachDirty else { continue }
                        threads[t].coachDirty = false
                        coach.sendRead(threadID: threads[t].id, seq: threads[t].lastSeen[0])
                        coach.sendMessage(thread: t, threadID: threads[t].id)
                        budget[c] -= 2
                    }
                }
            }
            startSending(rate: config.rate, senders: clientSockets)
            after(config.warmup) { [unowned self] in
                beginWindow()
                after(config.duration) { [unowned self] in
                    let window = endWindow()
                    stopSending()
                    coachesActive = false
                    drain(limit: config.grace) { [unowned self] _ in
                        result.traffic = completeWindow(window)
                        checkUnread(coaches: coachSockets)
                    }
                }
            }
        }
    }

    /// Every coach asks `threads`; its total_unread must equal the generator's count.
    private func checkUnread(coaches: [Int]) {
        var expected: [Int: Int64] = [:]
        for c in coaches {
            expected[c] = clients[c].threads.reduce(0) { $0 + max(0, threads[$1].lastSeq - threads[$1].coachRead) }
        }
        var summary = FanInSummary(
            coaches: coaches.count, clientsPerCoach: coaches.isEmpty ? 0 : (clients.count - coaches.count) / coaches.count,
            coachesChecked: 0, coachesAnswered: 0, expectedTotalUnreadSum: expected.values.reduce(0, +),
            serverTotalUnreadSum: 0, threadsMismatches: 0, lastEventMismatches: 0, examples: [])
        for c in coaches where clients[c].isLive {
            summary.coachesChecked += 1
            let last = clients[c].lastTotalUnread ?? 0
            if last != expected[c] {
                summary.lastEventMismatches += 1
                if summary.examples.count < 5 { summary.examples.append("coach \(c): last unread event \(last), generator \(expected[c] ?? 0)") }
            }
        }
        var done = false
        let complete = { [unowned self] in
            guard !done else { return }
            done = true
            result.fanIn = summary
            closeOut()
        }
        threadsAnswerHook = { client, total in
            guard let want = expected[client.index] else { return }
            summary.coachesAnswered += 1
            summary.serverTotalUnreadSum += total ?? 0
            if total != want {
                summary.threadsMismatches += 1
                if summary.examples.count < 10 { summary.examples.append("coach \(client.index): threads total_unread \(total ?? -1), generator \(want)") }
            }
            if summary.coachesAnswered == summary.coachesChecked { complete() }
        }
        progress("fan-in: asking \(summary.coachesChecked) coaches for `threads`")
        for c in coaches where clients[c].isLive { clients[c].sendThreads() }
        if summary.coachesChecked == 0 { complete() }
        after(15) { complete() }
    }

    // MARK: - reconnect storm

    func runReconnect() {
        for client in clients { client.trackContent = true }
        connectEveryone { [unowned self] in
            progress("reconnect: chat at \(fixed(config.rate, 0)) msgs/s for \(fixed(config.warmup, 0)) s, then every socket drops")
            startSending(rate: config.rate, senders: Array(clients.indices))
            after(config.warmup) { [unowned self] in
                beginWindow()
                let count = clients.filter(\.isOpen).count
                var ended = false
                let end = { [unowned self] in
                    guard !ended else { return }
                    ended = true
                    let window = endWindow()
                    stopSending()
                    drain(limit: config.grace) { [unowned self] _ in
                        result.traffic = completeWindow(window)
                        result.reconnect = stormFigures(dropped: count, jitter: config.jitter)
                        closeOut()
                    }
                }
                storm(jitter: config.jitter, onAllHello: { [unowned self] in
                    progress("reconnect: every socket has its hello again")
                }, onAllResumed: { [unowned self] in
                    progress("reconnect: every socket resumed; \(fixed(config.duration, 0)) s more traffic")
                    after(config.duration) { end() }
                })
                // Bounded even if some socket never comes back.
                after(config.jitter + config.connectTimeout + 30) { [unowned self] in
                    note("not every socket resumed in time")
                    end()
                }
            }
        }
    }

    // MARK: - ceiling

    func runCeiling() {
        connectEveryone { [unowned self] in
            result.ceiling = []
            ceilingSearch = CeilingSearch(factor: config.ceilingFactor, step: config.ceilingStep, maximum: config.ceilingMax,
                                          refinements: config.ceilingRefinements)
            step(rate: config.rate)
        }
    }

    private func step(rate: Double) {
        let errorsBefore = errorSummary().total
        progress("ceiling: \(fixed(rate, 0)) msgs/s")
        startSending(rate: rate, senders: Array(clients.indices))
        after(config.stepWarmup) { [unowned self] in
            beginWindow()
            after(config.duration) { [unowned self] in
                let window = endWindow()
                stopSending()
                drain(limit: config.grace) { [unowned self] settled in
                    let t = completeWindow(window)
                    let errors = errorSummary().total - errorsBefore
                    var why: [String] = []
                    if t.ackLatencyMicros.p99 > config.ceilingP99Micros { why.append("p99 ack \(t.ackLatencyMicros.p99) µs") }
                    if t.deliveryLatencyMicros.p99 > config.ceilingP99Micros { why.append("p99 peer \(t.deliveryLatencyMicros.p99) µs") }
                    if errors > 0 { why.append("\(errors) errors") }
                    if t.ackedPerSecond < 0.95 * rate { why.append("acked only \(fixed(t.ackedPerSecond, 0))/s") }
                    if !settled { why.append("not drained in \(fixed(config.grace, 0)) s") }
                    let passed = why.isEmpty
                    result.ceiling?.append(CeilingStep(
                        targetRatePerSecond: rate, ackedPerSecond: t.ackedPerSecond, deliveredPerSecond: t.deliveredPerSecond,
                        ackP99Micros: t.ackLatencyMicros.p99, deliveryP99Micros: t.deliveryLatencyMicros.p99, errors: errors,
                        skippedSends: t.skippedSends, serverCPUMicrosPerDeliveredMessage: t.serverCPUMicrosPerDeliveredMessage,
                        generatorCoreShare: t.generatorCoreShare, passed: passed, why: why.joined(separator: ", ")))
                    progress("ceiling: \(fixed(rate, 0))/s → acked \(fixed(t.ackedPerSecond, 0))/s, p99 ack \(t.ackLatencyMicros.p99) µs, "
                        + "p99 peer \(t.deliveryLatencyMicros.p99) µs: \(passed ? "pass" : why.joined(separator: ", "))")
                    if passed && rate >= (result.highestSustainedRatePerSecond ?? 0) {
                        result.highestSustainedRatePerSecond = rate
                        result.traffic = t
                    }
                    if let next = ceilingSearch.next(after: rate, passed: passed) {
                        // After a failed step the server may still hold its backlog: a quiet pause first, so the
                        // lower rate is measured on its own and not on what the overload left behind.
                        if passed { step(rate: next) } else { after(config.ceilingCooldown) { [unowned self] in step(rate: next) } }
                    } else {
                        closeOut()
                    }
                }
            }
        }
    }
}
