import Dispatch
import FoundationEssentials
import LoadSupport
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The `notify` scenario (issue 28): coaches online, their clients offline ("away") with a Web Push device each, the
/// coaches sending at an open-loop rate round robin over every thread. With a push provider configured each message
/// makes one push (the server runs with `--push-coalesce 0`); the scenario then waits until the server says it has
/// sent them (`spotter_push_sent_total` on `/metrics`). Without a provider (the A/B's "off" run) the same traffic
/// makes no pushes, and the coaches' send→ack latency is the chat figure to compare.
struct NotifySummary: Codable {
    var coaches: Int
    var offlineClients: Int
    var devicesRegistered: Int
    var deviceSetupSeconds: Double
    var pushesExpected: Bool
    /// Acked messages since sending began (warm-up included): each one push when pushes are expected.
    var messagesAcked: UInt64
    var pushesSent: Double
    var pushesFailed: Double
    var pushRetries: Double
    /// First send → the moment the sent counter last moved (or the acks drained, without pushes).
    var spanSeconds: Double
    var pushesPerSecond: Double
    /// End of the window → the last push sent.
    var drainAfterWindowSeconds: Double
    var pushesDrained: Bool
    /// `spotter_push_latency_seconds` over the run (outbox → provider's answer): the histogram's buckets.
    var providerLatency: BucketSummary?
    var serverCPUSeconds: Double?
    var serverCPUMicrosPerMessage: Double?
    var serverCPUMicrosPerPush: Double?
    var receiver: ReceiverSummary?
}

/// A Prometheus histogram's change over the run: p50/p99 as the upper bound of the bucket they fall in.
struct BucketSummary: Codable {
    var count: Double
    var meanMs: Double
    var p50AtMostMs: Double?
    var p99AtMostMs: Double?
    var buckets: [String: Double]
}

/// LoadTests/push-receiver.py's figures (its --stats-file).
struct ReceiverSummary: Codable {
    var received: Int
    var answered: Int
    var sample: Int
    var sampled: Int
    var sampleOK: Int
    var sampleFailures: [String: Int]
    /// Send (the message's stamp) → arrival at the receiver, of the sample: an upper bound of commit → receiver.
    var sendToReceiverMs: [String: Double]
    var peakPerSecond: Int
    var medianBusySecond: Int
    var cpuSeconds: Double
    var activeSeconds: Double
}

private struct ReceiverFile: Decodable {
    var sample: Int
    var received: Int
    var answered: Int
    var sampled: Int
    var sample_ok: Int
    var sample_failures: [String: Int]
    var latencies_ms: [Double]
    var per_second: [String: Int]
    var first_arrival: Double?
    var last_arrival: Double?
    var cpu_seconds: Double
}

/// `name{labels} value` lines of a /metrics answer.
struct MetricsScrape {
    var series: [String: Double] = [:]

    init() {}

    init(text: String) {
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
            series[String(line[..<space])] = value
        }
    }

    /// Every series of `name` (any labels) summed.
    func sum(_ name: String) -> Double {
        series.reduce(0) { total, entry in
            let key = entry.key
            guard key == name || key.hasPrefix(name + "{") else { return total }
            return total + entry.value
        }
    }

    /// `name`'s cumulative buckets by their `le`.
    func buckets(_ name: String) -> [(le: Double, count: Double)] {
        series.compactMap { key, value -> (Double, Double)? in
            guard key.hasPrefix(name + "_bucket{") else { return nil }
            // The `le` label's value: between `le="` and the next quote.
            let parts = key.split(separator: "\"", omittingEmptySubsequences: false)
            guard let at = parts.indices.first(where: { parts[$0].hasSuffix("le=") }), at + 1 < parts.count else { return nil }
            let text = parts[at + 1]
            return (text == "+Inf" ? Double.infinity : Double(text) ?? .nan, value)
        }.sorted { $0.0 < $1.0 }
    }
}

extension Setup {
    /// A Web Push device for each of `clients` (`POST /v1/me/devices` with its token), all with the same keys and
    /// each its own endpoint under `endpointBase`; four requests at a time. Returns how many were registered.
    static func registerWebPushDevices(host: String, port: Int, clients: [Provisioned.Account], endpointBase: String,
                                       p256dh: String, auth: String) throws -> Int {
        let workers = 4
        let failures = Mutex<[String]>([])
        let registered = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: workers) { worker in
            for i in stride(from: worker, to: clients.count, by: workers) {
                let body = Array(("{\"platform\":\"webpush\",\"subscription\":{\"endpoint\":\"\(endpointBase)c\(i)\","
                    + "\"keys\":{\"p256dh\":\"\(p256dh)\",\"auth\":\"\(auth)\"}}}").utf8)
                do {
                    let answer = try SetupHTTP.post(host: host, port: port, path: "/v1/me/devices", body: body, bearer: clients[i].token)
                    guard answer.status == 200 || answer.status == 201 else {
                        throw ToolError("device: HTTP \(answer.status) \(String(decoding: answer.body.prefix(300), as: UTF8.self))")
                    }
                    registered.add(1, ordering: .relaxed)
                } catch {
                    failures.withLock { $0.append("\(error)") }
                    return
                }
            }
        }
        if let first = failures.withLock({ $0.first }) { throw ToolError("registering Web Push devices: \(first)") }
        return registered.load(ordering: .relaxed)
    }
}

extension Runner {
    func scrapeMetrics() -> MetricsScrape {
        guard let answer = try? SetupHTTP.get(host: config.host, port: config.port, path: "/metrics"), answer.status == 200 else {
            note("GET /metrics failed")
            return MetricsScrape()
        }
        return MetricsScrape(text: String(decoding: answer.body, as: UTF8.self))
    }

    func runNotify(devices: Int, deviceSeconds: Double) {
        offlineSide = 1
        let coachSockets = clients.filter(\.isCoach).map(\.index)
        connectEveryone(only: coachSockets) { [unowned self] in
            progress("notify: \(coachSockets.count) coaches sending \(fixed(config.rate, 0)) msgs/s over \(threads.count) threads "
                + "to offline clients, \(fixed(config.warmup, 0)) s warm-up + \(fixed(config.duration, 0)) s measured")
            let before = scrapeMetrics()
            let cpuStart = probe?.cpuSeconds()
            let sendStart = monotonicNanos()
            var cursor = 0
            startActions(rate: config.rate) { [unowned self] in
                let t = cursor % threads.count
                cursor += 1
                let coach = clients[threads[t].coach]
                guard coach.isLive, coach.pendingCount < config.maxPendingPerSocket else { skippedSends += 1; return }
                coach.sendMessage(thread: t, threadID: threads[t].id)
            }
            after(config.warmup) { [unowned self] in
                beginWindow()
                after(config.duration) { [unowned self] in
                    let window = endWindow()
                    stopSending()
                    let windowEnd = monotonicNanos()
                    progress("notify: window over, waiting for the last acks (at most \(fixed(config.grace, 0)) s)")
                    waitFor(limit: config.grace, { [unowned self] in outstandingSends == 0 }) { [unowned self] in
                        result.traffic = completeWindow(window)
                        let acked = ackedTotal
                        let finish: (MetricsScrape, UInt64, Bool) -> Void = { [unowned self] after, lastAt, drained in
                            let cpu = probe?.cpuSeconds().flatMap { end in cpuStart.map { end - $0 } }
                            result.notify = notifySummary(
                                before: before, after: after, acked: acked, cpu: cpu, sendStart: sendStart, windowEnd: windowEnd,
                                lastAt: lastAt, drained: drained, devices: devices, deviceSeconds: deviceSeconds)
                            closeOut()
                        }
                        if config.expectPushes {
                            progress("notify: waiting for \(acked) pushes to be sent (at most \(fixed(config.pushWait, 0)) s)")
                            waitForPushes(before: before, expected: Double(acked), then: finish)
                        } else {
                            finish(scrapeMetrics(), monotonicNanos(), true)
                        }
                    }
                }
            }
        }
    }

    /// Polls /metrics every 0.5 s until `expected` pushes were sent or given up, the counters stood still for 15 s,
    /// or `--push-wait` passed; `then` gets the last scrape, when the sent counter last moved, and whether all went.
    private func waitForPushes(before: MetricsScrape, expected: Double, then: @escaping (MetricsScrape, UInt64, Bool) -> Void) {
        let deadline = monotonicNanos() + UInt64(config.pushWait * 1e9)
        var lastCount = -1.0
        var lastMoved = monotonicNanos()
        func poll() {
            let now = scrapeMetrics()
            let sent = now.sum("spotter_push_sent_total") - before.sum("spotter_push_sent_total")
            let failed = now.sum("spotter_push_failed_total") - before.sum("spotter_push_failed_total")
            let at = monotonicNanos()
            if sent + failed != lastCount { lastCount = sent + failed; lastMoved = at }
            if sent + failed >= expected || at >= deadline || at - lastMoved > 15_000_000_000 {
                if sent + failed < expected { note("not every push was sent by the end of the wait") }
                return then(now, lastMoved, sent + failed >= expected)
            }
            after(0.5) { poll() }
        }
        poll()
    }

    private func notifySummary(before: MetricsScrape, after: MetricsScrape, acked: UInt64, cpu: Double?, sendStart: UInt64,
                               windowEnd: UInt64, lastAt: UInt64, drained: Bool, devices: Int, deviceSeconds: Double) -> NotifySummary {
        let sent = after.sum("spotter_push_sent_total") - before.sum("spotter_push_sent_total")
        let span = seconds(sendStart, lastAt)
        var latency: BucketSummary?
        let name = "spotter_push_latency_seconds"
        let count = after.sum(name + "_count") - before.sum(name + "_count")
        if count > 0 {
            let old = Dictionary(before.buckets(name).map { ($0.le, $0.count) }, uniquingKeysWith: { a, _ in a })
            let delta = after.buckets(name).map { (le: $0.le, count: $0.count - (old[$0.le] ?? 0)) }
            func atMost(_ fraction: Double) -> Double? { delta.first { $0.count >= fraction * count }.map { $0.le * 1000 } }
            latency = BucketSummary(
                count: count, meanMs: (after.sum(name + "_sum") - before.sum(name + "_sum")) / count * 1000,
                p50AtMostMs: atMost(0.5), p99AtMostMs: atMost(0.99),
                buckets: Dictionary(delta.map { ($0.le.isInfinite ? "+Inf" : fixed($0.le, 3), $0.count) }, uniquingKeysWith: { a, _ in a }))
        }
        return NotifySummary(
            coaches: clients.filter(\.isCoach).count, offlineClients: clients.filter { !$0.isCoach }.count,
            devicesRegistered: devices, deviceSetupSeconds: deviceSeconds, pushesExpected: config.expectPushes,
            messagesAcked: acked, pushesSent: sent,
            pushesFailed: after.sum("spotter_push_failed_total") - before.sum("spotter_push_failed_total"),
            pushRetries: after.sum("spotter_push_retries_total") - before.sum("spotter_push_retries_total"),
            spanSeconds: span, pushesPerSecond: span > 0 ? sent / span : 0,
            drainAfterWindowSeconds: lastAt > windowEnd ? seconds(windowEnd, lastAt) : 0, pushesDrained: drained,
            providerLatency: latency, serverCPUSeconds: cpu,
            serverCPUMicrosPerMessage: cpu.flatMap { acked > 0 ? $0 * 1e6 / Double(acked) : nil },
            serverCPUMicrosPerPush: cpu.flatMap { sent > 0 ? $0 * 1e6 / sent : nil },
            receiver: config.receiverStats.flatMap(Self.readReceiver))
    }

    /// The receiver's figures, once its next write (every second) has them.
    private static func readReceiver(_ path: String) -> ReceiverSummary? {
        usleep(1_500_000)
        guard let text = readSmallFile(path), let file = try? JSONDecoder().decode(ReceiverFile.self, from: Data(text.utf8)) else {
            progress("notify: cannot read the receiver's figures in \(path)")
            return nil
        }
        let sorted = file.latencies_ms.sorted()
        func at(_ p: Double) -> Double { sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(p / 100 * Double(sorted.count)))] }
        let busy = file.per_second.values.sorted()
        return ReceiverSummary(
            received: file.received, answered: file.answered, sample: file.sample, sampled: file.sampled, sampleOK: file.sample_ok,
            sampleFailures: file.sample_failures,
            sendToReceiverMs: ["p50": at(50), "p90": at(90), "p99": at(99), "max": sorted.last ?? 0, "n": Double(sorted.count)],
            peakPerSecond: busy.last ?? 0, medianBusySecond: busy.isEmpty ? 0 : busy[busy.count / 2], cpuSeconds: file.cpu_seconds,
            activeSeconds: (file.last_arrival ?? 0) - (file.first_arrival ?? 0))
    }
}

extension NotifySummary {
    func rows(_ row: (String, String) -> Void) {
        row("notify setup", "\(coaches) coaches online, \(offlineClients) clients offline, \(devicesRegistered) Web Push devices registered in \(fixed(deviceSetupSeconds, 1)) s")
        row("pushes", pushesExpected
            ? "\(fixed(pushesSent, 0)) sent of \(messagesAcked) messages acked (failed \(fixed(pushesFailed, 0)), retries \(fixed(pushRetries, 0)))\(pushesDrained ? "" : " — **not all sent**")"
            : "none expected (no provider); \(messagesAcked) messages acked, \(fixed(pushesSent, 0)) pushes sent")
        if pushesExpected {
            row("pushes/s", "**\(fixed(pushesPerSecond, 0))/s** over \(fixed(spanSeconds, 1)) s (first send → last push sent); last push \(fixed(drainAfterWindowSeconds, 1)) s after the window")
        }
        if let l = providerLatency {
            row("outbox→provider (spotter_push_latency_seconds)", "p50 ≤ \(l.p50AtMostMs.map { fixed($0, 0) } ?? "?") ms, p99 ≤ \(l.p99AtMostMs.map { fixed($0, 0) } ?? "?") ms (bucket bounds), mean \(fixed(l.meanMs, 1)) ms, n=\(fixed(l.count, 0))")
        }
        if let r = receiver {
            let m = r.sendToReceiverMs
            row("send→receiver ms (1 in \(r.sample) checked)", "**p50 \(fixed(m["p50"] ?? 0, 0))  p99 \(fixed(m["p99"] ?? 0, 0))**  p90 \(fixed(m["p90"] ?? 0, 0))  max \(fixed(m["max"] ?? 0, 0))  (n=\(fixed(m["n"] ?? 0, 0)))")
            row("receiver", "\(r.received) received, \(r.answered) answered 201, \(r.sampleOK) of \(r.sampled) sampled pushes verified and decrypted\(r.sampleFailures.isEmpty ? "" : ", failures \(r.sampleFailures)"); peak \(r.peakPerSecond)/s, median busy second \(r.medianBusySecond)/s; its CPU \(fixed(r.cpuSeconds, 1)) s over \(fixed(r.activeSeconds, 1)) s of arrivals")
        }
        row("server CPU (first send → end)", "\(serverCPUSeconds.map { fixed($0, 2) } ?? "n/a") s: \(serverCPUMicrosPerMessage.map { fixed($0, 1) } ?? "n/a") µs per message\(serverCPUMicrosPerPush.map { ", \(fixed($0, 1)) µs per push (messages' cost included)" } ?? "")")
    }
}
