// Shared by the load tools: a latency histogram as the results report it.
import Histogram

/// A histogram of latencies (microseconds) in the results: count, percentiles, max and mean; all zero when nothing
/// was recorded.
public struct LatencySummary: Codable {
    public var samples: UInt64
    public var p50: UInt64
    public var p90: UInt64
    public var p99: UInt64
    public var p999: UInt64
    public var max: UInt64
    public var mean: Double

    public init(_ histogram: Histogram<UInt64>) {
        samples = histogram.totalCount
        let any = histogram.totalCount > 0
        p50 = any ? histogram.valueAtPercentile(50) : 0
        p90 = any ? histogram.valueAtPercentile(90) : 0
        p99 = any ? histogram.valueAtPercentile(99) : 0
        p999 = any ? histogram.valueAtPercentile(99.9) : 0
        max = any ? histogram.max : 0
        mean = any ? histogram.mean : 0
    }

    /// One line for the load generator's Markdown: p50, p99, p99.9, max and the count.
    public var text: String {
        samples == 0 ? "none answered within the window + grace" : "p50 \(p50)  p99 \(p99)  p99.9 \(p999)  max \(max)  (n=\(samples))"
    }
}
