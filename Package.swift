// swift-tools-version: 6.1
//
// The module graph makes DESIGN.md's diagram true: the pure modules
// (Base64Codec, WebSocket, SpotterProtocol, SpotterCore, SpotterBroker, SpotterPushCrypto) import
// neither EventLoop nor SpotterStore; the store's ports (SpotterPorts) import no
// engine, and each engine (SpotterStore: SQLite; SpotterPostgres) depends on the
// ports, never on the other engine; SpotterServer is the shell that joins them.
// (`PortsBoundaryTests` fails if SpotterPostgres depends on SpotterStore again or
// a port imports GRDB.)
import PackageDescription

let package = Package(
    name: "spotter",
    // iOS: for SpotterClient (the package an iOS app adds; the server's modules are not built for it).
    platforms: [.macOS(.v15), .iOS(.v16)],
    products: [
        .executable(name: "spotter", targets: ["spotter"]),
        .executable(name: "spotter-echo-bench", targets: ["EchoBench"]),
        .executable(name: "spotter-load", targets: ["LoadGenerator"]),
        .executable(name: "spotter-session-bench", targets: ["SessionBench"]),
        .executable(name: "spotter-dashboard-bench", targets: ["DashboardBench"]),
        .executable(name: "spotter-slots-bench", targets: ["SlotsBench"]),
        .executable(name: "spotter-log-bench", targets: ["LogBench"]),
        // The Swift package an iOS app adds to talk to Spotter (issue 32), and its command-line example.
        .library(name: "SpotterClient", targets: ["SpotterClient"]),
        .executable(name: "spotter-chat", targets: ["SpotterChat"]),
    ],
    // Exact versions: this is an application, and a fresh clone must build what was tested. (Package.resolved
    // stays out of git: this machine's package mirror has its own commit ids.)
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", exact: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", exact: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", exact: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", exact: "2.4.1"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", exact: "0.2.0"),
    ],
    targets: [
        // C libraries from Debian, found through pkg-config.
        .systemLibrary(name: "CLibUV", pkgConfig: "libuv", providers: [.apt(["libuv1-dev"])]),
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
        // libssl, for TLS on the loop (SpotterTLS); its own module so the crypto users do not rebuild for it.
        .systemLibrary(name: "CTLS", pkgConfig: "libssl", providers: [.apt(["libssl-dev"])]),
        // The cluster engines' clients: NATS (broker) and PostgreSQL (store).
        .systemLibrary(name: "CNATS", pkgConfig: "libnats", providers: [.apt(["libnats-dev"])]),
        .systemLibrary(name: "CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        // HTTP/2 for the push providers (libcurl with nghttp2).
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        // Thumbnails of uploaded images (SpotterImages): libjpeg-turbo and libpng.
        .systemLibrary(name: "CJPEG", pkgConfig: "libjpeg", providers: [.apt(["libjpeg62-turbo-dev"])]),
        .systemLibrary(name: "CPNG", pkgConfig: "libpng", providers: [.apt(["libpng-dev"])]),

        // libuv in Swift: loop, TCP, timers, cross-thread wake-ups, work queue.
        .target(name: "EventLoop", dependencies: ["CLibUV"]),
        .target(name: "SpotterTLS", dependencies: ["CTLS", "EventLoop"]),

        // The one base64 (RFC 4648, strict), shared by the handshake and the tokens. Pure.
        .target(name: "Base64Codec"),

        // HTTP/1.1 heads and bodies, the upgrade handshake, RFC 6455 frames,
        // UTF-8 validation, close codes. Pure: no sockets, no clock.
        .target(name: "WebSocket", dependencies: ["COpenSSL", "Base64Codec"]),

        // The wire types: commands, replies, events, error codes with their
        // English and Arabic messages. Pure; mirrors Protocol/.
        .target(name: "SpotterProtocol"),

        // The rules: validation, OTP, rate limits, access policy, and the
        // crypto they need (scrypt, HS256, random). Pure but for randomness.
        .target(name: "SpotterCore", dependencies: ["SpotterProtocol", "COpenSSL", "Base64Codec"]),

        // The push providers' cryptography: Web Push encryption (RFC 8291) and VAPID (RFC 8292), the APNs provider
        // token, the FCM service-account grant and its access token. Pure: no sockets, no clock.
        .target(name: "SpotterPushCrypto", dependencies: ["COpenSSL", "Base64Codec", "SpotterCore"]),

        // The push providers: APNs, FCM HTTP v1 and Web Push over HTTP/2 (libcurl on its own thread), behind
        // SpotterPorts' PushProvider; their keys loaded by PushProviderSettings. Wired by the `spotter` executable.
        .target(
            name: "SpotterPush",
            dependencies: [
                "SpotterPorts", "SpotterCore", "SpotterPushCrypto", "CCurl",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // The store's ports, with no engine in them: the log's (ChatLogEngine, ChatStore, FollowableLog, TimerLease,
        // ConsumableLog and LogConsumer), the accounts' (AccountsEngine) and a server's storage (ServerStorage), the
        // values they carry, and what both engines share: the SQL dialect they both speak (SQLDatabase) with the
        // accounts' and attachments' SQL written once over it (AccountStore, AttachmentStore), the log's halt after a
        // failed append, and the writer skeleton both engines' writers are (BatchWriter: one thread, group commit,
        // completions after commit).
        .target(name: "SpotterPorts", dependencies: ["SpotterCore", "SpotterProtocol"]),

        // SQLite through GRDB: the schema and its migrations, the group-commit writer with its checkpointer, and
        // the SQLite engines of the ports: the log (ChatLog), the accounts (SQLiteAccounts), a server's storage
        // (SQLiteStorage).
        .target(
            name: "SpotterStore",
            dependencies: [
                "SpotterPorts", "SpotterCore",
                .product(name: "GRDB", package: "GRDB.swift"),
                // SQLite's C API, as GRDB exports it: the writer binds its per-message statements directly.
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // The fan-out seam: the Broker protocol (and presence) with its in-process engine.
        .target(name: "SpotterBroker", dependencies: ["WebSocket"], exclude: ["BROKER.md"]),

        // The cluster broker: the Broker port on NATS (subjects per user, cluster-wide presence with heartbeats).
        .target(
            name: "SpotterNATS",
            dependencies: ["CNATS", "EventLoop", "SpotterBroker", .product(name: "Logging", package: "swift-log")]
        ),

        // The cluster store: the ports (the log, the accounts, a server's storage) on PostgreSQL through libpq, on its
        // own writer thread. It depends on the ports, not on SpotterStore: nothing of SQLite comes with it.
        .target(
            name: "SpotterPostgres",
            dependencies: [
                "CLibPQ", "SpotterPorts", "SpotterCore", "SpotterProtocol",
                .product(name: "Logging", package: "swift-log"),
            ],
            exclude: ["CLUSTER.md"]
        ),

        // The files Spotter serves to browsers: the JavaScript client (Protocol/clients/js, linked here) and the
        // web console, compiled into the binary.
        .target(
            name: "SpotterWeb",
            dependencies: ["WebSocket"],
            resources: [
                .embedInCode("files/spotter.js"),
                .embedInCode("files/spotter.d.ts"),
                .embedInCode("files/push-worker.js"),  // the console's service worker
                .embedInCode("files/console/index.html"),
                .embedInCode("files/console/console.css"),
                // The console's ES modules (WebFiles.consoleModules).
                .embedInCode("files/console/console.js"),
                .embedInCode("files/console/availability.js"),
                .embedInCode("files/console/admin.js"),
                .embedInCode("files/console/chat.js"),
                .embedInCode("files/console/client.js"),
                .embedInCode("files/console/clock.js"),
                .embedInCode("files/console/conversation.js"),
                .embedInCode("files/console/dom.js"),
                .embedInCode("files/console/figures.js"),
                .embedInCode("files/console/format.js"),
                .embedInCode("files/console/i18n.js"),
                .embedInCode("files/console/language.js"),
                .embedInCode("files/console/metrics.js"),
                .embedInCode("files/console/page.js"),
                .embedInCode("files/console/push.js"),
                .embedInCode("files/console/sessions.js"),
                .embedInCode("files/console/signin.js"),
                .embedInCode("files/console/state.js"),
                .embedInCode("files/console/storage.js"),
                .embedInCode("files/console/threads.js"),
                .embedInCode("files/console/checkins.js"),
            ]
        ),

        // The client library for apps (iOS 16+, macOS 13+ APIs, Linux): of the server's modules it depends on the pure
        // SpotterProtocol only (the wire types, shared: Sources/SpotterClient/README.md, "Wire types"). On Linux its
        // socket is built on the pure WebSocket codec (swift-corelibs-foundation's URLSessionWebSocketTask needs a
        // libcurl with WebSockets); on Apple platforms it uses URLSessionWebSocketTask. Sources/SpotterClient/README.md.
        .target(
            name: "SpotterClient",
            dependencies: [
                "SpotterProtocol",
                .target(name: "WebSocket", condition: .when(platforms: [.linux])),
                .target(name: "CTLS", condition: .when(platforms: [.linux])),  // wss:// on Linux (Transport/TLSStream.swift)
            ],
            exclude: ["README.md"]
        ),
        // `spotter-chat`: signs in and chats from stdin, through SpotterClient.
        .executableTarget(name: "SpotterChat", dependencies: ["SpotterClient"]),

        // Thumbnails: JPEG and PNG decoded (bounded in pixels before decoding), scaled and encoded as a small JPEG.
        // Pure and blocking (no files, no loop): the server calls it on the worker pool.
        .target(name: "SpotterImages", dependencies: ["CJPEG", "CPNG"]),

        // Connection hub, HTTP side door, metrics: the shell around the pure modules.
        .target(
            name: "SpotterServer",
            dependencies: [
                "EventLoop", "SpotterTLS", "WebSocket", "SpotterPorts", "SpotterStore", "SpotterProtocol", "SpotterCore", "SpotterBroker", "SpotterWeb",
                "SpotterImages",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ]
        ),

        // Sign-in codes through an SMS gateway's HTTP API: the one module that links Foundation's networking.
        .target(name: "SpotterSMS", dependencies: ["SpotterServer"]),

        .executableTarget(
            name: "spotter",
            dependencies: [
                "SpotterServer", "SpotterPorts", "SpotterStore", "SpotterCore", "SpotterProtocol", "SpotterSMS", "SpotterPostgres", "SpotterNATS",
                "SpotterPush",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // What the load tools share: clocks, /proc readings, formatting, the WebSocket client's socket and upgrade,
        // latency summaries, writing results.
        .target(
            name: "LoadSupport",
            dependencies: ["EventLoop", "WebSocket", .product(name: "Histogram", package: "hdrhistogram-swift")],
            path: "LoadTests/LoadSupport"
        ),

        // Load tests: the echo benchmark.
        .executableTarget(
            name: "EchoBench",
            dependencies: [
                "EventLoop", "WebSocket", "LoadSupport",
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "LoadTests/EchoBench"
        ),

        // The load generator: thousands of real sockets speaking Spotter's protocol.
        .executableTarget(
            name: "LoadGenerator",
            dependencies: [
                "EventLoop", "WebSocket", "LoadSupport",
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "LoadTests/LoadGenerator"
        ),

        // The session book's calendar and booking, timed without sockets or disk.
        .executableTarget(
            name: "SessionBench",
            dependencies: [
                "SpotterCore",
                "SpotterProtocol",
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "LoadTests/SessionBench"
        ),
        // The coach's dashboard over a year of record per client, timed without sockets or disk.
        .executableTarget(
            name: "DashboardBench",
            dependencies: [
                "SpotterCore",
                "SpotterProtocol",
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "LoadTests/DashboardBench"
        ),
        // Free slots for a coach with many sessions (issue 30), timed without sockets or disk.
        .executableTarget(
            name: "SlotsBench",
            dependencies: [
                "SpotterCore",
                "SpotterProtocol",
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "LoadTests/SlotsBench"
        ),

        // The log's append path on SQLite and on PostgreSQL, timed without the server.
        .executableTarget(
            name: "LogBench",
            dependencies: [
                "SpotterPorts", "SpotterStore", "SpotterPostgres", "SpotterCore", "LoadSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "LoadTests/LogBench"
        ),

        // A seeded random generator (SplitMix64) for tests that replay from their seed; depends on nothing.
        .target(name: "SeededRandom", path: "Tests/SeededRandom"),
        // Shared test helpers: a small blocking WebSocket/HTTP client and a
        // server runner for integration tests.
        .target(
            name: "TestSupport",
            dependencies: [
                "WebSocket", "SpotterServer", "SpotterPorts", "SpotterStore", "SpotterPostgres", "SpotterNATS",
                "COpenSSL",  // IDTokenForge: RSA keys and RS256 tokens of a stand-in sign-in provider
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/TestSupport"
        ),
        .testTarget(name: "WebSocketTests", dependencies: ["WebSocket", "Base64Codec", "SeededRandom"]),
        .testTarget(name: "EventLoopTests", dependencies: ["EventLoop"]),
        .testTarget(name: "LoadSupportTests", dependencies: ["LoadSupport", "EventLoop", "WebSocket", "TestSupport"]),
        .testTarget(name: "SpotterProtocolTests", dependencies: ["SpotterProtocol", "SeededRandom"]),
        // SpotterClient against the real `spotter` binary over real sockets (kill -9 included), and its wire types
        // against Protocol/'s transcripts and schemas.
        .testTarget(name: "SpotterClientTests", dependencies: ["SpotterClient", "TestSupport"]),
        .testTarget(name: "SpotterImagesTests", dependencies: ["SpotterImages"]),
        .testTarget(name: "SpotterPushCryptoTests", dependencies: ["SpotterPushCrypto", "Base64Codec", "SeededRandom"]),
        // The providers against local stand-ins (Tests/scripts/push-standins.py: h2, PyJWT, http_ece).
        .testTarget(name: "SpotterPushTests", dependencies: ["SpotterPush", "SpotterPorts", "SpotterCore", "SpotterPushCrypto", "TestSupport"]),
        .testTarget(name: "SpotterCoreTests", dependencies: ["SpotterCore", "SpotterProtocol", "Base64Codec", "SeededRandom"]),
        // The deterministic simulator: the core and the commit pipeline under a seeded schedule of commands,
        // crashes and restarts over a simulated log, with the invariants checked after every step. No sockets,
        // no SQLite, no threads (SpotterStore for the start's own `LoadedChat`; no database is opened).
        .testTarget(name: "SpotterSimulationTests", dependencies: ["SpotterCore", "SpotterProtocol", "SpotterPorts", "SpotterStore", "SeededRandom"], exclude: ["README.md"]),
        // The log's conformance suite runs against every engine, PostgreSQL's included (a temp cluster).
        .testTarget(name: "SpotterStoreTests", dependencies: ["SpotterPorts", "SpotterStore", "SpotterPostgres", "TestSupport"]),
        .testTarget(name: "SpotterNATSTests", dependencies: ["SpotterNATS", "SpotterBroker", "EventLoop", "SpotterCore", "TestSupport"]),
        .testTarget(name: "SpotterPostgresTests", dependencies: ["SpotterPostgres", "SpotterPorts", "SpotterCore", "TestSupport", "SeededRandom"]),
        // Several real `spotter serve` processes on one PostgreSQL and one NATS server (cluster mode).
        .testTarget(name: "SpotterClusterTests", dependencies: ["TestSupport", "SeededRandom"]),
        .testTarget(
            name: "SpotterServerTests",
            dependencies: ["SpotterServer", "SpotterPorts", "SpotterStore", "TestSupport", "WebSocket", "SpotterProtocol", "SpotterCore", "SpotterSMS",
                           "SeededRandom", "SpotterPush", "SpotterImages", "SpotterTLS", "SpotterBroker"]
        ),
    ]
)
