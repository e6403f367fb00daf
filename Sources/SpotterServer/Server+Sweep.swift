import EventLoop

/// The once-a-second sweep of every connection (request and idle deadlines, pings, token expiry), spread over
/// loop iterations: one pass takes the connections open when it starts and sweeps at most `sweepSlice` of them
/// per iteration (one every millisecond or so), so 10,000 sockets never hold the loop for one long stretch (it was 5–10 ms at 10,000 sockets,
/// every second, while every other socket waited). A connection is swept at most once per pass; one opened
/// during a pass waits for the next.
struct SweepPass {
    /// Connection ids still to sweep in this pass.
    var pending: [UInt64] = []
    /// Fires on the next iteration while the pass is not done. 1 ms, not 0: libuv (1.44) runs a timer started
    /// with 0 from a timer callback again in the same pass over the timers, so every slice would run in one
    /// iteration after all (the loop's stall counters showed it: one >10 ms iteration a second remained).
    var next: Timer?
}

extension Server {
    /// Connections swept per loop iteration.
    static let sweepSlice = 256

    /// Starts a pass over every connection open now (a pass still under way is replaced: it restarts from all).
    func beginSweepPass() {
        sweepPass.pending = Array(connections.keys)
        sweepNextSlice()
    }

    private func sweepNextSlice() {
        let now = loop.nowMilliseconds
        var left = Self.sweepSlice
        while left > 0, let id = sweepPass.pending.popLast() {
            connections[id]?.sweep(now: now)
            left -= 1
        }
        guard !sweepPass.pending.isEmpty else { return }
        let timer = sweepPass.next ?? Timer(loop: loop)
        sweepPass.next = timer
        guard !timer.isClosed else { return }  // the loop is closing its handles
        timer.start(after: 1) { [weak self] in self?.sweepNextSlice() }
    }
}
