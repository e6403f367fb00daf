import Foundation

// Frames in: the hello, the replay and `live`, logged events (each delivered once, in cursor order), replies.
extension SpotterClient {
    func receive(_ data: Data) {
        guard let head = try? WireJSON.decode(FrameHead.self, from: data) else { return }
        switch head.type {
        case "reply":
            reply(head, data)
        case "hello":
            guard let hello = try? WireJSON.decode(Hello.self, from: data) else { return }
            greeted = true
            connectTimer?.cancel()
            connectTimer = nil
            user = hello.user
            expiresAt = Int(hello.expiresAt)
            helloCursor = Int(hello.cursor)
            if cursor == nil {
                // A first connect: nothing to replay; from here on nothing is missed.
                cursor = Int(hello.cursor)
                persist()
            }
            emit(.hello(hello))
            if replaying { setState(.replaying) } else { goLive() }
        case "live":
            advance(head.cursor)
            replaying = false
            emit(.live(cursor: head.cursor ?? cursor ?? 0))
            goLive()
        case "auth.expiring":
            if let event = try? WireJSON.decode(AuthExpiringEvent.self, from: data) { emit(.authExpiring(event)) }
            Task { await refreshOnSocket() }
        default:
            if let position = head.cursor {
                // A logged event: drop it if it was delivered already (a replay may repeat live events).
                if let delivered = cursor, position <= delivered { return }
                emit(event(head.type, position, data))
                advance(position)
            } else {
                emit(event(head.type, nil, data))
            }
        }
    }

    func advance(_ position: Int?) {
        guard let position, cursor.map({ position > $0 }) ?? true else { return }
        cursor = position
        persist()
        emit(.cursor(position))
    }

    func event(_ type: String, _ position: Int?, _ data: Data) -> SpotterEvent {
        let typed: SpotterEvent? = switch type {
        case "message": (try? WireJSON.decode(MessageEvent.self, from: data)).map(SpotterEvent.message)
        case "receipt": (try? WireJSON.decode(ReceiptEvent.self, from: data)).map(SpotterEvent.receipt)
        case "unread": (try? WireJSON.decode(UnreadEvent.self, from: data)).map(SpotterEvent.unread)
        case "thread": (try? WireJSON.decode(ThreadEvent.self, from: data)).map(SpotterEvent.thread)
        case "session": (try? WireJSON.decode(SessionEvent.self, from: data)).map(SpotterEvent.session)
        case "presence": (try? WireJSON.decode(PresenceEvent.self, from: data)).map(SpotterEvent.presence)
        case "typing": (try? WireJSON.decode(TypingEvent.self, from: data)).map(SpotterEvent.typing)
        default: nil
        }
        return typed ?? .other(type: type, cursor: position, frame: (try? WireJSON.decode(JSONValue.self, from: data)) ?? .null)
    }

    func reply(_ head: FrameHead, _ data: Data) {
        let error = head.ok == true ? nil
            : (try? WireJSON.decode(ReplyFrame<JSONValue>.self, from: data))?.error ?? .badResponse("a reply without its error")
        guard let id = head.id else {
            // About the connect itself: a cursor the server cannot resume.
            let error = error ?? .badResponse("an id-less reply")
            if error.code == "cursor_expired" || error.code == "out_of_range" {
                // Start again from where the server is now (the app reloads threads and history on `reset`).
                replaying = false
                cursor = helloCursor
                persist()
                emit(.reset(error))
                goLive()
            } else {
                emit(.error(error))
            }
            return
        }
        guard let entry = pending.removeValue(forKey: id) else { return }
        switch entry {
        case .command(let continuation, let timer):
            timer.cancel()
            if let error { continuation.resume(throwing: error) } else { continuation.resume(returning: data) }
        case .send(let clientMessageId, let timer):
            timer.cancel()
            sendAnswered(clientMessageId, data: data, error: error)
        }
    }

    func goLive() {
        setState(.live)
        attempt = 0
        let queued = waiting
        waiting = []
        for command in queued { transmit(command.type, command.fields, .command(command.continuation)) }
        // The outbox: whatever the last socket did not get acknowledged goes again, with the same ids.
        pumpOutbox()
    }

    // MARK: - Commands out

    enum Purpose {
        case command(CheckedContinuation<Data, any Error>)
        case send(String)
    }

    func transmit(_ type: String, _ fields: [String: JSONValue], _ purpose: Purpose) {
        let id = "c\(nextId)"
        nextId += 1
        let timeout = configuration.commandTimeout
        let timer = Task { [weak self] in
            try? await Task.sleep(for: timeout)
            guard !Task.isCancelled else { return }
            await self?.commandTimedOut(id)
        }
        switch purpose {
        case .command(let continuation): pending[id] = .command(continuation, timer: timer)
        case .send(let clientMessageId): pending[id] = .send(clientMessageId: clientMessageId, timer: timer)
        }
        var frame = fields
        frame["id"] = .string(id)
        frame["type"] = .string(type)
        connection?.send(String(decoding: WireJSON.encode(JSONValue.object(frame)), as: UTF8.self))
    }

    func commandTimedOut(_ id: String) {
        guard let entry = pending.removeValue(forKey: id) else { return }
        switch entry {
        case .command(let continuation, _):
            continuation.resume(throwing: SpotterError.timeout)
        case .send(let clientMessageId, _):
            inFlight.remove(clientMessageId)
            pumpOutbox()  // the same id again: if the first one landed, the server answers with it
        }
    }
}
