import CLibUV

#if canImport(Glibc)
import Glibc
#endif

/// A loop with a thread of its own (`--loops N`: the loops after the first). It runs from `init` until
/// `stop()`: a control mailbox keeps it alive while nothing else is open, and `stop()` closes every handle left
/// on it (the sockets too) from its own thread, then the thread ends. `join()` waits for that.
public final class LoopThread: @unchecked Sendable {
    public let loop: Loop
    /// Jobs for the loop that keep it running (`Loop.execute`'s wake-up does not: it is unreferenced).
    private let control: LoopMailbox<Control>
    private var thread: pthread_t?

    enum Control: Sendable {
        case run(@Sendable () -> Void)
        case stop
    }

    /// Starts the thread. `open` runs first, on the calling thread before the loop runs (handles made there are
    /// ready when `init` returns); then `setUp` on the loop's thread, before anything posted.
    public init(name: String, open: (Loop) -> Void = { _ in }, setUp: @escaping @Sendable (Loop) -> Void = { _ in }) {
        let loop = Loop()
        self.loop = loop
        open(loop)
        control = LoopMailbox(loop: loop) { jobs in
            for job in jobs {
                switch job {
                case .run(let body): body()
                case .stop: loop.stop()
                }
            }
        }
        control.post(.run { setUp(loop) })
        let box = Unmanaged.passRetained(ThreadBody { [loop] in
            loop.run()
            loop.closeAllHandles()  // the control mailbox and whatever the loop still holds
        })
        var made = pthread_t()
        let status = pthread_create(&made, nil, { raw in
            let body = Unmanaged<ThreadBody>.fromOpaque(raw!).takeRetainedValue()
            body.run()
            return nil
        }, box.toOpaque())
        precondition(status == 0, "pthread_create failed: \(status)")
        thread = made
        _ = name  // for the reader: Glibc here exposes neither pthread_setname_np nor prctl to Swift
    }

    /// Runs `job` on the loop's thread, in order with everything else posted. Any thread.
    public func execute(_ job: @escaping @Sendable () -> Void) { control.post(.run(job)) }

    /// Stops the loop after what was posted before; every handle still open on it is closed. Any thread.
    public func stop() { control.post(.stop) }

    /// Waits for the thread to end (after `stop()`). Not from the loop's own thread.
    public func join() {
        guard let thread else { return }
        self.thread = nil
        pthread_join(thread, nil)
    }
}

private final class ThreadBody {
    let run: () -> Void
    init(_ run: @escaping () -> Void) { self.run = run }
}
