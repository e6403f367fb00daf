import CoreMetrics
import EventLoop

/// The loop's iterations at `GET /metrics` (`IterationMeter`): how long the loop went without polling, so a
/// stall — one iteration doing tens of milliseconds of work while every socket waits — is visible even when
/// averages are not. Brought up to date at each scrape from what the meter counted since the previous one.
final class LoopMetrics: Sendable {
    private let iterations: Counter
    private let busyMicros: Counter
    private let overWall: [Counter]
    private let overCPU: [Counter]
    private let longestWall: Gauge
    private let longestCPU: Gauge

    init(_ metrics: ServerMetrics) {
        let factory = metrics.factory
        iterations = Counter(label: "spotter_loop_iterations_total", factory: factory)
        busyMicros = Counter(label: "spotter_loop_busy_microseconds_total", factory: factory)
        func stalls(_ clock: String) -> [Counter] {
            IterationMeter.thresholdsMicros.map { threshold in
                Counter(label: "spotter_loop_stalls_total", dimensions: [("over_ms", String(threshold / 1000)), ("clock", clock)],
                        factory: factory)
            }
        }
        overWall = stalls("wall")
        overCPU = stalls("cpu")
        longestWall = Gauge(label: "spotter_loop_longest_iteration_seconds", dimensions: [("clock", "wall")], factory: factory)
        longestCPU = Gauge(label: "spotter_loop_longest_iteration_seconds", dimensions: [("clock", "cpu")], factory: factory)
        longestWall.record(0.0)
        longestCPU.record(0.0)
    }

    /// Adds what the meter counted since the previous scrape; the longest iterations are those of that span.
    func record(_ counts: IterationMeter.Counts) {
        iterations.increment(by: Int64(clamping: counts.iterations))
        busyMicros.increment(by: Int64(clamping: counts.busyMicros))
        for index in IterationMeter.thresholdsMicros.indices {
            overWall[index].increment(by: Int64(clamping: counts.overWall[index]))
            overCPU[index].increment(by: Int64(clamping: counts.overCPU[index]))
        }
        longestWall.record(Double(counts.longestWallMicros) / 1_000_000)
        longestCPU.record(Double(counts.longestCPUMicros) / 1_000_000)
    }
}
