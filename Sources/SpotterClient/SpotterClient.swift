import Foundation

/// How a `SpotterClient` reaches its server and behaves.
public struct SpotterConfiguration: Sendable {
    /// The server, e.g. `https://chat.example.com` (the socket is `wss://…/v1/ws`).
    public var url: URL
    /// The session's tokens (from sign-in); the client rotates them and reports new ones as `.tokens` events.
    public var tokens: Tokens
    /// `Accept-Language` (`en` or `ar`): the language of error messages. Nil: the user's saved language.
    public var language: String?
    /// Where the cursor and the outbox are kept. Default: in memory.
    public var persistence: any SpotterPersistence
    /// The cursor to resume from when `persistence` has none.
    public var cursor: Int?
    public var transport: any WebSocketTransport
    /// Certificate authorities trusted for wss:// besides the system's (a private deployment's, a test's): given to the
    /// Linux transport when it has none of its own. HTTP calls do not use them (README.md: TLS on Linux).
    public var trustedCertificates: TrustedCertificates?
    /// Reconnect delays: full jitter under `minDelay · 2^attempt`, at most `maxDelay` (milliseconds).
    public var minDelayMilliseconds: Int
    public var maxDelayMilliseconds: Int
    /// A command with no reply in this time fails with `timeout` (a send is sent again instead).
    public var commandTimeout: Duration
    /// A connect with no `hello` in this time is given up and retried.
    public var connectTimeout: Duration
    /// Sends in flight at once. 1 (the default) keeps a conversation in the order it was typed even when the server
    /// asks a send to wait (`rate_limited`): nothing overtakes it.
    public var sendWindow: Int
    /// Random numbers in [0, 1) for the jitter.
    public var random: @Sendable () -> Double
    /// The wall clock (token expiry checks).
    public var now: @Sendable () -> Date
    /// The app's own refresh (e.g. through its backend); nil: `POST /v1/auth/refresh` and `auth.refresh`.
    public var refresh: (@Sendable (_ refreshToken: String) async throws -> Tokens)?

    public init(url: URL, tokens: Tokens, language: String? = nil, persistence: any SpotterPersistence = InMemoryPersistence(),
                cursor: Int? = nil, transport: any WebSocketTransport = DefaultWebSocketTransport(),
                minDelayMilliseconds: Int = 250, maxDelayMilliseconds: Int = 30_000,
                commandTimeout: Duration = .seconds(15), connectTimeout: Duration = .seconds(10), sendWindow: Int = 1,
                random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) },
                now: @escaping @Sendable () -> Date = { Date() },
                refresh: (@Sendable (String) async throws -> Tokens)? = nil, trustedCertificates: TrustedCertificates? = nil) {
        self.url = url
        self.tokens = tokens
        self.language = language
        self.persistence = persistence
        self.cursor = cursor
        self.transport = transport
        self.minDelayMilliseconds = minDelayMilliseconds
        self.maxDelayMilliseconds = maxDelayMilliseconds
        self.commandTimeout = commandTimeout
        self.connectTimeout = connectTimeout
        self.sendWindow = sendWindow
        self.random = random
        self.now = now
        self.refresh = refresh
        self.trustedCertificates = trustedCertificates
    }
}

/// Spotter's live socket for an app: connects with the token, resumes from the last delivered cursor (dropping what
/// it already delivered), reconnects with full jitter (or the server's `retry_after_ms`), keeps every send until it
/// is acknowledged and sends it again after reconnects with the same `client_message_id`, refreshes the token on the
/// socket (`auth.expiring`) or over HTTP (4001), and stops for good on 4003/4004. See README.md.
public actor SpotterClient {
    public let configuration: SpotterConfiguration
    public let http: SpotterHTTP
    public internal(set) var state: ConnectionState = .idle
    /// The last logged event delivered (nil before the first `hello`).
    public internal(set) var cursor: Int?
    public internal(set) var user: User?
    public internal(set) var tokens: Tokens
    /// When the socket's token ends (Unix seconds).
    public internal(set) var expiresAt: Int?

    var wanted = false
    var connection: (any WebSocketConnection)?
    var generation = 0
    var greeted = false
    var replaying = false
    var helloCursor: Int?
    var refusal: SpotterError?
    var attempt = 0
    var retryTask: Task<Void, Never>?
    var connectTimer: Task<Void, Never>?
    var pending: [String: Pending] = [:]
    var waiting: [Waiting] = []
    var outbox: [OutboxEntry]
    var inFlight: Set<String> = []
    var blocked: Set<String> = []
    var ackWaiters: [String: [CheckedContinuation<Message, any Error>]] = [:]
    var subscribers: [UUID: AsyncStream<SpotterEvent>.Continuation] = [:]
    var nextId = 1
    let prefix: String
    var socketRefresh = false
    var httpRefresh: Task<Void, any Error>?

    enum Pending {
        case command(CheckedContinuation<Data, any Error>, timer: Task<Void, Never>)
        case send(clientMessageId: String, timer: Task<Void, Never>)
    }

    struct Waiting {
        var type: String
        var fields: [String: JSONValue]
        var continuation: CheckedContinuation<Data, any Error>
    }

    /// A client with the state `configuration.persistence` holds (its cursor and the sends not yet acknowledged, which
    /// go out once connected).
    public init(configuration: SpotterConfiguration) {
        self.configuration = configuration
        http = SpotterHTTP(baseURL: configuration.url, language: configuration.language)
        tokens = configuration.tokens
        let saved = (try? configuration.persistence.load()) ?? PersistedState()
        cursor = saved.cursor ?? configuration.cursor
        outbox = saved.outbox
        let random = UInt64(configuration.random() * 0x1_0000_0000)
        prefix = "ios-\(String(UInt64(configuration.now().timeIntervalSince1970 * 1000), radix: 36))-\(String(random, radix: 36))"
    }

    /// A client the app let go of without `close()` lets its socket go too.
    deinit {
        retryTask?.cancel()
        connectTimer?.cancel()
        connection?.close(code: 1000, reason: "bye")
    }

    // MARK: - Events

    /// A new stream of every event from now on (one per listener; it ends when the listener stops iterating).
    public func events() -> AsyncStream<SpotterEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: SpotterEvent.self)
        let id = UUID()
        subscribers[id] = continuation
        continuation.onTermination = { [weak self] _ in
            Task { await self?.unsubscribe(id) }
        }
        return stream
    }

    func unsubscribe(_ id: UUID) { subscribers[id] = nil }

    func emit(_ event: SpotterEvent) {
        for continuation in subscribers.values { continuation.yield(event) }
    }

    func setState(_ new: ConnectionState) {
        guard new != state else { return }
        state = new
        emit(.state(new))
    }

    func persist() {
        do {
            try configuration.persistence.save(PersistedState(cursor: cursor, outbox: outbox))
        } catch {
            emit(.error(SpotterError(code: "persistence_failed", message: "The client could not save its state: \(error)")))
        }
    }

    // MARK: - The connection

    /// Opens the socket and keeps it open until `close()` (or the session is revoked).
    public func connect() {
        wanted = true
        switch state {
        case .idle, .closed:
            setState(.connecting)
            Task { await open() }
        default: break
        }
    }

    /// Closes the socket; nothing reconnects. Commands and `send` callers waiting fail with `closed`; the outbox stays
    /// in the persistence, and a later `connect()` (or a new client on the same persistence) sends it.
    public func close() {
        wanted = false
        retryTask?.cancel()
        retryTask = nil
        dropConnection(code: 1000, reason: "bye")
        failPending(.closed, waitingToo: true, dropOutbox: false)
        setState(.closed(nil))
    }

    func dropConnection(code: Int, reason: String) {
        connectTimer?.cancel()
        connectTimer = nil
        guard let connection else { return }
        self.connection = nil
        generation += 1  // whatever this connection still reports is ignored
        connection.close(code: code, reason: reason)
    }

    func open() async {
        retryTask = nil
        guard wanted, connection == nil else { return }
        setState(.connecting)
        // A token that has expired (or will within 2 s) is refreshed before it is refused.
        if let expiry = Reconnect.tokenExpiry(tokens.accessToken), Double(expiry) - configuration.now().timeIntervalSince1970 < 2 {
            do {
                try await refreshOverHTTP()
            } catch let error as SpotterError where (400..<500).contains(error.status ?? 0) {
                return stop(.signedOut, error)
            } catch {
                return retryLater()
            }
        }
        guard wanted, connection == nil, state == .connecting else { return }
        var components = URLComponents(url: configuration.url.appendingPathComponent("v1/ws"), resolvingAgainstBaseURL: false)
        components?.scheme = configuration.url.scheme == "https" ? "wss" : "ws"
        if let cursor { components?.queryItems = [URLQueryItem(name: "cursor", value: String(cursor))] }
        guard let url = components?.url else { return stop(.signedOut, SpotterError.badResponse("bad server URL")) }
        var headers = ["Authorization": "Bearer \(tokens.accessToken)"]
        if let language = configuration.language { headers["Accept-Language"] = language }
        let socket = transport.connect(url: url, headers: headers, subprotocols: ["spotter.v1"])
        generation += 1
        let current = generation
        connection = socket
        greeted = false
        replaying = cursor != nil
        refusal = nil
        Task { [weak self] in
            for await event in socket.events { await self?.handle(event, generation: current) }
        }
        let timeout = configuration.connectTimeout
        connectTimer = Task { [weak self] in
            try? await Task.sleep(for: timeout)
            guard !Task.isCancelled else { return }
            await self?.connectTimedOut(current)
        }
    }

    /// The configuration's transport, with the configuration's trusted certificates when it has none.
    var transport: any WebSocketTransport {
        #if os(Linux)
        if var posix = configuration.transport as? POSIXWebSocketTransport, posix.trustedCertificates == nil {
            posix.trustedCertificates = configuration.trustedCertificates
            return posix
        }
        #endif
        return configuration.transport
    }

    func handle(_ event: TransportEvent, generation current: Int) {
        guard current == generation, connection != nil else { return }
        switch event {
        case .opened:
            break
        case .text(let text):
            receive(Data(text.utf8))
        case .refused(let status, let body):
            var error = (try? WireJSON.decode(ErrorBody.self, from: body))?.error
                ?? SpotterError(code: "http_\(status)", message: "The server refused the connection (\(status)).")
            error.status = status
            refusal = error
        case .closed(let code, let reason):
            closed(code: code, reason: reason, timedOut: false)
        }
    }

    func connectTimedOut(_ current: Int) {
        guard current == generation, connection != nil, !greeted else { return }
        emit(.connectTimeout)
        closed(code: 1006, reason: "connect timeout", timedOut: true)
    }

    /// The end of the current socket (closed, failed, or given up).
    func closed(code: Int, reason: String, timedOut: Bool) {
        let heard = state == .live || state == .replaying
        dropConnection(code: 1000, reason: "")
        failPending(.connectionLost, waitingToo: false, dropOutbox: false)
        inFlight.removeAll()
        emit(.disconnected(code: code, reason: reason))
        guard wanted else { return setState(.closed(nil)) }
        if code == 4003 || code == 4004 { return stop(.revoked, nil) }  // 4004: the account was erased
        if timedOut { return retryLater() }
        if code == 1015 {
            // TLS failed (an untrusted certificate, another name's): said to the app, and tried again later (a
            // certificate being replaced). Not a refusal to probe over HTTP: that would fail the same way.
            emit(.error(SpotterError(code: "tls_failed", message: reason)))
            return retryLater()
        }
        if !greeted && code != 1001 {
            // Refused before the hello: why? (the refusal's body, else GET /v1/me)
            setState(.waiting(retryInMilliseconds: nil))
            let refusal = refusal
            Task { await probe(refusal) }
            return
        }
        if code == 4001 {
            // The token lapsed: refresh over HTTP, then reconnect at once.
            setState(.waiting(retryInMilliseconds: nil))
            Task { await refreshThenOpen() }
            return
        }
        if heard { attempt = 0 }
        retryLater(Reconnect.retryAfter(fromReason: reason))
    }

    func probe(_ refusal: SpotterError?) async {
        var error = refusal
        if error == nil {
            do {
                _ = try await http.me(token: tokens.accessToken)
            } catch let failure as SpotterError {
                error = failure
            } catch {}
        }
        guard wanted, connection == nil, retryTask == nil else { return }
        if error?.code == "session_revoked" { return stop(.revoked, error) }
        if error?.code == "token_expired" || error?.code == "unauthorized" {
            do {
                try await refreshOverHTTP()
                return retryLater(0)
            } catch let refused as SpotterError where (400..<500).contains(refused.status ?? 0) {
                return stop(.signedOut, refused)
            } catch {}
        }
        retryLater()
    }

    func refreshThenOpen() async {
        do {
            try await refreshOverHTTP()
            guard wanted, connection == nil, retryTask == nil else { return }
            await open()
        } catch let error as SpotterError where (400..<500).contains(error.status ?? 0) {
            stop(.signedOut, error)
        } catch {
            retryLater()
        }
    }

    /// Schedules the next connect: after `delay` ms when the server said so, else full jitter.
    func retryLater(_ delay: Int? = nil) {
        guard wanted, retryTask == nil, connection == nil else { return }
        let wait = delay ?? Reconnect.backoffMilliseconds(
            attempt: attempt, minDelayMilliseconds: configuration.minDelayMilliseconds,
            maxDelayMilliseconds: configuration.maxDelayMilliseconds, random: configuration.random)
        attempt += 1
        setState(.waiting(retryInMilliseconds: wait))
        retryTask = Task { [weak self] in
            try? await Task.sleep(for: .milliseconds(wait))
            guard !Task.isCancelled else { return }
            await self?.open()
        }
    }

    /// Stops for good: the session is over; the outbox is dropped (its sends fail with the reason).
    func stop(_ reason: StopReason, _ error: SpotterError?) {
        wanted = false
        retryTask?.cancel()
        retryTask = nil
        dropConnection(code: 1000, reason: "")
        failPending(SpotterError(code: reason.rawValue, message: error?.message ?? "Sign in again.", status: error?.status),
                    waitingToo: true, dropOutbox: true)
        setState(.closed(reason))
        emit(.stopped(reason, error))
    }

    func failPending(_ error: SpotterError, waitingToo: Bool, dropOutbox: Bool) {
        let failed = pending
        pending = [:]
        for entry in failed.values {
            switch entry {
            case .command(let continuation, let timer):
                timer.cancel()
                continuation.resume(throwing: error)
            case .send(_, let timer):
                timer.cancel()
            }
        }
        guard waitingToo else { return }
        let commands = waiting
        waiting = []
        for command in commands { command.continuation.resume(throwing: error) }
        let waiters = ackWaiters
        ackWaiters = [:]
        for list in waiters.values { for waiter in list { waiter.resume(throwing: error) } }
        if dropOutbox && !outbox.isEmpty {
            outbox = []
            inFlight = []
            blocked = []
            persist()
            emit(.outbox(pending: 0))
        }
    }
}
