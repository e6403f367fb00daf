import CLibUV
import Synchronization

/// Items handed to one loop from other threads in batches: the way work crosses between the loops of a
/// process (`--loops N`) without a lock per item.
///
/// A producer appends to a `Mutex`-guarded array and wakes the loop with `uv_async_send` (libuv coalesces
/// wake-ups); the loop swaps the whole array out under the lock once per wake-up and hands it to `receive` in
/// the order it was posted. A producer on a loop of its own gathers its items in a `LoopOutbox` and posts them
/// once per iteration of its loop, so the lock is taken once per iteration on each side, not once per item.
/// The two arrays are swapped, not copied: in steady state a batch allocates nothing.
///
/// The mailbox's wake-up handle keeps its loop running until `close()` (a loop that serves only the sockets
/// another loop hands it has no listener to keep it alive). Create and close it on its loop's thread; `post`
/// from any thread. What is posted after `close()` is dropped.
public final class LoopMailbox<Item: Sendable>: WakeUpHandle, @unchecked Sendable {
    private let pending = Mutex<(items: [Item], open: Bool)>(([], true))
    /// The batch being received, swapped with `pending` (its capacity comes back). Loop thread only.
    private var receiving: [Item] = []
    private var receive: (([Item]) -> Void)?

    /// - Parameter receive: runs on `loop` with every batch, items in the order they were posted.
    public init(loop: Loop, _ receive: @escaping ([Item]) -> Void) {
        self.receive = receive
        super.init(loop: loop)
    }

    /// Hands `item` to the loop. Any thread.
    public func post(_ item: Item) {
        pending.withLock { state in
            guard state.open else { return }
            state.items.append(item)
            wakeUp()
        }
    }

    /// Hands every item of `items` to the loop in order, under one lock. Any thread.
    public func post(contentsOf items: [Item]) {
        guard !items.isEmpty else { return }
        pending.withLock { state in
            guard state.open else { return }
            state.items.append(contentsOf: items)
            wakeUp()
        }
    }

    /// Called under the lock, while the mailbox is open: `close()` on the loop closes it under the same lock
    /// first, so no wake-up can reach a handle being freed.
    private func wakeUp() {
        uv_async_send(UnsafeMutableRawPointer(handle).assumingMemoryBound(to: uv_async_t.self))
    }

    /// Receives what is waiting now (also called by libuv on a wake-up). Loop thread.
    public override func drain() {
        loop.assertOnLoop()
        pending.withLock { state in swap(&state.items, &receiving) }
        guard !receiving.isEmpty else { return }
        receive?(receiving)
        receiving.removeAll(keepingCapacity: receiving.capacity <= 4096)
    }

    override func willClose() {
        // Nothing posted from now on reaches the handle; what was posted before is received first.
        pending.withLock { $0.open = false }
        drain()
    }

    override func didClose() { receive = nil }
}

/// What one loop sends another, gathered during an iteration and posted as one batch before the loop polls
/// (`Loop.everyIteration`): one lock per iteration however many items. Loop thread (the producer's) only.
public final class LoopOutbox<Item: Sendable> {
    private let mailbox: LoopMailbox<Item>
    private var gathered: [Item] = []

    /// - Parameters:
    ///   - loop: the producer's loop, where `append` is called.
    ///   - mailbox: the consumer's mailbox.
    public init(from loop: Loop, to mailbox: LoopMailbox<Item>) {
        self.mailbox = mailbox
        loop.everyIteration { [weak self] in self?.flush() }
    }

    public func append(_ item: Item) { gathered.append(item) }

    /// Posts what is gathered now (the loop does it before every poll).
    public func flush() {
        guard !gathered.isEmpty else { return }
        mailbox.post(contentsOf: gathered)
        gathered.removeAll(keepingCapacity: gathered.capacity <= 4096)
    }
}

/// A `uv_async_t` whose wake-up calls `drain` (not generic: libuv's callback is a C function).
public class WakeUpHandle: LoopHandle {
    init(loop: Loop) {
        super.init(loop: loop, type: UV_ASYNC)
        let async = UnsafeMutableRawPointer(handle).assumingMemoryBound(to: uv_async_t.self)
        uv_async_init(loop.raw, async) { async in
            LoopHandle.object(UnsafeMutableRawPointer(async), as: WakeUpHandle.self).drain()
        }
        didInitialize()
    }

    /// Runs on the loop after a wake-up.
    public func drain() {}
}
