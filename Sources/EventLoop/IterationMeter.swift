import CLibUV

#if canImport(Glibc)
import Glibc
#endif

/// How long each loop iteration kept the loop from polling: the time between two polls minus the time libuv
/// spent waiting in the poll (`uv_metrics_idle_time`), i.e. every callback, timer and flush of one iteration.
/// A stall (a tick scanning everything, a big checkpoint) shows as one long iteration, which no average of
/// latencies shows. Also the loop thread's CPU time per iteration: wall time counts the thread's being
/// preempted on a busy machine too, CPU time only its own work.
///
/// Counting is a handful of integer operations per iteration on the loop thread; `take()` hands the counts
/// to whoever exposes them (the server's `/metrics`). Loop thread only.
public final class IterationMeter: LoopHandle {
    /// Thresholds, in microseconds, whose iterations over them are counted: the buckets of a stall histogram.
    public static let thresholdsMicros: [UInt64] = [1_000, 5_000, 10_000, 25_000, 50_000, 100_000]

    /// What was measured since the previous `take()`.
    public struct Counts: Sendable, Equatable {
        /// Iterations measured.
        public var iterations: UInt64 = 0
        /// Wall microseconds the loop was busy (not waiting in the poll).
        public var busyMicros: UInt64 = 0
        /// Per threshold of `thresholdsMicros`, the iterations whose busy wall time passed it.
        public var overWall: [UInt64] = Array(repeating: 0, count: IterationMeter.thresholdsMicros.count)
        /// The same by the loop thread's CPU time.
        public var overCPU: [UInt64] = Array(repeating: 0, count: IterationMeter.thresholdsMicros.count)
        /// The longest iteration, by wall time and by CPU time.
        public var longestWallMicros: UInt64 = 0
        public var longestCPUMicros: UInt64 = 0

        public init() {}

        /// Counts one iteration.
        public mutating func add(wallMicros: UInt64, cpuMicros: UInt64) {
            iterations &+= 1
            busyMicros &+= wallMicros
            longestWallMicros = max(longestWallMicros, wallMicros)
            longestCPUMicros = max(longestCPUMicros, cpuMicros)
            // Most iterations are under the first threshold: one comparison each.
            guard wallMicros > IterationMeter.thresholdsMicros[0] || cpuMicros > IterationMeter.thresholdsMicros[0] else { return }
            for (index, threshold) in IterationMeter.thresholdsMicros.enumerated() {
                if wallMicros > threshold { overWall[index] &+= 1 }
                if cpuMicros > threshold { overCPU[index] &+= 1 }
            }
        }
    }

    private var counts = Counts()
    private var lastNanos: UInt64 = 0
    private var lastIdleNanos: UInt64 = 0
    private var lastCPUNanos: UInt64 = 0

    /// Starts measuring `loop`'s iterations (before or while it runs, on its thread).
    public init(loop: Loop) {
        super.init(loop: loop, type: UV_PREPARE)
        let prepare = UnsafeMutableRawPointer(handle).assumingMemoryBound(to: uv_prepare_t.self)
        uv_prepare_init(loop.raw, prepare)
        didInitialize()
        _ = spotter_uv_measure_idle_time(loop.raw)
        lastNanos = uv_hrtime()
        lastIdleNanos = uv_metrics_idle_time(loop.raw)
        lastCPUNanos = Self.threadCPUNanos()
        uv_prepare_start(prepare) { prepare in
            LoopHandle.object(UnsafeMutableRawPointer(prepare), as: IterationMeter.self).iterationEnded()
        }
        unref()
    }

    /// Called just before each poll: the iteration since the previous poll is over.
    private func iterationEnded() {
        let now = uv_hrtime(), idle = uv_metrics_idle_time(loop.raw), cpu = Self.threadCPUNanos()
        let wall = (now &- lastNanos) &- min(idle &- lastIdleNanos, now &- lastNanos)
        counts.add(wallMicros: wall / 1000, cpuMicros: (cpu &- lastCPUNanos) / 1000)
        lastNanos = now
        lastIdleNanos = idle
        lastCPUNanos = cpu
    }

    /// What was measured since the previous call; starts counting afresh.
    public func take() -> Counts {
        defer { counts = Counts() }
        return counts
    }

    private static func threadCPUNanos() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
        return UInt64(spec.tv_sec) &* 1_000_000_000 &+ UInt64(spec.tv_nsec)
    }
}
