import Foundation

/// A signed-in `/v1/ws` client for tests: sends commands with fresh ids,
/// waits for their replies, and keeps the events that arrive meanwhile.
/// Used from one thread at a time (a test may hand it to a worker thread).
public final class SpotterSocket: @unchecked Sendable {
    public let ws: WebSocketTestClient
    public private(set) var hello: [String: Any] = [:]
    /// Events received but not yet taken, in arrival order.
    public private(set) var events: [[String: Any]] = []
    private var nextID = 0

    public init(port: Int, token: String, headers: [(String, String)] = []) throws {
        ws = try WebSocketTestClient(port: port, path: "/v1/ws", headers: [("Authorization", "Bearer \(token)")] + headers)
        hello = try ws.nextJSON()
        guard hello["type"] as? String == "hello" else { throw BlockingSocket.Failure(description: "expected hello, got \(hello)") }
    }

    public var helloCursor: Int { hello["cursor"] as? Int ?? -1 }

    /// Sends `{"id":…,"type":type,…fields}`, runs `afterSending` (if any), and returns the reply.
    @discardableResult
    public func command(_ type: String, _ fields: [String: Any] = [:], afterSending: (() -> Void)? = nil) throws -> [String: Any] {
        nextID += 1
        let id = "t\(nextID)"
        var object = fields
        object["id"] = id
        object["type"] = type
        ws.send(text: String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self))
        afterSending?()
        while true {
            let frame = try ws.nextJSON()
            if frame["type"] as? String == "reply", frame["id"] as? String == id { return frame }
            events.append(frame)
        }
    }

    /// The result of a successful command, or a failure naming the error.
    public func result(_ type: String, _ fields: [String: Any] = [:]) throws -> [String: Any] {
        let reply = try command(type, fields)
        guard reply["ok"] as? Bool == true, let result = reply["result"] as? [String: Any] else {
            throw BlockingSocket.Failure(description: "\(type) failed: \(reply)")
        }
        return result
    }

    /// The next event of `type` (others are kept), waiting for it if needed.
    public func next(_ type: String) throws -> [String: Any] {
        if let index = events.firstIndex(where: { $0["type"] as? String == type }) { return events.remove(at: index) }
        while true {
            let frame = try ws.nextJSON()
            if frame["type"] as? String == type { return frame }
            events.append(frame)
        }
    }

    /// Every event received so far plus whatever arrives within `seconds`.
    public func drain(for seconds: Double) -> [[String: Any]] {
        let deadline = Date().addingTimeInterval(seconds)
        var timeout = timeval(tv_sec: 0, tv_usec: 100_000)
        setsockopt(ws.socket.fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        defer {
            var normal = timeval(tv_sec: 5, tv_usec: 0)
            setsockopt(ws.socket.fd, SOL_SOCKET, SO_RCVTIMEO, &normal, socklen_t(MemoryLayout<timeval>.size))
        }
        while Date() < deadline {
            guard let frame = try? ws.nextJSON() else { continue }
            events.append(frame)
        }
        defer { events = [] }
        return events
    }

    /// Every message of a thread, newest first, read page by page with `history`.
    public func wholeHistory(_ threadID: String) throws -> [[String: Any]] {
        var messages: [[String: Any]] = []
        var before: Int?
        repeat {
            var fields: [String: Any] = ["thread_id": threadID, "limit": 100]
            if let before { fields["before_seq"] = before }
            let page = try result("history", fields)
            let batch = page["messages"] as? [[String: Any]] ?? []
            messages += batch
            before = (page["has_more"] as? Bool == true) ? batch.last?["seq"] as? Int : nil
        } while before != nil
        return messages
    }

    public func close() { ws.socket.close() }
}

/// `error.code` of a socket reply (nil for a success).
public func errorCode(_ reply: [String: Any]) -> String? {
    (reply["error"] as? [String: Any])?["code"] as? String
}

extension String {
    /// Whether the text has a character of the Arabic block (U+0600–U+06FF): an error worded in Arabic.
    public var hasArabic: Bool { unicodeScalars.contains { (0x0600...0x06FF).contains($0.value) } }
}
