import Foundation
import SeededRandom
import SpotterProtocol
import Testing
import TestSupport

/// Executes random commands, not only decodes them: a seeded schedule of frames from a coach, their client and an
/// outsider, every command type in the catalog with a random subset of its fields, the values drawn from the
/// edges (0, ±1, ±2^31, ±2^53, ±2^63, numbers that overflow Int64, fractions, 1e400, empty and huge strings,
/// control characters, the wrong JSON type) and from the ids the server handed out (threads, sessions,
/// challenges, check-ins), so that commands reach the rules and the stored state, not only the decoder.
/// Every frame must get a reply (a success or an error whose code is in the table) on an open socket; then the
/// server restarts on what was stored and answers every read. The server runs as a child process: a crash fails
/// the test with the seed and the frame.
///
/// `SPOTTER_FUZZ_SEED` replays a seed; `SPOTTER_FUZZ_COMMANDS` sets the count (3,000 here; Tests/Fuzz/README.md
/// has the long run's numbers).
@Suite("Command execution fuzz", .serialized)
struct CommandExecutionFuzzTests {
    @Test func randomCommandsAtTheEdgesNeverCrashTheServer() throws {
        let environment = ProcessInfo.processInfo.environment
        let seed = environment["SPOTTER_FUZZ_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 1...UInt64.max)
        let count = environment["SPOTTER_FUZZ_COMMANDS"].flatMap { Int($0) } ?? 3_000
        print("command execution fuzz: seed \(seed), \(count) commands (SPOTTER_FUZZ_SEED=\(seed) replays it)")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("spotter-exec-fuzz-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var server = try ServerProcess(dataDirectory: directory, arguments: ["--tiers", "--ratings"])
        let api = APIClient(port: server.port)
        let coach = try api.signUp(role: "coach", name: "Coach", email: "coach@fuzz.test")
        let client = try api.signUp(role: "client", name: "Client", email: "client@fuzz.test")
        let outsider = try api.signUp(role: "client", name: "Outsider", email: "outsider@fuzz.test")
        let link = try api.call("POST", "/v1/me/coach", ["coach_id": coach.id], token: client.access)
        let thread = try #require(link.string("thread_id"))

        var fuzz = Schedule(seed: seed, thread: thread)
        let tokens = [coach.access, client.access, outsider.access]
        var sockets: [SpotterSocket?] = [nil, nil, nil]
        var sent = [0, 0, 0]
        var codes: [String: Int] = [:]
        let known = Set(ErrorCode.allCases.map(\.rawValue))
        for step in 0..<count {
            let actor = fuzz.pick(0..<3)
            // A fresh socket every 40 commands: each stays within its command burst, so replies are the
            // commands' own answers rather than rate_limited.
            if sockets[actor] == nil || sent[actor] % 40 == 0 {
                sockets[actor]?.close()
                sockets[actor] = try SpotterSocket(port: server.port, token: tokens[actor])
            }
            sent[actor] += 1
            let socket = try #require(sockets[actor])
            let frame = fuzz.frame(id: "f\(step)")
            socket.ws.send(text: frame)
            let reply: [String: Any]
            do {
                reply = try Self.reply(to: "f\(step)", on: socket, ids: &fuzz.ids)
            } catch {
                Issue.record("seed \(seed), step \(step): no reply (\(error)) to \(frame.prefix(600))")
                return
            }
            if let error = reply["error"] as? [String: Any] {
                let code = error["code"] as? String ?? "?"
                codes[code, default: 0] += 1
                #expect(known.contains(code), "seed \(seed), step \(step): unknown code \(code) for \(frame.prefix(300))")
            } else {
                codes["ok", default: 0] += 1
                fuzz.learn(reply["result"])
            }
        }
        print("command execution fuzz: replies by code \(codes.sorted { $0.key < $1.key })")
        #expect(codes["ok", default: 0] > count / 50, "too few commands succeeded to reach the rules: \(codes)")

        // What was stored loads again, and every read answers.
        for socket in sockets { socket?.close() }
        #expect(server.stop() == 0, "seed \(seed): SIGTERM must end the server cleanly")
        server = try ServerProcess(dataDirectory: directory, arguments: ["--tiers", "--ratings"])
        defer { #expect(server.stop() == 0) }
        for token in tokens {
            let socket = try SpotterSocket(port: server.port, token: token)
            for (type, fields) in [("threads", [:]), ("sessions", [:]), ("dashboard", [:]), ("record", ["thread_id": thread]),
                                   ("meals", [:]), ("history", ["thread_id": thread])] as [(String, [String: Any])] {
                let reply = try socket.command(type, fields)
                #expect(reply["ok"] as? Bool == true || reply["error"] != nil, "seed \(seed): \(type) after the restart: \(reply)")
            }
        }
    }

    /// The reply with this id; events met on the way are mined for ids.
    static func reply(to id: String, on socket: SpotterSocket, ids: inout Ids) throws -> [String: Any] {
        while true {
            let frame = try socket.ws.nextJSON()
            if frame["type"] as? String == "reply", frame["id"] as? String == id { return frame }
            ids.learn(frame)
        }
    }

    /// Ids the server handed out, by kind, for later commands to name.
    struct Ids {
        var sessions: [String] = []
        var challenges: [String] = []
        var checkIns: [String] = []

        mutating func learn(_ value: Any?) {
            if let object = value as? [String: Any] {
                for (key, inner) in object {
                    if let text = inner as? String {
                        switch key {
                        case "session_id": remember(text, in: &sessions)
                        case "challenge_id": remember(text, in: &challenges)
                        case "check_in_id": remember(text, in: &checkIns)
                        case "id" where object["meet_url"] != nil: remember(text, in: &sessions)
                        case "id" where object["tasks"] != nil: remember(text, in: &challenges)
                        case "id" where object["weight_kg"] != nil: remember(text, in: &checkIns)
                        default: break
                        }
                    } else {
                        learn(inner)
                    }
                }
            } else if let array = value as? [Any] {
                for inner in array { learn(inner) }
            }
        }

        private func remember(_ id: String, in list: inout [String]) {
            if !list.contains(id) { list.append(id) }
            if list.count > 50 { list.removeFirst() }
        }
    }

    /// The seeded schedule: which command, which fields, which values.
    struct Schedule {
        var random: SeededGenerator
        let thread: String
        var ids = Ids()
        let types = SocketCommand.catalog.keys.sorted()
        let now = Int64(Date().timeIntervalSince1970)

        init(seed: UInt64, thread: String) {
            random = SeededGenerator(seed: seed)
            self.thread = thread
        }

        mutating func pick(_ range: Range<Int>) -> Int { Int.random(in: range, using: &random) }
        mutating func pick(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &random) }
        mutating func chance(_ percent: Int) -> Bool { pick(0..<100) < percent }
        mutating func one<T>(_ choices: [T]) -> T { choices[pick(0..<choices.count)] }

        mutating func learn(_ result: Any?) { ids.learn(result) }

        /// One frame as JSON text (written by hand: some values are not what JSONSerialization writes).
        mutating func frame(id: String) -> String {
            let type = one(types)
            let names = SocketCommand.catalog[type]!.fieldNames.sorted()
            var fields = ["\"id\":\"\(id)\"", "\"type\":\"\(type)\""]
            for name in names where chance(type == "message.send" || type.hasPrefix("session") ? 85 : 70) {
                fields.append("\"\(name)\":\(value(for: name, type: type))")
            }
            if chance(3) { fields.append("\"unexpected\":1") }
            return "{" + fields.joined(separator: ",") + "}"
        }

        mutating func value(for name: String, type: String) -> String {
            if chance(8) { return anything() }
            switch name {
            case "thread_id": return chance(85) ? quoted(thread) : junkString()
            case "session_id": return ids.sessions.isEmpty || chance(15) ? junkString() : quoted(one(ids.sessions))
            case "challenge_id": return ids.challenges.isEmpty || chance(15) ? junkString() : quoted(one(ids.challenges))
            case "check_in_id": return ids.checkIns.isEmpty || chance(15) ? junkString() : quoted(one(ids.checkIns))
            case "start":
                return chance(60) ? String(now + Int64(pick(-3...60)) * 900) : number()
            case "from", "to":
                return chance(50) ? String(now + Int64(pick(-40...40)) * 86_400) : number()
            case "duration_minutes": return chance(60) ? String(one([15, 30, 45, 60])) : number()
            case "seq", "before_seq", "cursor", "before", "limit", "day", "stars", "age":
                return chance(50) ? String(pick(0...20)) : number()
            case "weight", "height_cm", "neck_cm", "waist_cm", "hip_cm", "target_percent":
                return chance(60) ? String(pick(1...200)) + "." + String(pick(0...9)) : number()
            case "action":
                return quoted(one(["accept", "decline", "propose", "reschedule", "cancel", "join", "leave", "complete",
                                   "keep_existing", "ask_reschedule", "replace_existing", "confirm", "expire", "", "ACCEPT"]))
            case "kind": return quoted(one(["text", "meal", "system", "image", "", "body_fat", "weight"]))
            case "method": return quoted(one(["navy", "jackson_pollock_3", "jackson_pollock_7", "bmi", ""]))
            case "sex": return quoted(one(["male", "female", "other", ""]))
            case "unit": return quoted(one(["kg", "lbs", "stone", ""]))
            case "created_by": return quoted(one(["coach", "ai", "client", ""]))
            case "done": return one(["true", "false", "0", "null"])
            case "meal": return meal()
            case "tasks": return tasks()
            case "skinfolds_mm": return "{\"chest\":\(number()),\"abdomen\":\(number()),\"thigh\":\(number())}"
            case "photos": return "{\"front\":\(junkString())}"
            case "start_date": return quoted(one(["2026-11-26", "2999-01-01", "0000-00-00", "2026-02-30", "", "tomorrow"]))
            default: return chance(70) ? quoted("fuzz \(pick(0...999))") : junkString()
            }
        }

        mutating func meal() -> String {
            "{\"name\":\(junkString()),\"ingredients\":[\"egg\"],\"calories\":\(number()),\"protein_g\":\(number()),"
                + "\"carbs_g\":\(number()),\"fats_g\":\(number()),\"meal_type\":\"lunch\"}"
        }

        mutating func tasks() -> String {
            let count = one([0, 1, 3, 7, 14, 15])
            let items = (0..<count).map { index in
                "{\"day\":\(chance(80) ? String(index + 1) : number()),\"name\":\"t\",\"focus\":\"training\",\"intensity\":\"light\"}"
            }
            return "[" + items.joined(separator: ",") + "]"
        }

        /// A number at an edge, or one no integer type holds.
        mutating func number() -> String {
            one(["0", "-0", "1", "-1", "2147483647", "-2147483648", "4294967296", "9007199254740991", "9007199254740992",
                 "9223372036854775807", "-9223372036854775808", "9223372036854775808", "-9223372036854775809",
                 "18446744073709551616", "1e400", "-1e400", "1.5", "0.0000001", "1e18", "253402300799", "253402300800",
                 String(now), String(now + 3600)])
        }

        mutating func junkString() -> String {
            one(["\"\"", "\"x\"", "\"\\u0000\"", "\"Asia/Riyadh\\u0000\"", "\"\\u202e\\ud83d\\ude00\"", "\"../../etc/passwd\"",
                 quoted(String(repeating: "a", count: 5_000)), "\"00000000-0000-0000-0000-000000000000\"", "\"\\n\\t\""])
        }

        /// A value of any JSON type.
        mutating func anything() -> String {
            one(["null", "true", "[]", "{}", "[1,2]", "{\"a\":{\"b\":[]}}", number(), junkString()])
        }

        func quoted(_ text: String) -> String { "\"" + text + "\"" }
    }
}
