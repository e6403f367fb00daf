import SpotterCore
import SpotterPorts
import WebSocket

/// Everything `spotter serve` can be told. Defaults suit a phone app talking
/// to one server; each limit says why it is what it is.
public struct ServerConfig: Sendable {
    public var host = "127.0.0.1"
    /// Where every rule reads the time (`SystemClock`; tests pass a `TestClock` and move it).
    public var clock: any Clock = SystemClock()
    /// 0 picks a free port (tests); the bound port is reported by `Server.port`.
    public var port = 8080
    public var backlog: Int32 = 1024
    /// Where SQLite keeps its files.
    public var dataDirectory = "data"

    /// Largest WebSocket message accepted, in bytes. Chat messages are at
    /// most 1,000 characters (4 KiB of UTF-8); 64 KiB leaves room for
    /// structured cards without letting one client pin megabytes. Larger
    /// messages close the connection with 1009 as soon as the frame header
    /// announces them.
    public var maxMessageBytes = 64 * 1024
    /// Largest backlog of unsent bytes per connection. A client that stops
    /// reading is disconnected (1008) once this much piles up, so a slow
    /// reader costs at most this much memory and never delays anyone else.
    public var maxOutboundBytes = 1024 * 1024
    /// Unsent bytes of all one account's sockets together, counting the kernel's send queues (SIOCOUTQ) as
    /// well as the server's: many sockets of one account that never read cannot each hold
    /// `maxOutboundBytes`. Past it the account's slowest sockets (the most held) are closed with 1008 until
    /// the rest are under it. 4 MiB: a user's few devices each a full second of heavy traffic behind.
    public var maxAccountOutboundBytes = 4 * 1024 * 1024
    /// The kernel's send buffer per socket (SO_SNDBUF, which Linux doubles for its bookkeeping), set on
    /// accept. Without it Linux grows a socket's buffer up to `tcp_wmem`'s maximum (4 MiB) for a peer that
    /// never reads, out of the server's reach; with it, what the kernel holds per socket is known and small.
    /// 256 KiB keeps a fast link (≈ 20 Mbit/s at 100 ms) full. 0 leaves the kernel's autotuning.
    public var socketSendBufferBytes = 256 * 1024
    /// Largest HTTP request body (sign-up and similar JSON requests). Uploads (attachments, the avatar) have
    /// their own limits (10 MB, 5 MB) and stream to disk instead of memory.
    public var maxRequestBodyBytes = 64 * 1024
    /// Upload bytes being received at once, over all connections (each upload counts its `Content-Length`
    /// from its admitted head until it is answered). Past it an upload is refused from its head with 503
    /// `unavailable` and `Retry-After: 1`, before its body is read. Bodies go to disk, not memory; the bound
    /// keeps the disk and the worker pool's share for uploads in proportion: 256 MiB is 25 uploads of 10 MB at once.
    public var maxUploadBytesInFlight = 256 * 1024 * 1024
    /// A request's head and body must arrive within this many seconds of its
    /// first byte, else 408 and close: a head sent a byte at a time
    /// (slowloris) cannot hold a connection.
    public var requestTimeoutSeconds = 10
    /// With both set (PEM files), every connection on the port speaks TLS (HTTPS, wss://); a TLS handshake
    /// must also finish within `requestTimeoutSeconds` of the connection. SIGHUP reads them again.
    public var tlsCertificatePath: String?
    public var tlsKeyPath: String?
    /// Connections still in the HTTP phase (not yet upgraded). When a new
    /// one would pass the bound, the oldest one waiting for a request is
    /// closed to admit it, so idle or slow heads cannot lock real clients out.
    public var maxHTTPConnections = 4096

    /// A connection that sends nothing for this long is closed. WebSocket
    /// connections are pinged after `pingInterval` of silence, so a live
    /// client always answers in time; a phone that lost signal does not,
    /// and is gone within this bound instead of lingering until TCP gives up.
    public var idleTimeoutSeconds = 60
    /// Silence after which the server pings. Defaults to half the idle timeout.
    public var pingIntervalSeconds: Int?
    /// How long the server waits for the peer's close frame or FIN after it
    /// sent its own close, before dropping the socket.
    public var closeTimeoutSeconds = 5
    /// How long a SIGTERM/SIGINT shutdown waits for closing handshakes.
    public var shutdownGraceSeconds = 10
    /// What operators and load balancers see: `/metrics` protection, `/readyz` before a drain (`OperatorSettings`).
    public var operators = OperatorSettings()

    /// Peers whose PROXY v2 header and `X-Forwarded-For` name the client (`--trusted-proxy`); empty: nobody's.
    public var trustedProxies = TrustedProxies()
    /// Browser origins allowed to connect; empty allows all.
    public var allowedOrigins: Set<String> = []
    /// Serves an echo WebSocket endpoint at `/echo` (conformance runs and benchmarks only).
    public var echoEnabled = false
    /// Serve the JavaScript client and the console from this folder (laid out as `Sources/SpotterWeb/files`,
    /// read once at start) instead of the copies compiled in: for working on them without a rebuild.
    public var webRoot: String?

    /// Secret for signing access tokens (HS256), at least 32 bytes. The
    /// command line keeps one in the data directory so restarts do not sign
    /// everyone out; nil makes a random one for this process.
    public var tokenSecret: [UInt8]?
    /// Access tokens are short-lived: 15 minutes.
    public var accessTokenLifetimeSeconds: Int64 = 900
    /// Refresh tokens last 30 days and rotate on every use.
    public var refreshTokenLifetimeSeconds: Int64 = 30 * 24 * 3600
    /// A socket gets `auth.expiring` this long before its token lapses.
    public var tokenExpiryWarningSeconds: Int64 = 60
    /// Commands one socket may send: a burst of `commandBurst`, then
    /// `commandsPerSecond`. Past it a command gets `rate_limited`; the
    /// socket stays open.
    public var commandBurst = 60
    public var commandsPerSecond = 30
    /// Per account, over all its sockets (in one process), within any 60 s: `session.invite` and
    /// `session.request` together, and `session.act`. Past either a command gets `rate_limited` with
    /// `retry_after`: five sockets of one coach once sent 135 invites a second into a client's calendar.
    public var sessionCreatesPerMinute = 30
    public var sessionActsPerMinute = 120

    /// Records handed to the log and not yet durable, past which sends are
    /// refused at once with `rate_limited` (an overload shows as refusals;
    /// what is accepted is acknowledged quickly). Measured at 30,000 msgs/s offered (LoadTests/README,
    /// "Overload"): 4,096 → p99 ack 613 ms, 1,024 → 146 ms, 512 → 96 ms but refusals already at 12,800/s.
    public var maxAppendsInFlight = 1024
    /// How often the chat views are checkpointed (a restart replays the log after the last one).
    public var checkpointIntervalMilliseconds: UInt64 = 1000
    /// `--log-tap`: a file every record of the log is appended to as a JSON line, by a durable consumer (`LogTap`).
    public var logTapPath: String?
    /// Web Push (issue 28): the VAPID public key, the base64url (no padding) of the uncompressed P-256 point (65
    /// bytes from 0x04), that browsers subscribe with (`GET /v1/push/vapid-public-key`). nil: no Web Push, and the
    /// endpoint answers 404 `push_not_configured`. Set from `--webpush-vapid-key`'s key pair.
    public var webPushPublicKey: String?
    /// Durable consumers of the log besides the tap (each on its own thread, each with its own saved position).
    public var logConsumers: [any LogConsumer] = []
    /// Session reminders off the app (issue 28, item 7): the sender of each off-app channel (`email`, `sms`) the
    /// server has a gateway for. Empty (the default): no reminder goes off the app and the `reminders` consumer does
    /// not run. `spotter serve` sets one per gateway (`--sms-gateway-url`, `--email-gateway-url`).
    public var reminderSenders: [ReminderChannel: any NotificationTextSender] = [:]
    /// How the log's consumers poll, batch and back off.
    public var logConsumerTiming = LogConsumerTiming()
    /// Push notifications (issue 28): the providers (none: no pushes are decided) and how pushes are worded,
    /// coalesced, queued and retried.
    public var push = PushSettings()
    /// Outbound webhooks (issue 29): what sends them, how long they are retried, the outbox's bound.
    public var webhooks = WebhookSettings()
    /// Sign in with Apple and Google (issue 30): the providers' audiences and key sets.
    public var identity = IdentitySettings()
    /// Crash tests only (`SPOTTER_FAIL_POINT`): the moment at which the process kills itself (`FailPoint`).
    public var failPoints = FailPoints()

    /// Video sessions: the meeting link is this base URL plus a room name with 128 random bits.
    public var meetBaseURL = "https://meet.jit.si/"
    /// How long before a session's start a join is accepted, and the "starting soon" notice is sent.
    public var sessionJoinEarlySeconds: Int64 = 600
    public var sessionReminderSeconds: Int64 = 600
    /// A session in progress completes by itself this long after its end.
    public var sessionAutoCompleteSeconds: Int64 = 1800

    /// `--edit-window`: how long after a send its sender may edit it.
    public var editWindowSeconds: Int64 = 86_400
    /// `--purge-within`: how soon after a delete or an erasure its bytes are gone from disk (the purge runs by then).
    public var purgeWithinSeconds: Int64 = 3600

    /// Subscription tiers (seed 000 §4): clients' monthly message and video-call quotas. Off: nothing is limited.
    public var tiers = false
    /// Ratings (seed 000 "In-App Ratings"): clients are asked to rate their coach after every 10th message and
    /// after each completed video session.
    public var ratings = false

    /// scrypt cost (N = 2^logN). 15 in production; tests lower it for speed.
    public var passwordHashLogN = 15
    /// Threads that hash passwords (scrypt, ~50-100 ms each at logN 15).
    /// They are apart from the database pool, so a sign-in storm cannot
    /// delay reads; one keeps a core free for everything else on a 2-core box.
    public var hashThreads = 1
    /// Event-loop threads (`spotter serve --loops`, issue 33 item 3), within `loopRange`. Loop 0 owns the core,
    /// the HTTP API, the accounts, the timers and the broker; loops 1…N-1 (`SocketLoop`) own the app sockets
    /// moved to them by descriptor after their upgrade (`TCPConnection.detachDescriptor`), messages and frames
    /// crossing in per-iteration batches (`LoopMailbox`, `LoopOutbox`). TLS sockets stay on loop 0.
    public var loops = 1
    public static let loopRange = 1...64
    /// Hashes that may wait for a hashing thread. Past it, sign-up and
    /// sign-in get 429 `server_busy` with `Retry-After: 1`.
    public var hashQueueLimit = 16
    /// Sign-ups per client address per hour (each one costs a hash and an account).
    public var signupsPerHour = 20

    /// Development mode (never in production): the phone-code reply carries
    /// the code when codes go to the log, and `POST /v1/dev/reset-limits`
    /// clears the per-address and per-account limits.
    public var development = false
    /// `POST /v1/admin/provision` (bulk accounts with tokens, for load tests) exists only with this set.
    public var loadTestProvisioning = false

    public init() {}

    public var effectivePingIntervalSeconds: Int {
        Self.effectivePingInterval(pingIntervalSeconds, idle: idleTimeoutSeconds)
    }

    static func effectivePingInterval(_ ping: Int?, idle: Int) -> Int { max(1, ping ?? idle / 2) }
}
