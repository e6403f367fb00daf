import CLibUV

/// Base of every libuv handle owned by Swift: timers, signals, TCP.
///
/// Lifetime, per libuv's `handle.rst`: the handle's memory must stay valid
/// until `uv_close`'s callback has run. So the Swift object retains itself
/// through `handle->data` from `init` until that callback, then frees the
/// memory and drops the retain. `close()` is safe to call more than once;
/// only the first call reaches `uv_close`. Loop thread only.
public class LoopHandle {
    public let loop: Loop
    let handle: UnsafeMutablePointer<uv_handle_t>
    private let byteCount: Int
    public private(set) var isClosed = false

    init(loop: Loop, type: uv_handle_type) {
        self.loop = loop
        byteCount = uv_handle_size(type)
        let memory = UnsafeMutableRawPointer.allocate(byteCount: byteCount, alignment: 16)
        memory.initializeMemory(as: UInt8.self, repeating: 0, count: byteCount)
        handle = memory.bindMemory(to: uv_handle_t.self, capacity: 1)
    }

    /// Call after the `uv_*_init` of the concrete type succeeded.
    func didInitialize() {
        handle.pointee.data = Unmanaged.passRetained(self).toOpaque()
    }

    /// Frees the memory of a handle whose `uv_*_init` failed (never registered).
    func discardUninitialized() {
        isClosed = true
        handle.deallocate()
    }

    /// Closes the handle. Its close callback releases it; `didClose` runs then.
    public func close() {
        guard !isClosed else { return }
        isClosed = true
        willClose()
        uv_close(handle) { handle in
            let object = Unmanaged<LoopHandle>.fromOpaque(handle!.pointee.data!).takeRetainedValue()
            object.didClose()
            handle!.deallocate()
        }
    }

    /// Runs just before `uv_close`.
    func willClose() {}
    /// Runs in the close callback, after libuv is done with the handle.
    func didClose() {}

    /// Lets the loop end while this handle is open (`uv_unref`).
    public func unref() { uv_unref(handle) }

    static func object<T: LoopHandle>(_ handle: UnsafeMutableRawPointer?, as: T.Type) -> T {
        let raw = handle!.assumingMemoryBound(to: uv_handle_t.self)
        return Unmanaged<LoopHandle>.fromOpaque(raw.pointee.data!).takeUnretainedValue() as! T
    }
}

/// A libuv timer. Loop thread only.
public final class Timer: LoopHandle {
    private var callback: (() -> Void)?

    public init(loop: Loop) {
        super.init(loop: loop, type: UV_TIMER)
        uv_timer_init(loop.raw, timer)
        didInitialize()
    }

    private var timer: UnsafeMutablePointer<uv_timer_t> {
        UnsafeMutableRawPointer(handle).assumingMemoryBound(to: uv_timer_t.self)
    }

    /// Calls `callback` after `delayMilliseconds`, then every `repeatMilliseconds` if not 0.
    public func start(after delayMilliseconds: UInt64, repeat repeatMilliseconds: UInt64 = 0, _ callback: @escaping () -> Void) {
        precondition(!isClosed, "timer used after close")
        self.callback = callback
        uv_timer_start(timer, { timer in
            LoopHandle.object(UnsafeMutableRawPointer(timer), as: Timer.self).callback?()
        }, delayMilliseconds, repeatMilliseconds)
    }

    public func stop() {
        guard !isClosed else { return }
        uv_timer_stop(timer)
    }

    override func didClose() { callback = nil }
}

/// Watches a POSIX signal on the loop (`uv_signal_t`). Loop thread only.
public final class SignalWatcher: LoopHandle {
    private var callback: ((Int32) -> Void)?

    public init(loop: Loop, signal: Int32, _ callback: @escaping (Int32) -> Void) {
        self.callback = callback
        super.init(loop: loop, type: UV_SIGNAL)
        let signalHandle = UnsafeMutableRawPointer(handle).assumingMemoryBound(to: uv_signal_t.self)
        uv_signal_init(loop.raw, signalHandle)
        didInitialize()
        uv_signal_start(signalHandle, { handle, signum in
            LoopHandle.object(UnsafeMutableRawPointer(handle), as: SignalWatcher.self).callback?(signum)
        }, signal)
    }

    override func didClose() { callback = nil }
}
