import Foundation

// Commands on the socket (typed replies), tokens, and the HTTP API with this client's token.
extension SpotterClient {
    /// Sends command `type` with `fields`; returns the whole reply frame. Waits for the socket to be live when it is
    /// not (connecting, replaying, between attempts). Throws the server's `SpotterError`, or `connection_lost`
    /// (the socket ended before the reply: the command may or may not have run), `timeout`, `closed`.
    public func command(_ type: String, _ fields: [String: JSONValue] = [:]) async throws -> Data {
        try await withCheckedThrowingContinuation { continuation in
            if state == .live, connection != nil {
                transmit(type, fields, .command(continuation))
            } else if wanted {
                waiting.append(Waiting(type: type, fields: fields, continuation: continuation))
            } else {
                continuation.resume(throwing: SpotterError(code: "closed", message: "Call connect() first."))
            }
        }
    }

    /// A command whose reply's `result` is decoded as `R`.
    public func command<R: Decodable>(_ type: String, _ fields: [String: JSONValue] = [:], as: R.Type) async throws -> R {
        let data = try await command(type, fields)
        guard let result = try WireJSON.decode(ReplyFrame<R>.self, from: data).result else {
            throw SpotterError.badResponse("\(type): a reply without its result")
        }
        return result
    }

    public func me() async throws -> User {
        try await command("me", as: User.self)
    }

    /// The conversation list, with the badge and the current cursor.
    public func threads() async throws -> ThreadList {
        try await command("threads", as: ThreadList.self)
    }

    /// A page of a thread's messages, newest first, before `beforeSeq` (at most `limit`, ≤ 100).
    public func history(threadId: String, beforeSeq: Int64? = nil, limit: Int? = nil) async throws -> HistoryPage {
        var fields: [String: JSONValue] = ["thread_id": .string(threadId)]
        if let beforeSeq { fields["before_seq"] = .int(Int(beforeSeq)) }
        if let limit { fields["limit"] = .int(limit) }
        return try await command("history", fields, as: HistoryPage.self)
    }

    /// The user has seen the thread up to `seq` (the peer's ✓✓).
    public func markRead(threadId: String, seq: Int64) async throws -> ReceiptResult {
        try await command("thread.read", ["thread_id": .string(threadId), "seq": .int(Int(seq))], as: ReceiptResult.self)
    }

    /// This device has the thread's messages up to `seq` (the peer's ✓).
    public func markDelivered(threadId: String, seq: Int64) async throws -> ReceiptResult {
        try await command("receipt.delivered", ["thread_id": .string(threadId), "seq": .int(Int(seq))], as: ReceiptResult.self)
    }

    /// The user is typing (send at most every 2 s).
    public func typing(threadId: String) async throws {
        _ = try await command("typing", ["thread_id": .string(threadId)])
    }

    /// Video sessions by start, one page (`from`/`to`: Unix seconds; `cursor`: the previous page's `nextCursor`).
    public func sessions(from: Int? = nil, to: Int? = nil, limit: Int? = nil, cursor: String? = nil) async throws -> SessionPage {
        var fields: [String: JSONValue] = [:]
        if let from { fields["from"] = .int(from) }
        if let to { fields["to"] = .int(to) }
        if let limit { fields["limit"] = .int(limit) }
        if let cursor { fields["cursor"] = .string(cursor) }
        return try await command("sessions", fields, as: SessionPage.self)
    }

    /// The app went to the background (`background`) or came back (`foreground`).
    public func appState(_ state: String) async throws {
        _ = try await command("app_state", ["state": .string(state)])
    }

    // MARK: - Tokens

    func setTokens(_ new: Tokens) {
        tokens = new
        emit(.tokens(new))
    }

    /// `auth.expiring`: rotate the tokens on the socket (which extends it), or through the app's `refresh` (then the
    /// socket is reopened with the new token, resuming: nothing is lost).
    func refreshOnSocket() async {
        guard !socketRefresh else { return }
        socketRefresh = true
        defer { socketRefresh = false }
        do {
            if let refresh = configuration.refresh {
                setTokens(try await refresh(tokens.refreshToken))
                if connection != nil { closed(code: 1000, reason: "new token", timedOut: false) }
                return
            }
            let result = try await command("auth.refresh", ["refresh_token": .string(tokens.refreshToken)], as: AuthRefreshResult.self)
            expiresAt = Int(result.expiresAt)
            setTokens(result.session.tokens)
        } catch let error as SpotterError {
            emit(.error(error))
        } catch {
            emit(.error(.badResponse("\(error)")))
        }
    }

    /// Rotates the tokens over HTTP (or the app's `refresh`). One at a time: a refresh token is good once.
    func refreshOverHTTP() async throws {
        if let running = httpRefresh { return try await running.value }
        let task = Task { try await self.rotateTokens() }
        httpRefresh = task
        defer { httpRefresh = nil }
        try await task.value
    }

    private func rotateTokens() async throws {
        let fresh: Tokens
        if let refresh = configuration.refresh {
            fresh = try await refresh(tokens.refreshToken)
        } else {
            fresh = try await http.refresh(refreshToken: tokens.refreshToken).tokens
        }
        setTokens(fresh)
    }

    // MARK: - HTTP with this client's token

    /// Calls the HTTP API with this client's token, refreshing it once when it has expired.
    public func api(_ method: String, _ path: String, body: JSONValue? = nil) async throws -> Data {
        do {
            return try await http.data(method, path, body: body, token: tokens.accessToken)
        } catch let error as SpotterError where error.code == "token_expired" {
            try await refreshOverHTTP()
            return try await http.data(method, path, body: body, token: tokens.accessToken)
        }
    }

    public func api<T: Decodable>(_ method: String, _ path: String, body: JSONValue? = nil, as: T.Type) async throws -> T {
        let data = try await api(method, path, body: body)
        do {
            return try WireJSON.decode(T.self, from: data)
        } catch {
            throw SpotterError.badResponse("\(method) \(path): \(error)")
        }
    }

    /// Registers this device for pushes (Protocol/README "Devices").
    public func registerDevice(_ device: DeviceRegistration) async throws -> Device {
        try await api("POST", "/v1/me/devices", body: device.body, as: Device.self)
    }
}
