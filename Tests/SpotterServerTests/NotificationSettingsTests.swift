import Foundation
import Testing
import SpotterCore
import TestSupport

/// `GET/PUT /v1/me/notifications` over a real server (issue 28, item 4): the defaults, partial changes, quiet hours
/// in the user's zone, mutes of one's own threads that end on the server's clock, and every refusal.
@Suite("Notification settings", .serialized)
struct NotificationSettingsTests {
    static func settings(_ api: APIClient, _ token: String) throws -> APIResponse {
        try api.call("GET", "/v1/me/notifications", token: token)
    }

    static func put(_ api: APIClient, _ token: String, _ body: [String: Any]) throws -> APIResponse {
        try api.call("PUT", "/v1/me/notifications", body, token: token)
    }

    @Test func defaultsThenPartialChanges() throws {
        let server = try TestServer()
        defer { server.stop() }
        let api = APIClient(port: server.port)
        let me = try api.signUp(role: "client", name: "Sara", email: "sara@prefs.test")
        #expect(try api.call("PUT", "/v1/me", ["time_zone": "Asia/Riyadh"], token: me.access).status == 200)
        let defaults = try Self.settings(api, me.access)
        #expect(defaults.status == 200 && defaults["messages"] as? Bool == true && defaults["sessions"] as? Bool == true)
        #expect(defaults["reminders"] as? Bool == true && defaults["quiet_hours"] == nil)
        #expect((defaults["muted_threads"] as? [Any])?.isEmpty == true && defaults.string("time_zone") == "Asia/Riyadh")

        let quiet = try Self.put(api, me.access, ["messages": false, "quiet_hours": ["start": "22:00", "end": "07:00"]])
        #expect(quiet.status == 200 && quiet["messages"] as? Bool == false && quiet["sessions"] as? Bool == true)
        #expect(quiet.object("quiet_hours")?["start"] as? String == "22:00" && quiet.object("quiet_hours")?["end"] as? String == "07:00")
        // One field at a time keeps the rest; null removes the quiet hours.
        let sessionsOff = try Self.put(api, me.access, ["sessions": false])
        #expect(sessionsOff["messages"] as? Bool == false && sessionsOff["sessions"] as? Bool == false && sessionsOff["quiet_hours"] != nil)
        let cleared = try Self.put(api, me.access, ["quiet_hours": NSNull()])
        #expect(cleared.status == 200 && cleared["quiet_hours"] == nil && cleared["messages"] as? Bool == false)
        #expect(try Self.settings(api, me.access).json as NSDictionary == cleared.json as NSDictionary)
    }

    @Test func mutesAreOfOnesOwnThreadsAndEndOnTheClock() throws {
        let clock = TestClock()
        let server = try TestServer { $0.clock = clock }
        defer { server.stop() }
        let api = APIClient(port: server.port)
        let (coach, clients, threads) = try api.coachWithClients(2, domain: "mute.test")
        let now = clock.now
        let muted = try Self.put(api, coach.access, ["muted_threads": [["thread_id": threads[0], "until": now + 600],
                                                                      ["thread_id": threads[1], "until": NSNull()]]])
        #expect(muted.status == 200, "\(muted.text)")
        let listed = try #require(muted["muted_threads"] as? [[String: Any]])
        #expect(listed.map { $0["thread_id"] as? String } == threads)
        #expect(listed[0]["until"] as? Int64 == now + 600 && listed[1]["until"] is NSNull, "until: null is written out")

        // A client may mute their own thread, not another client's.
        #expect(try Self.put(api, clients[0].access, ["muted_threads": [["thread_id": threads[0]]]]).status == 200)
        let refused = try Self.put(api, clients[0].access, ["reminders": false, "muted_threads": [["thread_id": threads[1]]]])
        #expect(refused.status == 403 && refused.errorCode == "forbidden" && refused.errorField == "muted_threads.thread_id")
        #expect(try Self.settings(api, clients[0].access)["reminders"] as? Bool == true, "a refused change saves nothing")

        // The first mute ends 10 minutes later: it is no longer listed.
        clock.advance(by: 600)
        let later = try #require(try Self.settings(api, coach.access)["muted_threads"] as? [[String: Any]])
        #expect(later.map { $0["thread_id"] as? String } == [threads[1]])
        // An empty list unmutes every thread.
        #expect((try Self.put(api, coach.access, ["muted_threads": []])["muted_threads"] as? [Any])?.isEmpty == true)
    }

    @Test func everyBadInputHasItsCode() throws {
        let clock = TestClock()
        let server = try TestServer { $0.clock = clock }
        defer { server.stop() }
        let api = APIClient(port: server.port)
        let me = try api.signUp(role: "client", name: "Sara", email: "sara@badprefs.test")
        let now = clock.now
        let cases: [(body: [String: Any], status: Int, code: String, field: String)] = [
            (["messages": "no"], 400, "bad_request", "messages"),
            (["quiet_hours": ["start": "22:00"]], 400, "missing_field", "quiet_hours.end"),
            (["quiet_hours": ["start": "10pm", "end": "07:00"]], 400, "bad_request", "quiet_hours.start"),
            (["quiet_hours": ["start": "07:00", "end": "07:00"]], 400, "out_of_range", "quiet_hours.end"),
            (["quiet_hours": ["start": "22:00", "end": "07:00", "zone": "UTC"]], 400, "unknown_field", "quiet_hours.zone"),
            (["muted_threads": [["thread_id": "t", "until": now]]], 400, "out_of_range", "muted_threads.until"),
            (["muted_threads": [["thread_id": "t", "until": now + NotificationRules.maxMuteSeconds + 1]]], 400, "out_of_range",
             "muted_threads.until"),
            (["muted_threads": [["until": now + 60]]], 400, "missing_field", "muted_threads.thread_id"),
            (["muted_threads": [["thread_id": "t"], ["thread_id": "t"]]], 400, "bad_request", "muted_threads.thread_id"),
            (["muted_threads": [["thread_id": "no-such-thread"]]], 403, "forbidden", "muted_threads.thread_id"),
            (["muted_threads": (0...NotificationRules.maxMutedThreads).map { ["thread_id": "t\($0)"] }], 400, "out_of_range",
             "muted_threads"),
            (["push": true], 400, "unknown_field", "push"),
            (["reminder_channels": []], 400, "out_of_range", "reminder_channels"),
            (["reminder_channels": ["push", "pigeon"]], 400, "bad_request", "reminder_channels"),
            (["reminder_channels": ["sms", "sms"]], 400, "bad_request", "reminder_channels"),
            (["reminder_channels": "email"], 400, "bad_request", "reminder_channels"),
            (["reminder_channels": [1]], 400, "bad_request", "reminder_channels"),
        ]
        for (body, status, code, field) in cases {
            let answer = try Self.put(api, me.access, body)
            #expect(answer.status == status && answer.errorCode == code && answer.errorField == field, "\(body): \(answer.text)")
        }
        for (method, body) in [("GET", nil), ("PUT", ["messages": false])] as [(String, [String: Any]?)] {
            #expect(try api.call(method, "/v1/me/notifications", body).errorCode == "unauthorized")
        }
    }

    /// `reminder_channels`: push by default, any non-empty subset saved and shown in the order push, email, sms,
    /// kept by changes of other fields, and still there after a restart.
    @Test func reminderChannelsRoundTrip() throws {
        let directory = NSTemporaryDirectory() + "spotter-prefs-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var token = ""
        do {
            let server = try TestServer(dataDirectory: directory)
            let api = APIClient(port: server.port)
            let me = try api.signUp(role: "client", name: "Sara", email: "sara@channels.test")
            token = me.access
            #expect(try Self.settings(api, token)["reminder_channels"] as? [String] == ["push"])
            let chosen = try Self.put(api, token, ["reminder_channels": ["sms", "email"]])
            #expect(chosen.status == 200 && chosen["reminder_channels"] as? [String] == ["email", "sms"], "\(chosen.text)")
            let other = try Self.put(api, token, ["messages": false])
            #expect(other["reminder_channels"] as? [String] == ["email", "sms"], "another field keeps the channels")
            let refused = try Self.put(api, token, ["reminders": false, "reminder_channels": []])
            let unchanged = try Self.settings(api, token)
            #expect(refused.status == 400 && unchanged["reminders"] as? Bool == true, "nothing saved")
            server.stop()
        }
        let server = try TestServer(dataDirectory: directory)
        defer { server.stop() }
        let after = try Self.settings(APIClient(port: server.port), token)
        #expect(after["reminder_channels"] as? [String] == ["email", "sms"] && after["messages"] as? Bool == false, "\(after.text)")
    }
}
