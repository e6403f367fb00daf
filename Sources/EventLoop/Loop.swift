import CLibUV
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A libuv event loop and the thread that runs it.
///
/// Everything on a `Loop` — handles, connections, timers, and the state the
/// server keeps for them — belongs to the thread inside `run()`, and is
/// touched only there. Two members are safe from any thread: `execute(_:)`
/// (hands a job to the loop through a `uv_async_t`) and `runBlocking(_:then:)`
/// called from the loop (runs a job on libuv's thread pool, delivers the
/// result back on the loop).
///
/// Per loop, not per connection: one 64 KiB read buffer that every
/// connection reads into, and one list of connections with output to flush,
/// written out once per loop iteration just before libuv polls (Redis's
/// `beforeSleep`), so many small sends to one socket become one syscall.
public final class Loop: @unchecked Sendable {
    let raw: UnsafeMutablePointer<uv_loop_t>
    /// The shared read buffer. A read callback consumes its bytes before
    /// returning, so one buffer serves every connection on the loop.
    let readBuffer: UnsafeMutableRawPointer
    let readBufferSize = 64 * 1024

    private let wakeup: UnsafeMutablePointer<uv_async_t>
    private let beforePoll: UnsafeMutablePointer<uv_prepare_t>
    private let afterPoll: UnsafeMutablePointer<uv_check_t>
    private let inbox = Mutex<[@Sendable () -> Void]>([])
    private var owner: pthread_t?
    private var handlesClosed = false

    /// Connections with queued output, flushed before the next poll.
    var pendingFlush: [TCPConnection] = []
    /// Run once per iteration before output is flushed (`everyIteration`).
    private var iterationHooks: [() -> Void] = []

    public init() {
        raw = .allocate(capacity: 1)
        let status = uv_loop_init(raw)
        precondition(status == 0, "uv_loop_init failed: \(UVError(status))")
        readBuffer = .allocate(byteCount: 64 * 1024, alignment: 16)
        wakeup = .allocate(capacity: 1)
        beforePoll = .allocate(capacity: 1)
        afterPoll = .allocate(capacity: 1)

        uv_async_init(raw, wakeup) { handle in Loop.from(handle!.pointee.data).drainInbox() }
        wakeup.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        uv_unref(handlePointer(wakeup))

        uv_prepare_init(raw, beforePoll)
        beforePoll.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        uv_prepare_start(beforePoll) { handle in Loop.from(handle!.pointee.data).flushPending() }
        uv_unref(handlePointer(beforePoll))

        // Also flush right after I/O callbacks, so replies written while
        // reading go out in the same iteration.
        uv_check_init(raw, afterPoll)
        afterPoll.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        uv_check_start(afterPoll) { handle in Loop.from(handle!.pointee.data).flushPending() }
        uv_unref(handlePointer(afterPoll))
    }

    deinit {
        if !handlesClosed { closeAllHandles() }
        uv_loop_close(raw)
        raw.deallocate()
        readBuffer.deallocate()
        wakeup.deallocate()
        beforePoll.deallocate()
        afterPoll.deallocate()
    }

    static func from(_ pointer: UnsafeMutableRawPointer?) -> Loop {
        Unmanaged<Loop>.fromOpaque(pointer!).takeUnretainedValue()
    }

    // MARK: - Running

    /// Runs the loop on the calling thread until `stop()` is called or no
    /// referenced handle or request is left (the loop's own wake-up and
    /// flush handles do not count). The calling thread becomes the loop
    /// thread. A server keeps its loop alive with its listener; jobs handed
    /// to `execute` after `run()` returned wait for the next `run()`.
    public func run() {
        owner = pthread_self()
        uv_run(raw, UV_RUN_DEFAULT)
    }

    /// Makes `run()` return after the current iteration. Loop thread only.
    public func stop() {
        assertOnLoop()
        uv_stop(raw)
    }

    /// Closes every handle still open (each one's close callback frees it)
    /// and runs the loop until they are gone; jobs still waiting in
    /// `execute`'s inbox are dropped. Loop thread, after `run()` returned.
    public func closeAllHandles() {
        handlesClosed = true
        uv_walk(raw, { handle, arg in
            guard let handle, uv_is_closing(handle) == 0 else { return }
            if Loop.from(arg).isInternal(handle) {
                uv_close(handle, nil)  // freed in deinit
            } else if let data = handle.pointee.data {
                Unmanaged<LoopHandle>.fromOpaque(data).takeUnretainedValue().close()
            }
        }, Unmanaged.passUnretained(self).toOpaque())
        uv_run(raw, UV_RUN_DEFAULT)
        // Jobs handed in after the loop stopped can no longer run; dropping
        // them also drops what they hold (often this loop, through LoopBound).
        inbox.withLock { $0.removeAll() }
        pendingFlush.removeAll()
    }

    /// Handles open on the loop that belong to callers (timers, sockets,
    /// signals), not counting ones already closing. Loop thread only; for
    /// leak checks in tests.
    public var openHandleCount: Int {
        var count = 0
        withUnsafeMutablePointer(to: &count) { counter in
            let context = (Unmanaged.passUnretained(self).toOpaque(), UnsafeMutableRawPointer(counter))
            withUnsafePointer(to: context) { contextPointer in
                uv_walk(raw, { handle, arg in
                    let context = arg!.load(as: (UnsafeMutableRawPointer, UnsafeMutableRawPointer).self)
                    guard let handle, uv_is_closing(handle) == 0, !Loop.from(context.0).isInternal(handle) else { return }
                    context.1.assumingMemoryBound(to: Int.self).pointee += 1
                }, UnsafeMutableRawPointer(mutating: contextPointer))
            }
        }
        return count
    }

    private func isInternal(_ handle: UnsafeMutablePointer<uv_handle_t>) -> Bool {
        handle == handlePointer(wakeup) || handle == handlePointer(beforePoll) || handle == handlePointer(afterPoll)
    }

    /// True on the thread running this loop.
    public var isOnLoop: Bool {
        guard let owner else { return true }  // not running yet: the creating thread owns it
        return pthread_equal(owner, pthread_self()) != 0
    }

    /// Traps when called off the loop thread (release builds too: a loop-owned
    /// type touched from another thread is a data race, not a slowdown).
    @inline(__always)
    public func assertOnLoop(file: StaticString = #fileID, line: UInt = #line) {
        precondition(isOnLoop, "called off the loop thread", file: file, line: line)
    }

    /// The loop's cached clock in milliseconds, updated once per iteration.
    public var nowMilliseconds: UInt64 { uv_now(raw) }

    // MARK: - Cross-thread

    /// Runs `job` on the loop thread. Safe from any thread; jobs run in the
    /// order they were submitted. libuv coalesces wake-ups, so each wake-up
    /// drains the whole inbox.
    public func execute(_ job: @escaping @Sendable () -> Void) {
        inbox.withLock { $0.append(job) }
        uv_async_send(wakeup)
    }

    /// A completion any thread may call: `body` runs with its value on this
    /// loop. Create it on the loop (it holds `body`, which may capture
    /// loop-owned state, without letting another thread touch it).
    public func completion<Value: Sendable>(_ body: @escaping (Value) -> Void) -> @Sendable (Value) -> Void {
        let bound = LoopBound(body, loop: self)
        return { [self] value in execute { bound.value(value) } }
    }

    private func drainInbox() {
        let jobs = inbox.withLock { jobs -> [@Sendable () -> Void] in
            defer { jobs.removeAll(keepingCapacity: true) }
            return jobs
        }
        for job in jobs { job() }
    }

    /// Runs `work` on libuv's thread pool (for anything that can block:
    /// hashing, disk, SQLite) and then `completion` with its result on the
    /// loop thread. Call from the loop thread.
    public func runBlocking<Result: Sendable>(
        _ work: @escaping @Sendable () -> Result,
        then completion: @escaping (Result) -> Void
    ) {
        assertOnLoop()
        let job = BlockingJob(work: work, completion: completion)
        let request = UnsafeMutablePointer<uv_work_t>.allocate(capacity: 1)
        request.pointee.data = Unmanaged.passRetained(job).toOpaque()
        let status = uv_queue_work(raw, request, { request in
            Unmanaged<AnyBlockingJob>.fromOpaque(request!.pointee.data).takeUnretainedValue().runWork()
        }, { request, _ in
            let job = Unmanaged<AnyBlockingJob>.fromOpaque(request!.pointee.data).takeRetainedValue()
            request!.deallocate()
            job.complete()
        })
        precondition(status == 0, "uv_queue_work failed: \(UVError(status))")
    }

    // MARK: - Output batching

    /// Runs `hook` on every iteration, after I/O callbacks and before the
    /// loop polls: where work gathered during one iteration is handed on in
    /// one piece (the log's group of appends). Loop thread only.
    public func everyIteration(_ hook: @escaping () -> Void) {
        assertOnLoop()
        iterationHooks.append(hook)
    }

    func scheduleFlush(_ connection: TCPConnection) {
        pendingFlush.append(connection)
    }

    /// Flushes until nothing is pending: a flush can complete a write whose
    /// callback queues more (an HTTP connection answering its next pipelined
    /// request), and the loop must not poll with bytes still unwritten.
    private func flushPending() {
        for hook in iterationHooks { hook() }
        while !pendingFlush.isEmpty {
            let batch = pendingFlush
            pendingFlush.removeAll(keepingCapacity: true)
            for connection in batch { connection.flush() }
        }
    }
}

/// Type-erased so the C callbacks can reach a job without knowing `Result`.
class AnyBlockingJob: @unchecked Sendable {
    func runWork() {}
    func complete() {}
}

/// Written once on a pool thread, read once on the loop thread after libuv's
/// completion callback, which orders the two.
final class BlockingJob<Result: Sendable>: AnyBlockingJob, @unchecked Sendable {
    let work: @Sendable () -> Result
    let completion: (Result) -> Void
    var result: Result?

    init(work: @escaping @Sendable () -> Result, completion: @escaping (Result) -> Void) {
        self.work = work
        self.completion = completion
    }

    override func runWork() { result = work() }
    override func complete() { completion(result!) }
}

/// A libuv error code with its name and message.
public struct UVError: Error, Equatable, Sendable, CustomStringConvertible {
    public var code: Int32
    public init(_ code: Int32) { self.code = code }
    public var name: String { String(cString: uv_err_name(code)) }
    public var description: String { "\(name): \(String(cString: uv_strerror(code)))" }

    public static let endOfFile = UVError(Int32(UV_EOF.rawValue))
    public static let canceled = UVError(Int32(UV_ECANCELED.rawValue))
}

@inline(__always)
func handlePointer<T>(_ pointer: UnsafeMutablePointer<T>) -> UnsafeMutablePointer<uv_handle_t> {
    UnsafeMutableRawPointer(pointer).assumingMemoryBound(to: uv_handle_t.self)
}

@inline(__always)
func streamPointer<T>(_ pointer: UnsafeMutablePointer<T>) -> UnsafeMutablePointer<uv_stream_t> {
    UnsafeMutableRawPointer(pointer).assumingMemoryBound(to: uv_stream_t.self)
}
