import CCurl
import Foundation
import Synchronization

/// An HTTP client for the push services: HTTP/2 over TLS through libcurl's multi interface, on one dedicated
/// thread.
///
/// `send` only queues the request and wakes the thread (`curl_multi_wakeup`); nothing blocks its caller. The thread
/// runs up to `maxInFlight` requests at once, multiplexed as streams over kept-alive connections (`PIPEWAIT`: a new
/// request waits for an open connection's free stream rather than opening another); the rest wait in the queue.
/// `https://` URLs speak HTTP/2 (ALPN), `http://` ones (local tests) HTTP/1.1. Completions run on the client's
/// thread, once each.
public final class HTTP2Client: @unchecked Sendable {
    public struct Options: Sendable {
        /// A PEM file of certificates to trust instead of the system's (the local stand-ins' own CA); nil in
        /// production.
        public var caFile: String?
        /// A request's whole time, connecting included, unless it names its own.
        public var timeoutSeconds: Double
        public var connectTimeoutSeconds: Double
        /// Requests on the wire at once; more wait in the queue.
        public var maxInFlight: Int
        /// Connections per host (each carries up to `maxInFlight` streams; more open only when a server limits
        /// its streams).
        public var maxConnectionsPerHost: Int
        /// The largest answer body kept (push services answer with a few hundred bytes of JSON); a larger one ends
        /// the request with a transport error.
        public var maxResponseBytes: Int
        /// The thread's name.
        public var name: String

        public init(caFile: String? = nil, timeoutSeconds: Double = 30, connectTimeoutSeconds: Double = 10,
                    maxInFlight: Int = 200, maxConnectionsPerHost: Int = 4, maxResponseBytes: Int = 64 * 1024,
                    name: String = "push-http2") {
            self.caFile = caFile
            self.timeoutSeconds = timeoutSeconds
            self.connectTimeoutSeconds = connectTimeoutSeconds
            self.maxInFlight = max(1, maxInFlight)
            self.maxConnectionsPerHost = max(1, maxConnectionsPerHost)
            self.maxResponseBytes = max(0, maxResponseBytes)
            self.name = name
        }
    }

    public typealias Completion = @Sendable (Result<HTTPResponse, HTTPClientError>) -> Void

    struct Queued {
        var request: HTTPRequest
        var completion: Completion
    }

    private struct Shared {
        var queue: [Queued] = []
        var stopping = false
        var stopped = false
    }

    public let options: Options
    private let shared = Mutex(Shared())
    private let finished = NSCondition()
    private var isFinished = false   // guarded by `finished`
    /// Set once in `init`, read-only after: curl_multi_wakeup is the one multi call that is safe from any thread.
    private let multi: UnsafeMutableRawPointer
    private var thread: Thread?

    /// Starts the client's thread. Fails (a precondition) only when libcurl cannot make a multi handle.
    public init(options: Options = Options()) {
        _ = Self.globalInit
        self.options = options
        guard let multi = curl_multi_init() else { preconditionFailure("curl_multi_init failed") }
        self.multi = multi
        spotter_curl_multi_setopt_long(multi, CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX)
        spotter_curl_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, options.maxConnectionsPerHost)
        spotter_curl_multi_setopt_long(multi, CURLMOPT_MAX_CONCURRENT_STREAMS, options.maxInFlight)
        let thread = Thread { [self] in run() }
        thread.name = options.name
        self.thread = thread
        thread.start()
    }

    /// Whether this libcurl speaks HTTP/2 (built with nghttp2).
    public static var supportsHTTP2: Bool { spotter_curl_has_http2() != 0 }

    private static let globalInit: Void = { curl_global_init(Int(CURL_GLOBAL_DEFAULT)) }()

    /// Queues `request`; `completion` runs once on the client's thread. After `shutdown()` it runs at once, on the
    /// caller's thread, with `.shutdown`.
    public func send(_ request: HTTPRequest, completion: @escaping Completion) {
        let accepted = shared.withLock { state in
            guard !state.stopping else { return false }
            state.queue.append(Queued(request: request, completion: completion))
            return true
        }
        guard accepted else { return completion(.failure(.shutdown)) }
        curl_multi_wakeup(multi)
    }

    /// Requests waiting for a place on the wire (not counting those in flight).
    public var queuedCount: Int { shared.withLock { $0.queue.count } }

    /// Stops the thread: every request queued or in flight completes with `.shutdown` before this returns.
    /// Idempotent. From a completion (the client's own thread) it only asks the thread to stop.
    public func shutdown() {
        let first = shared.withLock { state in
            defer { state.stopping = true }
            return !state.stopping
        }
        if first { curl_multi_wakeup(multi) }
        if Thread.current === thread { return }
        finished.lock()
        while !isFinished { finished.wait() }
        finished.unlock()
    }

    deinit {
        curl_multi_cleanup(multi)
    }

    // MARK: The client's thread

    private func run() {
        var active: [Transfer] = []
        while true {
            let (incoming, stopping) = shared.withLock { state -> ([Queued], Bool) in
                if state.stopping { return ([], true) }
                let room = max(0, options.maxInFlight - active.count)
                let taken = Array(state.queue.prefix(room))
                state.queue.removeFirst(taken.count)
                return (taken, false)
            }
            if stopping { break }
            for item in incoming {
                switch Transfer.make(item, options: options) {
                case .success(let transfer):
                    curl_multi_add_handle(multi, transfer.easy)
                    active.append(transfer)
                case .failure(let error):
                    item.completion(.failure(error))
                }
            }
            var running: Int32 = 0
            curl_multi_perform(multi, &running)
            var left: Int32 = 0
            while let message = curl_multi_info_read(multi, &left) {
                guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
                let code = message.pointee.data.result
                guard let index = active.firstIndex(where: { $0.easy == easy }) else { continue }
                let transfer = active.remove(at: index)
                curl_multi_remove_handle(multi, easy)
                transfer.finish(code)
            }
            curl_multi_poll(multi, nil, 0, 1000, nil)
        }
        // Stopping: whatever is queued or in flight ends now.
        let queued = shared.withLock { state in
            defer { state.queue.removeAll() }
            return state.queue
        }
        for transfer in active {
            curl_multi_remove_handle(multi, transfer.easy)
            transfer.fail(.shutdown)
        }
        for item in queued { item.completion(.failure(.shutdown)) }
        finished.lock()
        isFinished = true
        finished.broadcast()
        finished.unlock()
    }
}
