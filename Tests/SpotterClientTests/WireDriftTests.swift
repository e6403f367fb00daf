import Foundation
@testable import SpotterClient
import Testing

/// The client reads frames with the server's own wire types (SpotterProtocol, README.md "Wire types"), the logged
/// events wrapped with their cursor, and a few types of its own; all are held to what the server really says: every
/// server frame and body of Protocol/examples — the transcripts the server's tests replay against a live server —
/// decodes with them, and for the types that model a schema whole, every field the server sent is one the client
/// reads, and the client reads no field the server did not send. Every error code the server sent is an `ErrorCode`.
@Suite("SpotterClient: wire types against Protocol/ transcripts")
struct WireDriftTests {
    struct Sample {
        var file: String
        var schema: String?
        var json: Data
    }

    static let examples = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Protocol/examples").standardized

    /// Placeholders of the transcripts (`{number}`, `{any}`, `{$thread}`, …) made into values.
    static func concrete(_ text: String) -> String {
        var out = text.replacingOccurrences(of: "{number}", with: "1")
        while let range = out.range(of: #"\{(any|hex|auto|\$[A-Za-z0-9_]+)\}"#, options: .regularExpression) {
            out.replaceSubrange(range, with: "x")
        }
        return out
    }

    /// Every server text frame (`S> text`) and every server body with a `# schema:` line, with that schema.
    static func samples() throws -> [Sample] {
        let files = try FileManager.default.contentsOfDirectory(atPath: examples.path).filter { $0.hasSuffix(".transcript") }.sorted()
        var samples: [Sample] = []
        for file in files {
            let text = try String(contentsOf: examples.appendingPathComponent(file), encoding: .utf8)
            var schema: String?
            var httpSchema: String?
            for line in text.components(separatedBy: "\n") {
                if line.hasPrefix("# schema: ") {
                    schema = String(line.dropFirst("# schema: ".count)).trimmingCharacters(in: .whitespaces)
                    continue
                }
                if line.hasPrefix("S> text ") {
                    // JSON frames only (the echo endpoint's are not), and whole ones (`"message":{$m}` stands for
                    // an object the transcript does not spell out).
                    let text = String(line.dropFirst(8))
                    if text.hasPrefix("{\""), text.range(of: #":\{(any|\$[A-Za-z0-9_]+)\}"#, options: .regularExpression) == nil {
                        samples.append(Sample(file: file, schema: schema, json: Data(concrete(text).utf8)))
                    }
                    schema = nil
                } else if line.hasPrefix("S: HTTP/") {
                    httpSchema = schema
                    schema = nil
                } else if line.hasPrefix("S: {"), let named = httpSchema {
                    samples.append(Sample(file: file, schema: named, json: Data(concrete(String(line.dropFirst(3))).utf8)))
                    httpSchema = nil
                } else if line.hasPrefix("C:") || line.hasPrefix("C>") {
                    httpSchema = nil
                }
            }
        }
        return samples
    }

    /// How to read a schema's sample with the client's types: the decoded value re-encoded, the part of the sample it
    /// models, and whether it models that part whole.
    static func decode(_ schema: String, _ data: Data) throws -> (encoded: JSONValue, modeled: JSONValue, whole: Bool)? {
        let frame = try WireJSON.decode(JSONValue.self, from: data)
        func reencode<T: Codable>(_ value: T) throws -> JSONValue { try WireJSON.decode(JSONValue.self, from: WireJSON.encode(value)) }
        func result<T: Codable>(_ type: T.Type, whole: Bool = true) throws -> (JSONValue, JSONValue, Bool) {
            let reply = try WireJSON.decode(ReplyFrame<T>.self, from: data)
            return (try reencode(try #require(reply.result)), frame["result"] ?? .null, whole)
        }
        func body<T: Codable>(_ type: T.Type, whole: Bool = true) throws -> (JSONValue, JSONValue, Bool) {
            (try reencode(try WireJSON.decode(T.self, from: data)), frame, whole)
        }
        switch schema {
        case "HelloEvent": return try body(Hello.self)
        case "MessageEvent": return try body(MessageEvent.self)
        case "ReceiptEvent": return try body(ReceiptEvent.self)
        case "UnreadEvent": return try body(UnreadEvent.self)
        case "ThreadEvent": return try body(ThreadEvent.self)
        case "PresenceEvent": return try body(PresenceEvent.self)
        case "TypingEvent": return try body(TypingEvent.self)
        case "SessionEvent": return try body(SessionEvent.self)
        case "AuthExpiringEvent": return try body(AuthExpiringEvent.self)
        case "MessageReply": return try result(Message.self)
        case "MeReply": return try result(User.self)
        case "ThreadsReply": return try result(ThreadList.self)
        case "HistoryReply": return try result(HistoryPage.self)
        case "SessionReply": return try result(VideoSession.self)
        case "SessionsReply": return try result(SessionPage.self)
        case "AuthRefreshReply": return try result(AuthRefreshResult.self)
        case "ResumeReply": return try result(ResumeResult.self)
        case "ErrorReply":
            let error = try #require(try WireJSON.decode(ReplyFrame<JSONValue>.self, from: data).error)
            #expect(error.errorCode != nil, "not an ErrorCode: \(error.code)")
            return (try reencode(error), frame["error"] ?? .null, false)
        case "ErrorResponse":
            let error = try WireJSON.decode(ErrorBody.self, from: data).error
            #expect(error.errorCode != nil, "not an ErrorCode: \(error.code)")
            return (try reencode(error), frame["error"] ?? .null, false)
        case "UserView": return try body(User.self)
        case "SessionResponse": return try body(AuthSession.self)
        case "DeviceView": return try body(Device.self)
        case "DeviceList": return try body(DeviceList.self)
        case "LinkView": return try body(CoachLink.self)
        default: return nil
        }
    }

    /// Where `encoded` (what the client read) and `sample` (what the server sent) differ: a key the client invented,
    /// or (when `whole`) a key the server sent that the client does not read. Nulls the server sent count as absent.
    static func differences(_ encoded: JSONValue, _ sample: JSONValue, whole: Bool, path: String = "") -> [String] {
        switch (encoded, sample) {
        case (.object(let mine), .object(let theirs)):
            var found: [String] = []
            for (key, value) in mine {
                guard let other = theirs[key] else {
                    found.append("\(path)\(key): read by the client, not sent by the server")
                    continue
                }
                found += differences(value, other, whole: whole, path: "\(path)\(key).")
            }
            if whole {
                for (key, value) in theirs where mine[key] == nil && value != .null {
                    found.append("\(path)\(key): sent by the server, unknown to the client")
                }
            }
            return found
        case (.array(let mine), .array(let theirs)):
            return zip(mine, theirs).flatMap { differences($0, $1, whole: whole, path: path) }
        default:
            return []
        }
    }

    @Test func everyServerFrameOfTheTranscriptsDecodes() throws {
        let samples = try Self.samples()
        #expect(samples.count > 150, "too few samples: is Protocol/examples where the test looks? \(Self.examples.path)")
        var modeled = Set<String>()
        for sample in samples {
            // Every text frame is JSON with a type (the envelope the client reads first).
            if sample.schema == nil {
                #expect((try? WireJSON.decode(FrameHead.self, from: sample.json)) != nil,
                        "\(sample.file): a frame without a type: \(String(decoding: sample.json, as: UTF8.self))")
                continue
            }
            let schema = sample.schema!
            do {
                guard let (encoded, original, whole) = try Self.decode(schema, sample.json) else { continue }
                modeled.insert(schema)
                let found = Self.differences(encoded, original, whole: whole)
                #expect(found.isEmpty, "\(sample.file), \(schema): \(found)")
            } catch {
                Issue.record("\(sample.file), \(schema): the client cannot read it: \(error)\n\(String(decoding: sample.json, as: UTF8.self))")
            }
        }
        // The chat's frames are all among what was checked.
        for schema in ["HelloEvent", "MessageEvent", "ThreadEvent", "MessageReply", "ErrorReply", "ErrorResponse", "ThreadsReply",
                       "HistoryReply", "SessionEvent", "SessionResponse", "AuthRefreshReply", "DeviceView"] {
            #expect(modeled.contains(schema), "no transcript sample of \(schema)")
        }
    }

    @Test func aLoggedEventIsTheServersEventWithItsCursor() throws {
        let frame = #"{"type":"receipt","cursor":9007199254740991,"thread_id":"t","user_id":"u","delivered_seq":2,"read_seq":1}"#
        let event = try WireJSON.decode(ReceiptEvent.self, from: Data(frame.utf8))
        #expect(event.cursor == 9_007_199_254_740_991)
        #expect(event.event.type == "receipt" && event.event.threadId == "t" && event.event.deliveredSeq == 2)
        #expect(event.readSeq == 1 && event.userId == "u")
        // Without a cursor it is not a logged event (the client could not place it in the log).
        #expect(throws: (any Error).self) {
            try WireJSON.decode(ReceiptEvent.self, from: Data(#"{"type":"receipt","thread_id":"t","user_id":"u","delivered_seq":2,"read_seq":1}"#.utf8))
        }
    }

    @Test func errorCodesAreTheServersAndTheClientsOwnAreNot() {
        #expect(SpotterError(code: "rate_limited", message: "").errorCode == .rateLimited)
        #expect(SpotterError(code: "cursor_expired", message: "").errorCode == .cursorExpired)
        #expect(SpotterError.connectionLost.errorCode == nil)
        #expect(SpotterError(code: "", message: "").errorCode == nil)
    }

    @Test func theDriftCheckCatchesANewServerField() throws {
        let frame = #"{"type":"receipt","cursor":3,"thread_id":"t","user_id":"u","delivered_seq":2,"read_seq":1,"reaction":"👍"}"#
        let (encoded, original, whole) = try #require(try Self.decode("ReceiptEvent", Data(frame.utf8)))
        #expect(Self.differences(encoded, original, whole: whole) == ["reaction: sent by the server, unknown to the client"])
    }
}
