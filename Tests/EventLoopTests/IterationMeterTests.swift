import EventLoop
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The loop's stall meter (`IterationMeter`): an iteration that works for 30 ms counts as one past 25 ms, by
/// wall time and by CPU time; time the loop spends waiting in its poll counts as neither.
@Suite("IterationMeter: long iterations are counted, waiting is not")
struct IterationMeterTests {
    /// The calling thread's CPU time in microseconds.
    static func threadCPUMicros() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
        return UInt64(spec.tv_sec) * 1_000_000 + UInt64(spec.tv_nsec) / 1000
    }

    @Test func aThirtyMillisecondCallbackIsAStallAndAWaitIsNot() {
        let loop = Loop()
        let meter = IterationMeter(loop: loop)
        let timer = Timer(loop: loop)
        var phase = 0
        // First a 150 ms wait in the poll (nothing to do), then one callback that works 30 ms of CPU time.
        timer.start(after: 150) {
            _ = meter.take()  // what came before: the wait, counted in the iteration that ends now
            phase = 1
            let start = Self.threadCPUMicros()
            var spin: UInt64 = 0
            while Self.threadCPUMicros() - start < 30_000 { spin &+= 1 }
            precondition(spin > 0)
            timer.close()
        }
        let idle = Timer(loop: loop)
        idle.start(after: 200) { idle.close() }  // one more iteration so the long one is counted
        loop.run()
        let counts = meter.take()
        #expect(phase == 1)
        let over25 = IterationMeter.thresholdsMicros.firstIndex(of: 25_000)!
        let over100 = IterationMeter.thresholdsMicros.firstIndex(of: 100_000)!
        #expect(counts.iterations >= 1)
        #expect(counts.overCPU[over25] == 1)
        #expect(counts.overWall[over25] >= 1)
        #expect(counts.longestCPUMicros >= 30_000)
        #expect(counts.longestWallMicros >= 30_000)
        // The 50 ms wait for the second timer is not work: no CPU-time stall past 100 ms.
        #expect(counts.overCPU[over100] == 0)
        meter.close()
        loop.closeAllHandles()
        #expect(loop.openHandleCount == 0)
    }

    @Test func countsAddUpByThreshold() {
        var counts = IterationMeter.Counts()
        counts.add(wallMicros: 0, cpuMicros: 0)
        counts.add(wallMicros: 1_000, cpuMicros: 999)      // at a threshold is not past it
        counts.add(wallMicros: 12_000, cpuMicros: 3_000)
        counts.add(wallMicros: .max, cpuMicros: 200_000)   // absurd readings do not trap
        #expect(counts.iterations == 4)
        #expect(counts.overWall == [2, 2, 2, 1, 1, 1])
        #expect(counts.overCPU == [2, 1, 1, 1, 1, 1])
        #expect(counts.longestWallMicros == .max && counts.longestCPUMicros == 200_000)
    }
}
