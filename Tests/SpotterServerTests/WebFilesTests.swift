import Foundation
import Testing
import TestSupport
import WebSocket

/// The JavaScript client and the console are served by the server itself, under a strict Content-Security-Policy.
@Suite("Web files", .serialized)
struct WebFilesTests {
    /// The repository's root, from this file's place in it.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test func theClientIsServedAsInTheRepository() throws {
        let server = try TestServer()
        defer { server.stop() }
        let client = try HTTPTestClient(port: server.port)
        let script = try client.request("GET", "/clients/spotter.js")
        #expect(script.status == 200)
        #expect(script.headers["Content-Type"] == "text/javascript; charset=utf-8")
        #expect(script.headers["Access-Control-Allow-Origin"] == "*")
        let onDisk = try [UInt8](Data(contentsOf: Self.root.appendingPathComponent("Protocol/clients/js/spotter.js")))
        #expect(script.body == onDisk, "the binary serves the client of Protocol/clients/js")
        let types = try client.request("GET", "/clients/spotter.d.ts")
        #expect(types.status == 200 && types.bodyText.contains("export declare class SpotterClient"))
    }

    @Test func theConsoleHasAStrictPolicyAndNoOtherMethods() throws {
        let server = try TestServer()
        defer { server.stop() }
        let client = try HTTPTestClient(port: server.port)
        let page = try client.request("GET", "/console/")
        #expect(page.status == 200)
        #expect(page.headers["Content-Type"] == "text/html; charset=utf-8")
        let policy = try #require(page.headers["Content-Security-Policy"])
        #expect(policy.contains("default-src 'none'") && policy.contains("script-src 'self'") && policy.contains("frame-ancestors 'none'"))
        #expect(!policy.contains("unsafe-inline") && !policy.contains("unsafe-eval"))
        #expect(page.headers["X-Content-Type-Options"] == "nosniff")
        #expect(page.headers["Referrer-Policy"] == "no-referrer")
        for file in ["/console/console.js", "/console/console.css"] {
            #expect(try client.request("GET", file).status == 200, "\(file)")
        }
        let bare = try client.request("GET", "/console")
        #expect(bare.status == 308 && bare.headers["Location"] == "/console/")
        let post = try client.request("POST", "/console/", body: "{}")
        #expect(post.status == 405 && post.headers["Allow"] == "GET")
        #expect(try client.request("GET", "/console/other.html").status == 404)
    }

    /// The console is ES modules loaded by the browser itself: index.html's module script and, transitively, every
    /// module it imports must be served as JavaScript, under the same headers as the page, byte for byte as in the
    /// checkout; and every module in the folder must be reached (so a module added to the folder but not to
    /// `WebFiles` fails here, as does an import of a file the server does not serve).
    @Test func everyModuleTheConsoleImportsIsServedAsJavaScript() throws {
        let server = try TestServer()
        defer { server.stop() }
        let served = try Self.walkConsoleModules(port: server.port, root: Self.webRoot)
        #expect(served.sorted() == (try Self.consoleModulesOnDisk(root: Self.webRoot)))
        #expect(served.contains("/clients/spotter.js"))
    }

    /// `--web-root` serves every module from the folder, not the copies compiled in.
    @Test func aWebRootServesEveryModuleFromTheFolder() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("spotter-web-root-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("console"), withIntermediateDirectories: true)
        for name in try FileManager.default.contentsOfDirectory(atPath: Self.webRoot.path) where name != "console" {
            try FileManager.default.copyItem(at: Self.webRoot.appendingPathComponent(name).resolvingSymlinksInPath(),
                                             to: folder.appendingPathComponent(name))
        }
        for name in try FileManager.default.contentsOfDirectory(atPath: Self.webRoot.appendingPathComponent("console").path) {
            var bytes = try Data(contentsOf: Self.webRoot.appendingPathComponent("console/\(name)"))
            if name.hasSuffix(".js") { bytes.append(contentsOf: Array("\n// edited in the web root\n".utf8)) }
            try bytes.write(to: folder.appendingPathComponent("console/\(name)"))
        }
        let server = try TestServer { $0.webRoot = folder.path }
        defer { server.stop() }
        let served = try Self.walkConsoleModules(port: server.port, root: folder)
        #expect(served.sorted() == (try Self.consoleModulesOnDisk(root: folder)))
    }

    /// The console's service worker: JavaScript, from a path under /console/ (so the browser lets it control the
    /// console, scope /console/), as on disk, with the console's headers; not one of the page's modules.
    @Test func theServiceWorkerIsServedUnderTheConsole() throws {
        let server = try TestServer()
        defer { server.stop() }
        let client = try HTTPTestClient(port: server.port)
        let worker = try client.request("GET", "/console/push-worker.js")
        #expect(worker.status == 200)
        #expect(worker.headers["Content-Type"] == "text/javascript; charset=utf-8")
        #expect(worker.headers["Cache-Control"] == "no-cache", "a new worker is picked up at the next check")
        #expect(worker.headers["Service-Worker-Allowed"] == nil, "its own folder is its scope")
        let onDisk = try [UInt8](Data(contentsOf: Self.webRoot.appendingPathComponent("push-worker.js")))
        #expect(worker.body == onDisk)
        #expect(worker.bodyText.contains("addEventListener('push'") && worker.bodyText.contains("addEventListener('notificationclick'"))
        #expect(Self.imports(in: worker.bodyText).isEmpty, "a classic script: no imports")
        let page = try client.request("GET", "/console/push.js")
        #expect(page.status == 200 && page.bodyText.contains("/console/push-worker.js"))
        #expect(try client.request("POST", "/console/push-worker.js", body: "{}").status == 405)
    }

    static let webRoot = root.appendingPathComponent("Sources/SpotterWeb/files")

    /// The URL paths of the console's .js files in `root`'s console folder, and the client they import.
    static func consoleModulesOnDisk(root: URL) throws -> [String] {
        let names = try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("console").path)
        return (names.filter { $0.hasSuffix(".js") }.map { "/console/\($0)" } + ["/clients/spotter.js"]).sorted()
    }

    /// Loads /console/ as a browser would: the page's module scripts, then each module's static imports, resolved
    /// against the importing module's URL. Checks each answer (200, JavaScript, the page's headers, the bytes of the
    /// file under `root`) and returns the URL paths loaded.
    static func walkConsoleModules(port: Int, root: URL) throws -> Set<String> {
        let client = try HTTPTestClient(port: port)
        let page = try client.request("GET", "/console/")
        try #require(page.status == 200)
        var queue = matches(of: #"<script\s+type="module"\s+src="([^"]+)""#, in: page.bodyText)
        #expect(queue == ["/console/console.js"])
        var seen = Set(queue)
        while let path = queue.popLast() {
            let module = try client.request("GET", path)
            guard module.status == 200 else {
                Issue.record("\(path): \(module.status), not 200")
                continue
            }
            #expect(module.headers["Content-Type"] == "text/javascript; charset=utf-8", "\(path)")
            for name in ["Cache-Control", "X-Content-Type-Options", "Referrer-Policy", "Content-Security-Policy", "Cross-Origin-Opener-Policy"] {
                #expect(module.headers[name] == page.headers[name], "\(path): \(name)")
            }
            let file = path.hasPrefix("/clients/") ? String(path.dropFirst("/clients/".count)) : String(path.dropFirst())
            let onDisk = try? [UInt8](Data(contentsOf: root.appendingPathComponent(file).resolvingSymlinksInPath()))
            let asOnDisk = module.body == onDisk
            #expect(asOnDisk, "\(path) is served as it is in \(root.path)")
            let base = try #require(URL(string: "http://127.0.0.1" + path))
            for specifier in imports(in: module.bodyText) {
                let target = try #require(URL(string: specifier, relativeTo: base)?.absoluteURL.path, "\(specifier)")
                if seen.insert(target).inserted { queue.append(target) }
            }
        }
        return seen
    }

    /// The specifiers of a module's static imports and re-exports (`import … from '…'`, `import '…'`,
    /// `export … from '…'`).
    static func imports(in source: String) -> [String] {
        matches(of: #"(?m)^\s*(?:import|export)\s+(?:[\w*${},\s]+?\s+from\s+)?['"]([^'"]+)['"]"#, in: source)
    }

    static func matches(of pattern: String, in text: String) -> [String] {
        let regex = try! NSRegularExpression(pattern: pattern)
        let range = NSRange(text.startIndex..., in: text)
        return regex.matches(in: text, range: range).compactMap { match in
            Range(match.range(at: 1), in: text).map { String(text[$0]) }
        }
    }
}
