import EventLoop
import Testing

@Suite("TCP over loopback")
struct TCPTests {
    /// A listener that echoes, and a client that sends `payload` and
    /// collects the echo; both sides closed once it is back.
    private func echoRoundTrip(payload: [UInt8]) throws -> (echoed: [UInt8], closes: Int, open: Int, queuedAtStart: Int) {
        let loop = Loop()
        let listener = TCPListener(loop: loop)
        var serverSide: [TCPConnection] = []
        var closes = 0
        try listener.listen(host: "127.0.0.1", port: 0) { connection in
            serverSide.append(connection)
            connection.onRead = { bytes in connection.send(bytes) }
            connection.onEnd = { _ in connection.close() }
            connection.onClose = { closes += 1 }
            connection.startReading()
        }
        var echoed: [UInt8] = []
        var queuedAtStart = -1
        TCPConnection.connect(loop: loop, to: try SocketAddress(host: "127.0.0.1", port: listener.port)) { result in
            guard case .success(let client) = result else {
                Issue.record("connect failed: \(result)")
                listener.close()
                return
            }
            client.onClose = { closes += 1 }
            client.onRead = { bytes in
                echoed.append(contentsOf: bytes)
                if echoed.count == payload.count {
                    client.close()
                    listener.close()
                }
            }
            client.onEnd = { _ in client.close() }
            client.startReading()
            client.send(payload)
            queuedAtStart = client.queuedBytes
        }
        loop.run()
        let open = loop.openHandleCount
        loop.closeAllHandles()
        return (echoed, closes, open, queuedAtStart)
    }

    @Test func smallPayloadEchoesAndEveryHandleClosesOnce() throws {
        let payload = Array("hello loop".utf8)
        let result = try echoRoundTrip(payload: payload)
        #expect(result.echoed == payload)
        #expect(result.closes == 2)  // client and server side, once each
        #expect(result.open == 0)
    }

    @Test func largeWriteIsQueuedThenDeliveredIntact() throws {
        // Far more than the socket buffers hold: part must wait in a uv_write.
        let payload = (0..<(16 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 11) }
        let result = try echoRoundTrip(payload: payload)
        #expect(result.queuedAtStart == payload.count)  // queued until the loop flushes
        #expect(result.echoed.count == payload.count)
        #expect(result.echoed == payload)
        #expect(result.closes == 2)
    }

    @Test func connectToAClosedPortFailsCleanly() throws {
        let loop = Loop()
        let probe = TCPListener(loop: loop)
        try probe.listen(host: "127.0.0.1", port: 0) { $0.close() }
        let port = probe.port
        probe.close()
        var failure: UVError?
        TCPConnection.connect(loop: loop, to: try SocketAddress(host: "127.0.0.1", port: port)) { result in
            if case .failure(let error) = result { failure = error }
        }
        loop.run()
        #expect(failure?.name == "ECONNREFUSED")
        #expect(loop.openHandleCount == 0)
    }

    @Test func bindingABusyPortThrows() throws {
        let loop = Loop()
        let first = TCPListener(loop: loop)
        try first.listen(host: "127.0.0.1", port: 0) { $0.close() }
        let second = TCPListener(loop: loop)
        #expect(throws: UVError.self) { try second.listen(host: "127.0.0.1", port: first.port) { $0.close() } }
        first.close()
        second.close()
        loop.closeAllHandles()
    }
    @Test func writeCompletionsFireInOrderOnceTheKernelHasTheBytes() throws {
        let loop = Loop()
        let listener = TCPListener(loop: loop)
        var received = 0
        let big = [UInt8](repeating: 7, count: 8 << 20)
        try listener.listen(host: "127.0.0.1", port: 0) { connection in
            connection.onRead = { bytes in
                received += bytes.count
                if received == 3 + big.count { connection.close() }
            }
            connection.onEnd = { _ in connection.close() }
            connection.startReading()
        }
        var events: [String] = []
        var canceled: UVError?
        TCPConnection.connect(loop: loop, to: try SocketAddress(host: "127.0.0.1", port: listener.port)) { result in
            guard case .success(let client) = result else { return }
            client.send([1, 2]) { events.append("small \($0 == nil) \(received)") }
            client.send(big) { error in
                events.append("big \(error == nil) queued \(client.queuedBytes)")
                // Pending when the connection closes: reported as canceled.
                client.send(big) { canceled = $0 }
                client.close()
                listener.close()
            }
            client.send([3])  // no completion: must not disturb the others
            #expect(events.isEmpty)  // nothing is written before the loop flushes
        }
        loop.run()
        #expect(events.count == 2)
        #expect(events.first == "small true 0")  // taken by the kernel, not yet read by the peer
        #expect(events.last == "big true queued 0")  // [3] went out in the same write
        #expect(canceled == .canceled)
        loop.closeAllHandles()
    }
}
