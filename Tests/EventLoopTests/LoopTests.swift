import EventLoop
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("Loop: timers, wake-ups, work queue, signals")
struct LoopTests {
    @Test func timerFiresRepeatedlyAndClosesOnce() {
        let loop = Loop()
        let timer = Timer(loop: loop)
        var fired = 0
        timer.start(after: 1, repeat: 1) {
            fired += 1
            if fired == 3 { timer.close() }
        }
        timer.close()  // closing twice must be harmless…
        let second = Timer(loop: loop)
        second.start(after: 1) { fired += 100 }
        loop.run()  // …and the loop ends once nothing is left open.
        #expect(fired == 100)
        #expect(timer.isClosed && second.isClosed == false)
        second.close()
        loop.closeAllHandles()
        #expect(loop.openHandleCount == 0)
    }

    @Test func executeRunsJobsFromOtherThreadsOnTheLoopInOrder() {
        let loop = Loop()
        let keepAlive = Timer(loop: loop)
        keepAlive.start(after: 60_000) {}
        let threads = 4
        let jobsPerThread = 500
        let state = LoopBound((seen: [[Int]](repeating: [], count: threads), timer: keepAlive), loop: loop)
        let offLoop = Mutex(0)
        let group = DispatchGroup()
        for thread in 0..<threads {
            group.enter()
            Thread.detachNewThread {
                for job in 0..<jobsPerThread {
                    loop.execute {
                        if !loop.isOnLoop { offLoop.withLock { $0 += 1 } }
                        state.value.seen[thread].append(job)
                        if state.value.seen.allSatisfy({ $0.count == jobsPerThread }) { state.value.timer.close() }
                    }
                }
                group.leave()
            }
        }
        loop.run()
        group.wait()
        #expect(offLoop.withLock { $0 } == 0)
        for thread in 0..<threads { #expect(state.value.seen[thread] == Array(0..<jobsPerThread)) }
    }

    @Test func runBlockingWorksOffTheLoopAndCompletesOnIt() {
        let loop = Loop()
        let loopThread = pthread_self()
        var results: [Int] = []
        var completedOnLoop = true
        for value in 1...8 {
            loop.runBlocking({ () -> Int in
                // Runs on libuv's pool: not the loop thread.
                pthread_equal(pthread_self(), loopThread) != 0 ? -1 : value * value
            }, then: { result in
                completedOnLoop = completedOnLoop && pthread_equal(pthread_self(), loopThread) != 0
                results.append(result)
            })
        }
        loop.run()  // pending work keeps the loop alive until every completion ran
        #expect(results.sorted() == [1, 4, 9, 16, 25, 36, 49, 64])
        #expect(completedOnLoop)
    }

    @Test func signalWatcherDeliversTheSignalOnTheLoop() {
        let loop = Loop()
        var received: Int32 = 0
        let watcher = SignalWatcher(loop: loop, signal: SIGUSR2) { number in received = number }
        let timer = Timer(loop: loop)
        timer.start(after: 5) { kill(getpid(), SIGUSR2) }
        let stopper = Timer(loop: loop)
        let start = loop.nowMilliseconds
        stopper.start(after: 10, repeat: 10) {
            if received != 0 || loop.nowMilliseconds - start > 5_000 {
                watcher.close(); timer.close(); stopper.close()
            }
        }
        loop.run()
        #expect(received == SIGUSR2)
        #expect(loop.openHandleCount == 0)
    }
}
