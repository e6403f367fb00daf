import WebSocket

/// The static files Spotter serves: the JavaScript client at `/clients/spotter.js` (and its types,
/// `/clients/spotter.d.ts`) and the web console under `/console/`. They are compiled into the binary; a developer
/// working on them may serve a folder instead (`--web-root`, read once at start: nothing touches the disk on the
/// loop).
public struct WebFiles: Sendable {
    struct File: Sendable {
        var type: String
        var body: [UInt8]
    }

    /// URL path → file.
    let files: [String: File]

    /// The console's script modules (ES modules, no build step): `console.js`, which index.html loads, and every
    /// module it imports, each served at `/console/<name>`. A new module goes here, in `embedded` and in
    /// Package.swift's resources.
    static let consoleModules = [
        "console.js", "admin.js", "chat.js", "client.js", "clock.js", "conversation.js", "dom.js", "figures.js",
        "checkins.js", "format.js", "i18n.js", "language.js", "metrics.js", "page.js", "push.js", "sessions.js", "signin.js",
        "state.js", "storage.js", "threads.js", "availability.js",
    ]

    /// Where each file is served, and its place under a web root.
    static let layout: [(path: String, file: String, type: String)] = [
        ("/clients/spotter.js", "spotter.js", "text/javascript; charset=utf-8"),
        ("/clients/spotter.d.ts", "spotter.d.ts", "text/plain; charset=utf-8"),
        ("/console/", "console/index.html", "text/html; charset=utf-8"),
        ("/console/console.css", "console/console.css", "text/css; charset=utf-8"),
        // The console's service worker (browser notifications): a classic script, not one of the page's modules,
        // served under /console/ so that its scope is the console.
        ("/console/push-worker.js", "push-worker.js", "text/javascript; charset=utf-8"),
    ] + consoleModules.map { ("/console/" + $0, "console/" + $0, "text/javascript; charset=utf-8") }

    /// The files compiled in.
    public static let embedded = WebFiles(contents: [
        "spotter.js": PackageResources.spotter_js, "spotter.d.ts": PackageResources.spotter_d_ts,
        "console/index.html": PackageResources.index_html, "console/console.css": PackageResources.console_css,
        "console/console.js": PackageResources.console_js, "console/admin.js": PackageResources.admin_js,
        "console/chat.js": PackageResources.chat_js, "console/client.js": PackageResources.client_js,
        "console/clock.js": PackageResources.clock_js, "console/conversation.js": PackageResources.conversation_js,
        "console/dom.js": PackageResources.dom_js, "console/figures.js": PackageResources.figures_js,
        "console/format.js": PackageResources.format_js, "console/i18n.js": PackageResources.i18n_js,
        "console/language.js": PackageResources.language_js, "console/metrics.js": PackageResources.metrics_js,
        "console/page.js": PackageResources.page_js, "console/push.js": PackageResources.push_js,
        "push-worker.js": PackageResources.push_worker_js, "console/sessions.js": PackageResources.sessions_js,
        "console/signin.js": PackageResources.signin_js, "console/state.js": PackageResources.state_js,
        "console/storage.js": PackageResources.storage_js, "console/threads.js": PackageResources.threads_js,
        "console/availability.js": PackageResources.availability_js,
        "console/checkins.js": PackageResources.checkins_js,
    ])

    init(contents: [String: [UInt8]]) {
        var files: [String: File] = [:]
        for entry in Self.layout { files[entry.path] = File(type: entry.type, body: contents[entry.file] ?? []) }
        self.files = files
    }

    /// The same files read from `root` (laid out as `Sources/SpotterWeb/files`), for working on them without a
    /// rebuild. Throws naming the first file it cannot read.
    public static func load(root: String, read: (String) throws -> [UInt8]) throws -> WebFiles {
        var contents: [String: [UInt8]] = [:]
        for entry in layout { contents[entry.file] = try read(root + "/" + entry.file) }
        return WebFiles(contents: contents)
    }

    /// The console's pages allow only this server's own scripts, styles, images and sockets: no inline script,
    /// no other origin, no framing.
    public static let contentSecurityPolicy =
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self' ws: wss:; "
        + "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

    /// The answer to `GET` of `path`, or nil if it is not one of these files. `/console` redirects to
    /// `/console/`.
    public func response(method: String, path: String) -> HTTPResponse? {
        if path == "/console" {
            return HTTPResponse(status: 308, headers: [("Location", "/console/")])
        }
        guard let file = files[path] else { return nil }
        guard method == "GET" else { return HTTPResponse(status: 405, headers: [("Allow", "GET")]) }
        var headers: [(name: String, value: String)] = [
            ("Content-Type", file.type), ("Cache-Control", "no-cache"), ("X-Content-Type-Options", "nosniff"),
            ("Referrer-Policy", "no-referrer"), ("Content-Security-Policy", Self.contentSecurityPolicy),
            ("Cross-Origin-Opener-Policy", "same-origin"),
        ]
        if path.hasPrefix("/clients/") { headers.append(("Access-Control-Allow-Origin", "*")) }  // apps on other origins import it
        return HTTPResponse(status: 200, headers: headers, body: file.body)
    }
}
