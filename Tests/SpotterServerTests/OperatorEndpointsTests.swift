import Foundation
import Testing
import TestSupport

/// What operators and load balancers get (issue 31 item 3): `/metrics` behind `--metrics-token` or on
/// `--metrics-listen` only, and `/readyz` that answers 503 while the server is about to drain.
@Suite("Metrics and health for operators", .serialized)
struct OperatorEndpointsTests {
    static let token = "metrics-token-0123456789abcdef"

    @Test func metricsNeedTheTokenOrAnAdminsAccessToken() throws {
        let f = try CoachingFixture { $0.operators.metricsToken = Self.token }
        defer { f.server.stop() }
        func scrape(_ headers: [(String, String)]) throws -> APIResponse {
            try f.api.call("GET", "/metrics", headers: headers)
        }
        let none = try scrape([])
        #expect(none.status == 401 && none.errorCode == "unauthorized")
        #expect(none.headers["WWW-Authenticate"]?.hasPrefix("Bearer") == true)
        #expect(!none.text.contains("spotter_connections_open"))
        let arabic = try scrape([("Accept-Language", "ar")])
        #expect(arabic.status == 401 && ((arabic.json["error"] as? [String: Any])?["message"] as? String)?.hasArabic == true)

        for wrong in ["Bearer metrics-token-0123456789abcdeX", "Bearer metrics-token-0123456789abcde", "Bearer " + Self.token + "0",
                      "Bearer ", "Basic " + Self.token, Self.token, "Bearer  " + Self.token,
                      "Bearer " + String(repeating: "A", count: 4000)] {
            let refused = try scrape([("Authorization", wrong)])
            #expect(refused.status == 401 && refused.errorCode == "unauthorized", "\(wrong.prefix(40)): \(refused.status)")
            #expect(refused.headers["WWW-Authenticate"] != nil)
        }

        let good = try scrape([("Authorization", "Bearer " + Self.token)])
        #expect(good.status == 200 && good.text.contains("spotter_connections_open"))
        #expect(good.headers["Content-Type"]?.hasPrefix("text/plain") == true)
        let lowercase = try scrape([("Authorization", "bearer " + Self.token)])
        #expect(lowercase.status == 200)

        // The console's figures: an admin's access token reads them; other signed-in people are refused.
        #expect(try scrape([("Authorization", "Bearer " + f.admin.access)]).status == 200)
        for user in [f.coachX, f.clientA] {
            let refused = try scrape([("Authorization", "Bearer " + user.access)])
            #expect(refused.status == 403 && refused.errorCode == "forbidden")
        }
        // An admin's token after sign-out is a revoked session, not a key to the figures.
        _ = try f.api.call("POST", "/v1/auth/signout", ["refresh_token": f.admin.refresh], token: f.admin.access)
        let revoked = try scrape([("Authorization", "Bearer " + f.admin.access)])
        #expect(revoked.status == 401 && revoked.errorCode == "session_revoked")
        // Only GET, and the token does not open anything else.
        #expect(try f.api.call("POST", "/metrics", headers: [("Authorization", "Bearer " + Self.token)]).status == 405)
        #expect(try f.api.call("GET", "/v1/me", headers: [("Authorization", "Bearer " + Self.token)]).status == 401)
    }

    @Test func withoutATokenMetricsStayOpen() throws {
        let server = try TestServer()
        defer { server.stop() }
        #expect(try server.metricsText().contains("spotter_connections_open"))
    }

    @Test func metricsListenServesMetricsThereOnly() throws {
        let server = try TestServer { $0.operators.metricsListen = ("127.0.0.1", 0) }
        defer { server.stop() }
        let metricsPort = try #require(server.server.metricsPort)
        #expect(metricsPort != server.port)
        let side = APIClient(port: metricsPort)
        let scraped = try side.call("GET", "/metrics")
        #expect(scraped.status == 200 && scraped.text.contains("spotter_connections_open"))
        #expect(try side.call("GET", "/readyz").status == 200)
        #expect(try side.call("GET", "/healthz").status == 200)
        // Nothing else over there: neither the API nor the web files nor the echo.
        for path in ["/v1/coaches", "/console/", "/echo", "/v1/auth/signin"] {
            #expect(try side.call("GET", path).status == 404, "\(path) on the metrics listener")
        }
        // And no metrics on the main port, where the rest still works.
        let main = APIClient(port: server.port)
        let refused = try main.call("GET", "/metrics")
        #expect(refused.status == 404 && refused.errorCode == "not_found")
        #expect(try main.call("GET", "/healthz").status == 200)
        #expect(try main.call("GET", "/readyz").status == 200)
    }

    @Test func metricsListenWithATokenNeedsItThereToo() throws {
        let server = try TestServer {
            $0.operators.metricsListen = ("127.0.0.1", 0)
            $0.operators.metricsToken = Self.token
        }
        defer { server.stop() }
        let side = APIClient(port: try #require(server.server.metricsPort))
        #expect(try side.call("GET", "/metrics").status == 401)
        #expect(try side.call("GET", "/metrics", headers: [("Authorization", "Bearer " + Self.token)]).status == 200)
    }

    @Test func readyzIsReadyThenRefusesDuringTheAnnouncedDrainWhileHealthzStaysUp() throws {
        let server = try TestServer { $0.operators.drainDelaySeconds = 120 }
        let api = APIClient(port: server.port)
        let ready = try api.call("GET", "/readyz")
        #expect(ready.status == 200 && ready.string("status") == "ready")
        #expect(try api.call("POST", "/readyz").status == 405)
        let sara = try api.signUp(role: "client", name: "Sara", email: "s@x.test")

        server.server.requestShutdown()
        var refused = try api.call("GET", "/readyz")
        for _ in 0..<50 where refused.status == 200 {  // the request is handed to the loop
            Thread.sleep(forTimeInterval: 0.05)
            refused = try api.call("GET", "/readyz")
        }
        #expect(refused.status == 503 && refused.errorCode == "unavailable")
        #expect((refused.json["error"] as? [String: Any])?["field"] as? String == "draining")
        #expect(refused.headers["Retry-After"] == "1")
        // Still serving while the load balancer takes it out: liveness, the API, the open sockets.
        #expect(try api.call("GET", "/healthz").status == 200)
        #expect(try api.call("GET", "/v1/coaches", token: sara.access).status == 200)
        #expect(try api.call("GET", "/v1/me", token: sara.access).status == 200)

        // A second request drains at once (not after the 120 s).
        #expect(server.stop(timeoutSeconds: 15))
    }

    @Test func listenAddressesAreCheckedAtTheEdges() {
        #expect(OperatorSettingsProbe.parse("127.0.0.1:9100") == "127.0.0.1|9100")
        #expect(OperatorSettingsProbe.parse("[::1]:0") == "::1|0")
        #expect(OperatorSettingsProbe.parse("0.0.0.0:65535") == "0.0.0.0|65535")
        for bad in ["", ":", "9100", "127.0.0.1:", ":9100", "127.0.0.1:65536", "127.0.0.1:-1", "127.0.0.1:+80",
                    "127.0.0.1:9223372036854775808", "[::1]", "a b:80", "127.0.0.1:٩١"] {
            #expect(OperatorSettingsProbe.parse(bad) == nil, "\(bad)")
        }
    }
}

import SpotterServer

enum OperatorSettingsProbe {
    static func parse(_ text: String) -> String? {
        OperatorSettings.listenAddress(text).map { "\($0.host)|\($0.port)" }
    }
}
