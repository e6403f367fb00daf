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
}
