import EventLoop
import FoundationEssentials
import GRDB
import SpotterCore
import SpotterProtocol
import SpotterStore
import WebSocket

/// Who is connected, who is online, and the bridge to the store's writer.
/// Loop thread only, except where noted.
///
/// Fan-out: a committed change comes back from the writer with the events
/// it appended (one frame per user, encoded once) and is pushed to every
/// live socket of that user. Presence and typing are ephemeral and go only
/// to linked peers. Receipts are coalesced per (user, thread): at most one
/// write is in flight and one waits, however fast a device acknowledges.
final class MessagingHub {
    unowned let server: Server
    let writer: StoreWriter
    /// The writer thread's messaging cache: used only inside write jobs.
    let messaging: MessagingWriter
    private var sockets: [String: [AppSocket]] = [:]
    /// Linked peers of each connected user (their coach, or their clients).
    private var peers: [String: Set<String>] = [:]
    private var pendingReceipts: [String: PendingReceipt] = [:]
    /// Writes submitted and not yet committed. Past `maxPendingWrites` new
    /// sends are refused (`rate_limited`), so an overload shows as errors
    /// the clients retry instead of a queue that grows without bound.
    private(set) var pendingWrites = 0
    let maxPendingWrites = 20_000
    var isOverloaded: Bool { pendingWrites >= maxPendingWrites }

    init(server: Server, writer: StoreWriter, messaging: MessagingWriter) {
        self.server = server
        self.writer = writer
        self.messaging = messaging
    }

    // MARK: - Writes

    /// Runs `work` in the next group-commit transaction and `then` on the
    /// loop once it has committed (or failed).
    func write<T: Sendable>(
        _ work: @escaping @Sendable (Database) throws -> T, then: @escaping (Result<T, APIError>) -> Void
    ) {
        let loop = server.loop
        pendingWrites += 1
        let callback = LoopBound({ [unowned self] (result: Result<T, APIError>) in
            pendingWrites -= 1
            then(result)
        }, loop: loop)
        writer.submit(work) { result in
            let mapped = result.mapError { APIError(wrapping: $0) }
            loop.execute { callback.value(mapped) }
        }
    }

    /// Pushes committed events to the sockets of their users.
    func publish(_ events: [LoggedEvent]) {
        for event in events {
            for socket in sockets[event.userID] ?? [] { socket.deliver(cursor: event.cursor, frame: event.frame) }
        }
    }

    /// A committed link change: push its `thread` events, then bring open
    /// sockets' view of the threads (who may type or write where) and their
    /// presence peers up to date. A newly active peer that is online is
    /// announced at once.
    func linksChanged(_ changes: LinkChanges) {
        publish(changes.events)
        for change in changes.threads {
            for socket in sockets[change.userID] ?? [] {
                socket.threadChanged(change.threadID, peer: change.peerID, active: change.active)
            }
            guard let socket = sockets[change.userID]?.first, peers[change.userID] != nil else { continue }
            let linked = socket.activePeers
            let added = linked.subtracting(peers[change.userID] ?? [])
            peers[change.userID] = linked
            for peer in added where isOnline(peer) {
                let frame = JSON.encode(PresenceEvent(userId: peer, online: true, lastSeenAt: nil))
                for socket in sockets[change.userID] ?? [] { socket.sendEphemeral(frame) }
            }
        }
    }

    // MARK: - Presence

    func isOnline(_ userID: String) -> Bool { !(sockets[userID]?.isEmpty ?? true) }

    /// A socket is ready to receive events (registered before its first read,
    /// so nothing committed in between is missed).
    func attach(_ socket: AppSocket) {
        sockets[socket.actor.userID, default: []].append(socket)
    }

    /// The socket's peers are known: announce the user if this is their first socket.
    func announce(_ socket: AppSocket, peers linked: Set<String>) {
        let userID = socket.actor.userID
        guard sockets[userID]?.contains(where: { $0 === socket }) ?? false else { return }  // closed while opening
        peers[userID] = linked
        guard sockets[userID]?.count == 1 else { return }
        broadcastPresence(userID: userID, online: true, lastSeenAt: nil)
    }

    func detach(_ socket: AppSocket) {
        let userID = socket.actor.userID
        sockets[userID]?.removeAll { $0 === socket }
        guard sockets[userID]?.isEmpty ?? false else { return }
        sockets[userID] = nil
        let now = unixNow()
        broadcastPresence(userID: userID, online: false, lastSeenAt: now)
        peers[userID] = nil
        write({ db in try Messaging.setLastSeen(db, userID: userID, at: now) }, then: { _ in })
    }

    /// Closes every socket of a revoked session with 4003.
    func closeSockets(userID: String, sessionID: String) {
        for socket in sockets[userID] ?? [] where socket.sessionID == sessionID {
            socket.connection?.close(CloseCode(SpotterCloseCode.sessionRevoked), reason: "session revoked")
        }
    }

    private func broadcastPresence(userID: String, online: Bool, lastSeenAt: Int64?) {
        let frame = JSON.encode(PresenceEvent(userId: userID, online: online, lastSeenAt: lastSeenAt))
        for peer in peers[userID] ?? [] {
            for socket in sockets[peer] ?? [] { socket.sendEphemeral(frame) }
        }
    }

    /// Typing goes to the peer's sockets only; it is never stored.
    func typing(from userID: String, threadID: String, to peerID: String) {
        let frame = JSON.encode(TypingEvent(threadId: threadID, userId: userID, expiresIn: 5))
        for socket in sockets[peerID] ?? [] { socket.sendEphemeral(frame) }
    }

    // MARK: - Receipts, coalesced

    private final class PendingReceipt {
        var delivered: Int64?
        var read: Int64?
        var waiting: [(Result<ReceiptResult, APIError>) -> Void] = []
        var inFlight = false
    }

    func receipt(userID: String, threadID: String, delivered: Int64?, read: Int64?,
                 reply: @escaping (Result<ReceiptResult, APIError>) -> Void) {
        let key = userID + "|" + threadID
        let pending = pendingReceipts[key] ?? PendingReceipt()
        pendingReceipts[key] = pending
        if let delivered { pending.delivered = max(pending.delivered ?? 0, delivered) }
        if let read { pending.read = max(pending.read ?? 0, read) }
        pending.waiting.append(reply)
        if !pending.inFlight { flushReceipt(key, pending, userID: userID, threadID: threadID) }
    }

    private func flushReceipt(_ key: String, _ pending: PendingReceipt, userID: String, threadID: String) {
        let delivered = pending.delivered, read = pending.read, waiting = pending.waiting
        pending.delivered = nil
        pending.read = nil
        pending.waiting = []
        pending.inFlight = true
        let now = unixNow()
        let messaging = messaging
        write({ db in
            try MessagingJobs.receipt(db, messaging, userID: userID, threadID: threadID, delivered: delivered, read: read, now: now)
        }, then: { [self] result in
            if case .success(let outcome) = result { publish(outcome.events) }
            for reply in waiting { reply(result.map(\.result)) }
            pending.inFlight = false
            if pending.waiting.isEmpty {
                pendingReceipts[key] = nil
            } else {
                flushReceipt(key, pending, userID: userID, threadID: threadID)
            }
        })
    }
}
