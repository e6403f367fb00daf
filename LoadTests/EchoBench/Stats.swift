import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

import LoadSupport

// MARK: - Results

struct ServerSummary: Codable {
    var pid: Int32
    var rssBeforeConnectBytes: Int?
    var rssAfterIdleBytes: Int?
    var rssPerIdleConnectionBytes: Int?
    var cpuSecondsMeasured: Double?
    var cpuMicrosPerMessage: Double?
}

struct ErrorSummary: Codable {
    var total: Int
    var connectFailures: Int
    var payloadMismatches: Int
    var droppedConnections: Int
    var closeFailures: Int
    var reasons: [String: Int]
}

/// Everything one run measured; printed as text and written as JSON.
struct BenchResults: Codable {
    var startedAt: String
    var loadAverageBefore: String
    var commandLine: String
    var config: BenchConfig
    var connectionsOpened: Int
    var connectSeconds: Double
    var connectRatePerSecond: Double
    var measuredSeconds: Double
    var messagesMeasured: UInt64
    var messagesPerSecond: Double
    var latencyMicros: LatencySummary
    var errors: ErrorSummary
    var server: ServerSummary?
    var clientCpuSecondsMeasured: Double
    var clientCpuMicrosPerMessage: Double?

    var summary: String {
        let c = config
        var lines = [
            "spotter-echo-bench  \(startedAt)  load before: \(loadAverageBefore)",
            "target            \(c.host):\(c.port)\(c.path), \(c.messageBytes)-byte text, in-flight \(c.inFlight)/connection, "
                + "\(c.sourceAddresses) source address(es)",
            "connections       \(connectionsOpened) of \(c.connections) open in \(fixed(connectSeconds, 2)) s "
                + "(\(fixed(connectRatePerSecond, 0)) connect+upgrade/s)",
            "echo window       \(fixed(measuredSeconds, 2)) s after \(fixed(c.warmupSeconds, 1)) s warm-up",
            "messages/s        \(fixed(messagesPerSecond, 0))  (\(messagesMeasured) echoes received in the window)",
            "latency (us)      p50 \(latencyMicros.p50)  p90 \(latencyMicros.p90)  p99 \(latencyMicros.p99)  "
                + "p99.9 \(latencyMicros.p999)  max \(latencyMicros.max)  mean \(fixed(latencyMicros.mean, 1))",
            "errors            \(errors.total)  (connect \(errors.connectFailures), mismatched payloads "
                + "\(errors.payloadMismatches), dropped \(errors.droppedConnections), unclean close \(errors.closeFailures))",
        ]
        for (reason, count) in errors.reasons.sorted(by: { $0.value > $1.value }).prefix(5) {
            lines.append("                    \(count) x \(reason)")
        }
        if let s = server {
            func mib(_ bytes: Int?) -> String { bytes.map { "\($0) B (\(fixed(Double($0) / 1_048_576, 1)) MiB)" } ?? "n/a" }
            lines.append("server RSS        before connect \(mib(s.rssBeforeConnectBytes)), after idle \(mib(s.rssAfterIdleBytes))")
            lines.append("server RSS/conn   \(s.rssPerIdleConnectionBytes.map { "\($0) B per idle connection" } ?? "n/a")")
            lines.append("server CPU        \(s.cpuSecondsMeasured.map { fixed($0, 2) } ?? "n/a") s in the window, "
                + "\(s.cpuMicrosPerMessage.map { fixed($0, 2) } ?? "n/a") us per echoed message")
        } else {
            lines.append("server            no --server-pid: RSS and CPU not measured")
        }
        lines.append("client CPU        \(fixed(clientCpuSecondsMeasured, 2)) s in the window, "
            + "\(clientCpuMicrosPerMessage.map { fixed($0, 2) } ?? "n/a") us per echoed message")
        return lines.joined(separator: "\n")
    }
}
