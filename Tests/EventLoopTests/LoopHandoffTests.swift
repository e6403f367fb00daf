import EventLoop
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What crosses between the loops of one process (`--loops N`): batches of items, and sockets.
@Suite("Between loops")
struct LoopHandoffTests {
    /// Collects what a mailbox receives, readable from the test's thread.
    final class Received: Sendable {
        let batches = Mutex<[[Int]]>([])
        var all: [Int] { batches.withLock { $0.flatMap { $0 } } }
        var batchCount: Int { batches.withLock { $0.count } }
    }

    /// A value shared between the test's thread and loop threads.
    final class Shared<Value: Sendable>: Sendable {
        let value: Mutex<Value>
        init(_ value: Value) { self.value = Mutex(value) }
        var current: Value { value.withLock { $0 } }
    }

    private func waitUntil(_ condition: () -> Bool) {
        for _ in 0..<500 where !condition() { usleep(10_000) }
    }

    /// A loop thread with a mailbox whose batches go into `received`, once the mailbox exists.
    private func consumerLoop(into received: Received) throws -> (LoopThread, LoopMailbox<Int>) {
        let mailboxBox = Shared<LoopMailbox<Int>?>(nil)
        let consumer = LoopThread(name: "consumer") { loop in
            mailboxBox.value.withLock { $0 = LoopMailbox(loop: loop) { batch in received.batches.withLock { $0.append(batch) } } }
        }
        waitUntil { mailboxBox.current != nil }
        return (consumer, try #require(mailboxBox.current))
    }

    @Test func itemsGatheredInOneIterationCrossAsOneBatchInOrder() throws {
        let received = Received()
        let (consumer, mailbox) = try consumerLoop(into: received)
        let producer = LoopThread(name: "producer")
        producer.execute {
            // One job, one iteration: 1,000 items, one batch (one lock), in the order appended.
            let outbox = LoopOutbox(from: producer.loop, to: mailbox)
            for item in 0..<1000 { outbox.append(item) }
            let kept = LoopBound(outbox, loop: producer.loop)
            producer.execute { _ = kept }  // keeps it until after the iteration's flush
        }
        waitUntil { received.all.count == 1000 }
        #expect(received.all == Array(0..<1000))
        #expect(received.batchCount == 1)
        producer.stop()
        producer.join()
        consumer.stop()
        consumer.join()
    }

    @Test func postsFromManyThreadsKeepEachThreadsOrderAndLoseNothing() throws {
        let received = Received()
        let (consumer, mailbox) = try consumerLoop(into: received)
        let producers = (0..<4).map { index in
            LoopThread(name: "producer \(index)") { _ in
                for step in 0..<2000 { mailbox.post(index * 1_000_000 + step) }
            }
        }
        waitUntil { received.all.count == 8000 }
        let all = received.all
        #expect(all.count == 8000)
        for index in 0..<4 {
            #expect(all.filter { $0 / 1_000_000 == index } == (0..<2000).map { index * 1_000_000 + $0 })
        }
        for producer in producers {
            producer.stop()
            producer.join()
        }
        consumer.stop()
        consumer.join()
    }

    @Test func aStoppedLoopDropsWhatIsPostedAfterItsMailboxClosed() throws {
        let received = Received()
        let (consumer, mailbox) = try consumerLoop(into: received)
        mailbox.post(1)
        consumer.stop()
        consumer.join()
        mailbox.post(2)  // closed: dropped, and no wake-up reaches the freed handle
        #expect(received.all == [1])
    }

    /// A socket accepted on one loop, handed as a descriptor to a loop thread that echoes on it: the peer sees
    /// one connection throughout, bytes sent before and after the move arrive in order.
    @Test func aSocketMovesToAnotherLoopAndKeepsItsBytes() throws {
        let echoer = LoopThread(name: "socket loop")
        let moved = Shared(0)
        let loop = Loop()
        let listener = TCPListener(loop: loop)
        try listener.listen(host: "127.0.0.1", port: 0) { accepted in
            accepted.onRead = { bytes in
                accepted.send(bytes)  // "one" echoed here, then the socket moves on
                accepted.whenDrained { _ in
                    guard let fd = accepted.detachDescriptor() else {
                        Issue.record("could not detach")
                        return
                    }
                    echoer.execute {
                        guard let adopted = try? TCPConnection.adopt(descriptor: fd, loop: echoer.loop) else {
                            Issue.record("could not adopt")
                            return
                        }
                        moved.value.withLock { $0 += 1 }
                        adopted.onRead = { bytes in adopted.send(bytes) }
                        adopted.onEnd = { _ in adopted.close() }
                        adopted.startReading()
                    }
                }
            }
            accepted.startReading()
        }
        var heard: [UInt8] = []
        TCPConnection.connect(loop: loop, to: try SocketAddress(host: "127.0.0.1", port: listener.port)) { result in
            guard case .success(let client) = result else {
                Issue.record("connect failed")
                listener.close()
                return
            }
            client.onRead = { bytes in
                heard.append(contentsOf: bytes)
                if heard == Array("one".utf8) {
                    // Wait for the move before the second message (it must be echoed by the other loop).
                    let poll = Timer(loop: loop)
                    poll.start(after: 5, repeat: 5) {
                        guard moved.current == 1 else { return }
                        poll.close()
                        client.send(Array("two".utf8))
                    }
                } else if heard == Array("onetwo".utf8) {
                    client.close()
                    listener.close()
                }
            }
            client.onEnd = { _ in client.close() }
            client.startReading()
            client.send(Array("one".utf8))
        }
        loop.run()
        loop.closeAllHandles()
        #expect(String(decoding: heard, as: UTF8.self) == "onetwo")
        #expect(moved.current == 1)
        echoer.stop()
        echoer.join()
    }

    @Test func aSocketWithUnsentBytesIsNotDetached() throws {
        let loop = Loop()
        let listener = TCPListener(loop: loop)
        var detached: Int32?? = .none
        try listener.listen(host: "127.0.0.1", port: 0) { accepted in
            accepted.send(Array("queued".utf8))  // not flushed yet: the move must wait
            detached = .some(accepted.detachDescriptor())
            accepted.close()
            listener.close()
        }
        TCPConnection.connect(loop: loop, to: try SocketAddress(host: "127.0.0.1", port: listener.port)) { result in
            if case .success(let client) = result { client.close() }
        }
        loop.run()
        loop.closeAllHandles()
        #expect(detached == .some(nil))
    }
}
