import Foundation
import Testing
import TestSupport

/// The `spotter` binary pushing through the real protocols to the local stand-ins (issue 28): a browser's Web Push
/// subscription (VAPID verified, the payload decrypted by http_ece) and a phone's APNs token (the ES256 provider
/// token verified by PyJWT), over HTTP/2 and TLS; a 410 removing the device; and a kill -9 with 500 pushes waiting,
/// every one delivered after the restart, repeats only under the same id.
@Suite("Pushes end to end: the server, the providers, the stand-ins", .serialized, .enabled(if: StandIns.shouldRun))
struct PushEndToEndTests {
    /// The server's flags for the stand-ins, with key files written into `directory`.
    static func flags(_ standIns: StandIns, _ directory: String, coalesce: Int = 30) throws -> [String] {
        let p8 = directory + "/apns.p8", vapid = directory + "/vapid.pem"
        try standIns.apnsP8.write(toFile: p8, atomically: true, encoding: .utf8)
        if !FileManager.default.fileExists(atPath: vapid) {
            let made = Process()
            made.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
            made.arguments = ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", vapid]
            made.standardError = FileHandle.nullDevice
            try made.run()
            made.waitUntilExit()
        }
        return ["--development", "--push-coalesce", String(coalesce), "--push-preview", "full",
                "--webpush-vapid-key", vapid, "--webpush-subject", "mailto:ops@spotter.test", "--push-ca-file", standIns.caFile,
                "--apns-key", p8, "--apns-key-id", standIns.apnsKeyID, "--apns-team-id", standIns.apnsTeamID, "--apns-url", standIns.apns]
    }

    static func temporaryDirectory() throws -> String {
        let path = NSTemporaryDirectory() + "spotter-push-e2e-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// A coach and a linked client on `port`; the client's browser subscribed (endpoint token `browser`), the
    /// coach's phone registered (APNs token `phone`).
    static func people(_ port: Int, _ standIns: StandIns, browser: String, phone: String) throws
        -> (api: APIClient, coach: APIClient.Account, client: APIClient.Account, thread: String) {
        let api = APIClient(port: port)
        let coach = try api.signUp(role: "coach", name: "Carter", email: "carter@\(browser).test")
        let client = try api.signUp(role: "client", name: "Sara", email: "sara@\(browser).test")
        let subscription: [String: Any] = ["endpoint": standIns.endpointBase + browser, "expirationTime": NSNull(),
                                           "keys": ["p256dh": standIns.p256dh, "auth": standIns.auth]]
        let browserDevice = try api.call("POST", "/v1/me/devices", ["platform": "webpush", "subscription": subscription], token: client.access)
        #expect(browserDevice.status == 201, "\(browserDevice.text)")
        let phoneDevice = try api.call("POST", "/v1/me/devices", ["platform": "apns", "token": phone, "topic": "com.spotter.coach",
                                                                  "environment": "sandbox"], token: coach.access)
        #expect(phoneDevice.status == 201, "\(phoneDevice.text)")
        _ = try api.call("PUT", "/v1/me/onboarding", [
            "date_of_birth": "1995-06-15", "gender": "female", "height_cm": 165, "weight_kg": 70.5, "goal": "Lose 10kg",
            "experience_level": "beginner", "dietary_restrictions": [], "medical_conditions": [],
        ], token: client.access)
        let linked = try api.call("POST", "/v1/me/coach", ["coach_id": coach.id], token: client.access)
        return (api, coach, client, try #require(linked.string("thread_id"), "\(linked.text)"))
    }

    static func payloads(_ standIns: StandIns, _ token: String) throws -> [[String: Any]] {
        try standIns.pushes(to: token).compactMap { $0["payload"] as? [String: Any] }
    }

    @Test func aMessageReachesTheBrowserAndThePhoneAndAGoneDeviceIsRemoved() throws {
        let standIns = try StandIns.separate()
        defer { standIns.stop() }
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = try ServerProcess(dataDirectory: directory, arguments: try Self.flags(standIns, directory, coalesce: 0))
        defer { server.stop() }
        let browser = "e2e-" + UUID().uuidString.prefix(8).lowercased(), phone = apnsToken()
        let (api, coach, client, thread) = try Self.people(server.port, standIns, browser: browser, phone: phone)
        let coachSocket = try SpotterSocket(port: server.port, token: coach.access)
        _ = try coachSocket.result("app_state", ["state": "background"])
        _ = try coachSocket.result("message.send", ["thread_id": thread, "client_message_id": "m1", "text": "Your plan is ready 💪"])
        try waitUntil(15, "the browser's push") { ((try? Self.payloads(standIns, browser)) ?? []).contains { $0["title"] as? String == "New message from Carter" } }
        let message = try #require(try Self.payloads(standIns, browser).first { $0["category"] as? String == "message" })
        #expect(message["body"] as? String == "Your plan is ready 💪" && message["badge"] as? Int == 1)
        #expect((message["data"] as? [String: Any])?["thread_id"] as? String == thread)
        let record = try #require(try standIns.pushes(to: browser).last)
        #expect(record["http_version"] as? String == "HTTP/2")
        #expect((record["headers"] as? [String: Any])?["topic"] as? String == thread.replacingOccurrences(of: "-", with: ""))

        // The client answers from her socket; the coach's phone hears it through APNs.
        let clientSocket = try SpotterSocket(port: server.port, token: client.access)
        _ = try clientSocket.result("message.send", ["thread_id": thread, "client_message_id": "r1", "text": "شكرًا"])
        try waitUntil(15, "the phone's push") {
            ((try? standIns.pushes(to: phone)) ?? []).contains { (($0["payload"] as? [String: Any])?["aps"] as? [String: Any]).map {
                (($0["alert"] as? [String: Any])?["title"] as? String) == "New message from Sara" } ?? false }
        }
        let apns = try #require(try standIns.pushes(to: phone).last)
        #expect((apns["headers"] as? [String: Any])?["apns-topic"] as? String == "com.spotter.coach")

        // The browser unsubscribed: the push service answers 410 and the device is gone.
        try standIns.mode(["service": "webpush", "token": browser, "status": 410])
        clientSocket.close()
        // Away once the server has seen her socket close (the coach hears her go offline).
        while try coachSocket.next("presence")["online"] as? Bool != false {}
        _ = try coachSocket.result("message.send", ["thread_id": thread, "client_message_id": "m2", "text": "Still there?"])
        try waitUntil(15, "the device removed") {
            (try? api.call("GET", "/v1/me/devices", token: client.access).json["devices"] as? [Any])?.isEmpty == true
        }
        try standIns.clearModes("webpush")
        // What the browser decrypted, for the schema check (Tests/scripts/validate-schemas.py, WebPushPayload.json).
        try Self.keepSamples(try Self.payloads(standIns, browser))
    }

    /// Writes `payloads` where the schema check reads what the server said (`.build/schema-samples`).
    static func keepSamples(_ payloads: [[String: Any]]) throws {
        let folder = StandIns.root.appendingPathComponent(".build/schema-samples")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let samples: [[String: Any]] = try payloads.enumerated().map { index, payload in
            ["schema": "WebPushPayload", "location": "PushEndToEndTests web push #\(index)",
             "json": String(decoding: try JSONSerialization.data(withJSONObject: payload), as: UTF8.self)]
        }
        #expect(!samples.isEmpty)
        try JSONSerialization.data(withJSONObject: samples).write(to: folder.appendingPathComponent("web-push.json"))
    }

    @Test func aKillNineWithFiveHundredPushesWaitingDeliversEveryOneAfterTheRestart() throws {
        let standIns = try StandIns.separate()
        defer { standIns.stop() }
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let flags = try Self.flags(standIns, directory, coalesce: 0)
        var server = try ServerProcess(dataDirectory: directory, arguments: flags)
        let browser = "crash-" + UUID().uuidString.prefix(8).lowercased()
        let (_, coach, _, thread) = try Self.people(server.port, standIns, browser: browser, phone: apnsToken())
        // The push service is down: everything waits in the outbox, retried.
        try standIns.mode(["service": "webpush", "down": 60])
        // Ten sockets of fifty: each within a socket's burst of commands.
        let sockets = try (0..<10).map { _ in try SpotterSocket(port: server.port, token: coach.access) }
        for (number, socket) in sockets.enumerated() {
            for index in 0..<50 {
                let n = number * 50 + index
                _ = try socket.result("message.send", ["thread_id": thread, "client_message_id": "k\(n)", "text": "Set \(n)"])
            }
        }
        // Every message is durable (acknowledged); give the consumer a moment, then kill -9 mid-retries.
        Thread.sleep(forTimeInterval: 1.5)
        server.stop(signal: SIGKILL)
        try standIns.clearModes("webpush")
        server = try ServerProcess(dataDirectory: directory, arguments: flags)
        defer { server.stop() }
        var bodies: Set<String> = []
        try waitUntil(90, "500 pushes (have \(bodies.count))") {
            bodies = Set(((try? Self.payloads(standIns, browser)) ?? []).compactMap { $0["body"] as? String }.filter { $0.hasPrefix("Set ") })
            return bodies.count == 500
        }
        // Repeats only under the same id: as many ids as distinct pushes.
        let messages = try Self.payloads(standIns, browser).filter { ($0["body"] as? String)?.hasPrefix("Set ") == true }
        let byID = Dictionary(grouping: messages) { $0["id"] as? String ?? "" }
        #expect(byID.count == 500, "every push its own id")
        #expect(byID.values.allSatisfy { Set($0.compactMap { $0["body"] as? String }).count == 1 }, "an id names one push")
        print("push crash test: \(messages.count) deliveries of 500 pushes (\(messages.count - 500) repeats, each under its id)")
    }
}
