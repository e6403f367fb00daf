import Dispatch
import Foundation
import Testing
import TestSupport
import WebSocket
@testable import SpotterServer

/// The once-a-second sweep (pings, deadlines, token expiry) goes over the connections a slice per loop
/// iteration (`Server+Sweep`): no iteration sweeps more than `sweepSlice`, and every connection is still swept.
@Suite("Sweep in slices: bounded per iteration, every connection reached", .serialized)
struct SweepSliceTests {
    @Test func everyOneOfManySilentSocketsIsPingedThoughEachIterationSweepsASlice() throws {
        let count = 2 * Server.sweepSlice + 37
        let server = try TestServer {
            $0.idleTimeoutSeconds = 30
            $0.pingIntervalSeconds = 1
        }
        defer { server.stop() }
        var clients: [WebSocketTestClient] = []
        for _ in 0..<count { clients.append(try WebSocketTestClient(port: server.port)) }

        // One pass started by hand: the first slice is swept at once, the rest wait for the next iterations.
        let left = DispatchSemaphore(value: 0)
        let seen = Seen()
        let inner = server.server
        inner.loop.execute {
            seen.open = inner.connections.count
            inner.beginSweepPass()
            seen.pendingAfterFirstSlice = inner.sweepPass.pending.count
            left.signal()
        }
        left.wait()
        #expect(seen.open == count)
        #expect(seen.pendingAfterFirstSlice == count - Server.sweepSlice)

        // Every silent socket gets its ping (the once-a-second passes reach the last slice too).
        for (index, client) in clients.enumerated() {
            #expect(try client.next() == .ping([]), "socket \(index) of \(count)")
        }
    }

    /// Read on the loop, checked on the test's thread after a semaphore (which orders the two).
    final class Seen: @unchecked Sendable {
        var open = 0
        var pendingAfterFirstSlice = -1
    }
}
