import Foundation

// The outbox: every send is kept (and persisted) until the server acknowledges it, and sent again after reconnects
// with the same `client_message_id`, so it is stored once and its caller hears once.
extension SpotterClient {
    /// Queues a message (persisted at once) and returns its `client_message_id`; it goes out when the socket is
    /// live. The same id twice is the same message. Its result comes as `.acknowledged` / `.sendFailed`, and to
    /// `acknowledgement(of:)`.
    @discardableResult
    public func enqueue(_ body: MessageBody, to threadId: String, clientMessageId: String? = nil) -> String {
        let id = clientMessageId ?? "\(prefix)-\(nextId)"
        nextId += 1
        if !outbox.contains(where: { $0.clientMessageId == id }) {
            outbox.append(OutboxEntry(clientMessageId: id, threadId: threadId, body: body))
            persist()
            emit(.outbox(pending: outbox.count))
        }
        pumpOutbox()
        return id
    }

    /// Sends a message and returns it as stored (with its `seq`) once the server has it on disk. Survives reconnects
    /// and server restarts; fails only when the server refuses it (`message_too_long`, `forbidden`, …) or the client
    /// is closed (the message stays queued) or stopped.
    public func send(_ body: MessageBody, to threadId: String, clientMessageId: String? = nil) async throws -> Message {
        let id = enqueue(body, to: threadId, clientMessageId: clientMessageId)
        return try await acknowledgement(of: id)
    }

    public func send(text: String, to threadId: String, clientMessageId: String? = nil) async throws -> Message {
        try await send(.text(text), to: threadId, clientMessageId: clientMessageId)
    }

    /// Waits for a queued message's acknowledgement (a message queued by an earlier instance, for instance). Throws
    /// `closed` at once when the client is not connecting (before `connect()`, after `close()`): the message stays
    /// queued.
    public func acknowledgement(of clientMessageId: String) async throws -> Message {
        guard outbox.contains(where: { $0.clientMessageId == clientMessageId }) else {
            throw SpotterError(code: "not_queued", message: "No message with this client_message_id is waiting.")
        }
        guard wanted else { throw SpotterError(code: "closed", message: "Call connect() first: the message stays queued.") }
        return try await withCheckedThrowingContinuation { continuation in
            ackWaiters[clientMessageId, default: []].append(continuation)
        }
    }

    /// Sends not acknowledged yet, oldest first.
    public var unacknowledged: [OutboxEntry] { outbox }

    /// Sends what may go now, in order: at most `sendWindow` in flight, and nothing passes a send that was told to
    /// wait (`rate_limited`, `server_busy`, `unavailable`).
    func pumpOutbox() {
        guard state == .live, connection != nil else { return }
        let window = max(1, configuration.sendWindow)
        for entry in outbox {
            let id = entry.clientMessageId
            if blocked.contains(id) { break }
            if inFlight.contains(id) { continue }
            guard inFlight.count < window else { break }
            inFlight.insert(id)
            var fields = entry.body.fields
            fields["thread_id"] = .string(entry.threadId)
            fields["client_message_id"] = .string(id)
            transmit("message.send", fields, .send(id))
        }
    }

    func sendAnswered(_ clientMessageId: String, data: Data, error: SpotterError?) {
        inFlight.remove(clientMessageId)
        if let error {
            if error.isRetryable {
                // The server asked to wait: the same id again after `retry_after`; nothing overtakes it meanwhile.
                blocked.insert(clientMessageId)
                let seconds = min(max(1, error.retryAfter ?? 1), 300)
                Task { [weak self] in
                    try? await Task.sleep(for: .seconds(seconds))
                    await self?.unblock(clientMessageId)
                }
            } else {
                complete(clientMessageId, .failure(error))
            }
        } else if let message = (try? WireJSON.decode(ReplyFrame<Message>.self, from: data))?.result {
            complete(clientMessageId, .success(message))
        } else {
            complete(clientMessageId, .failure(.badResponse("a send's reply without its message")))
        }
        pumpOutbox()
    }

    func unblock(_ clientMessageId: String) {
        blocked.remove(clientMessageId)
        pumpOutbox()
    }

    /// The one result of a send: it leaves the outbox, its waiters hear, the app gets one event.
    func complete(_ clientMessageId: String, _ result: Result<Message, SpotterError>) {
        guard let index = outbox.firstIndex(where: { $0.clientMessageId == clientMessageId }) else { return }
        outbox.remove(at: index)
        blocked.remove(clientMessageId)
        persist()
        let waiters = ackWaiters.removeValue(forKey: clientMessageId) ?? []
        switch result {
        case .success(let message):
            emit(.acknowledged(message))
            for waiter in waiters { waiter.resume(returning: message) }
        case .failure(let error):
            emit(.sendFailed(clientMessageId: clientMessageId, error: error))
            for waiter in waiters { waiter.resume(throwing: error) }
        }
        emit(.outbox(pending: outbox.count))
    }
}
