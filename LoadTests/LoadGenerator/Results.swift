import FoundationEssentials
import LoadSupport

struct ConnectSummary: Codable {
    var requested: Int
    var opened: Int
    var failures: Int
    var seconds: Double
    /// Sockets per second from the first connect to the last `hello`.
    var ratePerSecond: Double
    /// Connect → `hello` per socket.
    var latencyMicros: LatencySummary
}

struct TrafficSummary: Codable {
    var targetRatePerSecond: Double
    var windowSeconds: Double
    var sent: UInt64
    var skippedSends: UInt64
    var acked: UInt64
    var ackedPerSecond: Double
    var deliveredToPeer: UInt64
    var deliveredPerSecond: Double
    var ackLatencyMicros: LatencySummary
    var deliveryLatencyMicros: LatencySummary
    var serverCPUSeconds: Double?
    var serverCPUMicrosPerDeliveredMessage: Double?
    var generatorCPUSeconds: Double
    var generatorCoreShare: Double
}

struct IntegritySummary: Codable {
    /// Sends still without a reply when the run ended (server behind).
    var unanswered: Int
    var acked: UInt64
    var deliveredToPeer: UInt64
    /// Acked, never delivered to the peer by the end of the grace period.
    var lost: Int
    /// Seqs below a receiver's highest that it never got.
    var seqHoles: Int
    var seqDuplicates: Int
    /// Seqs that arrived not as last+1 (later filled or not).
    var seqOutOfOrder: Int
    /// A client_message_id stored under two seqs.
    var contentDuplicates: Int
    var cursorGaps: Int
    var cursorDuplicates: Int
}

struct ErrorSummary: Codable {
    var total: Int
    var connectFailures: Int
    var droppedConnections: Int
    var commandErrors: Int
    var protocolErrors: Int
    var reasons: [String: Int]
}

/// RSS figures are summed over `pids` (one process unless --server-pids named several).
struct ServerSummary: Codable {
    var pids: [Int32]
    var rssBeforeConnectBytes: Int?
    var rssAfterConnectBytes: Int?
    var rssEndBytes: Int?
    /// Each process's RSS at the end, in the order of `pids`.
    var rssEndBytesPerProcess: [Int]?
    var rssGrowthPerSocketBytes: Int?
}

struct IdleSummary: Codable {
    var holdSeconds: Double
    var pongsSent: Int
    var socketsOpenAtEnd: Int
}

struct FanInSummary: Codable {
    var coaches: Int
    var clientsPerCoach: Int
    var coachesChecked: Int
    var coachesAnswered: Int
    var expectedTotalUnreadSum: Int64
    var serverTotalUnreadSum: Int64
    /// Coaches whose `threads` total_unread differs from the generator's count.
    var threadsMismatches: Int
    /// Coaches whose last `unread` event's total_unread differs from the generator's count.
    var lastEventMismatches: Int
    var examples: [String]
}

struct ReconnectSummary: Codable {
    var dropped: Int
    var reconnected: Int
    var resumed: Int
    var jitterSeconds: Double
    var allHelloSeconds: Double?
    /// Drop → every socket's `resume` answered (everything missed replayed).
    var recoverySeconds: Double?
    var replayedEvents: Int
    /// Live events between `hello` and the resume that the replay repeated; discarded by cursor.
    var overlapDiscarded: Int
    var reconnectLatencyMicros: LatencySummary
}

struct CeilingStep: Codable {
    var targetRatePerSecond: Double
    var ackedPerSecond: Double
    var deliveredPerSecond: Double
    var ackP99Micros: UInt64
    var deliveryP99Micros: UInt64
    var errors: Int
    var skippedSends: UInt64
    var serverCPUMicrosPerDeliveredMessage: Double?
    var generatorCoreShare: Double
    var passed: Bool
    var why: String
}

struct ScenarioResult: Codable {
    var scenario: String
    var startedAt: String
    var loadAverageBefore: String
    var commandLine: String
    var config: LoadConfig
    var setupSeconds: Double = 0
    var connect: ConnectSummary?
    var traffic: TrafficSummary?
    var integrity: IntegritySummary?
    var errors: ErrorSummary?
    var server: ServerSummary?
    var idle: IdleSummary?
    var fanIn: FanInSummary?
    var reconnect: ReconnectSummary?
    var ceiling: [CeilingStep]?
    var sessions: SessionsSummary?
    var quota: QuotaSummary?
    var notify: NotifySummary?
    var highestSustainedRatePerSecond: Double?
    var idleServerCPUSeconds: Double?
    /// chat: every ack received / (first send → end of the drain), window or not.
    var overallAckedPerSecond: Double?
    var idleGeneratorCPUSeconds: Double?
    var timedOut = false

    /// A Markdown section for the summary file.
    var markdown: String {
        var lines = ["### \(scenario)", "", "`\(commandLine)`", "",
                     "Started \(startedAt), load average before: `\(loadAverageBefore)`.", "",
                     "| measure | value |", "|---|---|"]
        func row(_ name: String, _ value: String) { lines.append("| \(name) | \(value) |") }
        if let c = connect {
            row("sockets", "\(c.opened) of \(c.requested) open, \(c.failures) failed")
            row("connect+hello rate", "\(fixed(c.ratePerSecond, 0)) sockets/s (\(fixed(c.seconds, 2)) s); connect→hello µs \(c.latencyMicros.text)")
        }
        if let t = traffic {
            row("offered rate", "\(fixed(t.targetRatePerSecond, 0)) msgs/s for \(fixed(t.windowSeconds, 1)) s (\(t.sent) sent, \(t.skippedSends) skipped)")
            row("acked", "\(t.acked) of the window's sends (\(fixed(t.ackedPerSecond, 0))/s)"
                + (overallAckedPerSecond.map { "; all acks over the whole send + drain time: \(fixed($0, 0))/s" } ?? ""))
            row("delivered to peer", "\(t.deliveredToPeer) (\(fixed(t.deliveredPerSecond, 0))/s)")
            row("send→ack µs", t.ackLatencyMicros.text)
            row("send→peer µs", t.deliveryLatencyMicros.text)
            row("server CPU", "\(t.serverCPUSeconds.map { fixed($0, 2) } ?? "n/a") s, \(t.serverCPUMicrosPerDeliveredMessage.map { fixed($0, 1) } ?? "n/a") µs per delivered message")
            row("generator CPU", "\(fixed(t.generatorCPUSeconds, 2)) s (\(fixed(t.generatorCoreShare * 100, 0))% of one core)")
        }
        if let i = integrity {
            row("integrity", "unanswered at the end \(i.unanswered), lost \(i.lost), seq holes \(i.seqHoles), seq duplicates \(i.seqDuplicates), content duplicates \(i.contentDuplicates), cursor gaps \(i.cursorGaps), cursor duplicates \(i.cursorDuplicates) (acked \(i.acked), delivered to peer \(i.deliveredToPeer))")
        }
        if let s = server {
            func mib(_ b: Int?) -> String { b.map { fixed(Double($0) / 1_048_576, 1) + " MiB" } ?? "n/a" }
            let processes = s.pids.count > 1 ? " (\(s.pids.count) processes summed)" : ""
            row("server RSS\(processes)", "before \(mib(s.rssBeforeConnectBytes)), after connect \(mib(s.rssAfterConnectBytes)), end \(mib(s.rssEndBytes)); growth \(s.rssGrowthPerSocketBytes.map { "\($0) B" } ?? "n/a") per socket")
            if s.pids.count > 1, let each = s.rssEndBytesPerProcess {
                row("RSS per process at the end", zip(s.pids, each).map { "\($0.0): \(mib($0.1))" }.joined(separator: ", "))
            }
        }
        if let d = idle {
            row("idle hold", "\(fixed(d.holdSeconds, 0)) s, \(d.pongsSent) keepalive pings answered, \(d.socketsOpenAtEnd) sockets open at the end")
            row("CPU while idle", "server \(idleServerCPUSeconds.map { fixed($0, 2) } ?? "n/a") s, generator \(idleGeneratorCPUSeconds.map { fixed($0, 2) } ?? "n/a") s over the hold")
        }
        if let f = fanIn {
            row("fan-in unread check", "\(f.coachesAnswered) of \(f.coachesChecked) coaches answered `threads`; total_unread server \(f.serverTotalUnreadSum) vs generator \(f.expectedTotalUnreadSum); mismatching coaches: threads \(f.threadsMismatches), last unread event \(f.lastEventMismatches)")
        }
        if let r = reconnect {
            row("reconnect storm", "\(r.dropped) dropped, \(r.reconnected) reconnected, \(r.resumed) resumed; jitter \(fixed(r.jitterSeconds, 1)) s; all hello after \(r.allHelloSeconds.map { fixed($0, 2) } ?? "n/a") s; **recovery \(r.recoverySeconds.map { fixed($0, 2) } ?? "n/a") s**; \(r.replayedEvents) events replayed, \(r.overlapDiscarded) overlap events discarded")
        }
        if let steps = ceiling {
            for s in steps {
                row("step \(fixed(s.targetRatePerSecond, 0))/s", "acked \(fixed(s.ackedPerSecond, 0))/s, p99 ack \(s.ackP99Micros) µs, p99 peer \(s.deliveryP99Micros) µs, errors \(s.errors), server \(s.serverCPUMicrosPerDeliveredMessage.map { fixed($0, 1) } ?? "n/a") µs/msg, generator \(fixed(s.generatorCoreShare * 100, 0))% — \(s.passed ? "pass" : "stop: " + s.why)")
            }
            row("highest sustained rate", highestSustainedRatePerSecond.map { "**\(fixed($0, 0)) msgs/s**" } ?? "none passed")
        }
        if let q = quota {
            row("quota checks", "\(q.clients) Freemium clients, \(q.sent) sends answered: \(q.accepted) accepted, \(q.refused) refused with quota_exceeded; **\(q.exactlyAtLimit) of \(q.clientsPastLimit)** clients past the limit accepted exactly \(q.limit); over-charged \(q.overCharged), refused early \(q.refusedEarly), last quota event wrong \(q.quotaEventMismatches)")
            row("retry of an accepted message", "\(q.retriesSameSeq) answered with its seq" + (q.retryFailures.isEmpty ? "" : "; " + q.retryFailures.map { "\($0.value) × \($0.key)" }.joined(separator: ", ")))
            row("send→refusal µs", q.refusalLatencyMicros.text)
        }
        if let n = notify { n.rows(row) }
        if let v = sessions {
            row("offered actions", "\(fixed(v.targetActionsPerSecond, 0))/s for \(fixed(v.windowSeconds, 1)) s by \(v.coaches) coaches × \(v.clientsPerCoach) clients (\(v.sent) sent, \(v.answered) answered)")
            row("command→reply µs", v.commandLatencyMicros.text)
            row("coach join→coach_joined at the client µs", v.coachJoinedLatencyMicros.text)
            row("server CPU", "\(v.serverCPUSeconds.map { fixed($0, 2) } ?? "n/a") s, \(v.serverCPUMicrosPerAction.map { fixed($0, 1) } ?? "n/a") µs per action")
            row("generator CPU", "\(fixed(v.generatorCPUSeconds, 2)) s")
            row("actions (whole run)", v.actions.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
            row("refused as stale (expected)", v.refusals.isEmpty ? "none" : v.refusals.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
            row("session events received", "\(v.events)")
            row("statuses at the end", v.statusesAtEnd.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
            if let c = v.check {
                row("**invariant**", "**\(c.overlaps) overlapping pairs** among \(c.holdingTime) time-holding sessions of \(c.coachesChecked) of \(c.coachesAsked) coaches' calendars (\(c.sessionsListed) sessions listed)")
                row("events lost", "\(c.notSeenAtLatestVersion) sessions whose latest version a participant never got")
                for example in c.examples.prefix(5) { row("", example) }
            }
        }
        if let e = errors {
            row("errors", "\(e.total) (connect \(e.connectFailures), dropped \(e.droppedConnections), command \(e.commandErrors), protocol \(e.protocolErrors))")
            for (reason, count) in e.reasons.sorted(by: { $0.value > $1.value }).prefix(5) { row("", "\(count) × \(reason)") }
        }
        if timedOut { row("**timed out**", "the run hit --max-run-seconds") }
        row("setup", "\(fixed(setupSeconds, 1)) s (sign-in + provisioning)")
        return lines.joined(separator: "\n") + "\n"
    }
}
