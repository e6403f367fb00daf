import EventLoop
import SpotterBroker
import SpotterCore
import SpotterProtocol
import SpotterPorts
import WebSocket

/// What reaches the core from outside its commands: link changes the accounts' transaction committed, records
/// other processes committed (cluster mode), threads read from the store; and what never reaches the log:
/// presence, typing, revoked sockets.
extension CoreRunner {
    // MARK: - Links

    /// A link change (a coach picked, a change approved) committed with its `link` records: the core applies
    /// them, then they are published. Sockets read the state, so a new thread is writable at once; a newly linked
    /// peer that is online is announced; an ended link's sessions are cancelled.
    func linkChange<Value: Sendable>(
        _ change: (@escaping @Sendable (Result<LinkOutcome<Value>, any Error>) -> Void) -> Void,
        reply: @escaping (Result<Value, APIError>) -> Void
    ) {
        pipeline.flush()
        change(loop.completion { [weak self] (result: Result<LinkOutcome<Value>, any Error>) in
            guard let self else { return }
            switch result {
            case .success(let outcome):
                learn(outcome.threads, outcome.names)
                reply(.success(outcome.value))
                let applied = core.apply(outcome.records, origin: .elsewhere, context())
                // Committed after every append before them (one writer): applied through their newest position.
                if follower == nil, let newest = outcome.records.map(\.pos).max() { pipeline.caughtUp(to: newest) }
                publish(applied)
                for record in outcome.records {
                    guard let thread = chat.thread(no: record.threadNo) else { continue }
                    // An ended link ends its sessions (the server cancels them, each with a system message).
                    guard thread.active else {
                        run(.linkEnded(threadNo: thread.no))
                        continue
                    }
                    for side in [Side.coach, Side.client] where broker.isOnline(thread.userID(side.other)) {
                        publishUnlogged(userID: thread.userID(side), frame: EventFrame(
                            PresenceEvent(userId: thread.userID(side.other), online: true, lastSeenAt: nil).jsonText))
                    }
                }
                follower?.own(outcome.records)
            case .failure(let error):
                reply(.failure(APIError(wrapping: error)))
            }
        })
    }

    /// A record another process committed (cluster mode, in position order: `LogFollower`), applied by the core,
    /// and its events for this process's subscribers. A tier record also updates the accounts' copy here.
    func applyFollowed(_ record: ChatRecord) -> [(userID: String, payload: String)] {
        let applied = core.apply([record], origin: .elsewhere, context())
        if let tier = record.content.tier, let thread = chat.thread(no: record.threadNo) {
            directory?.update(thread.clientID) { $0.tier = tier.tier }
            rememberAIGenerations(nil, of: thread.clientID)  // the kept figure's limit was the old tier's
        }
        if let erasure = record.content.erasure { erasedElsewhere(erasure.userID, at: record.at) }
        if let change = record.content.account { accountChangedElsewhere(change) }
        return applied.logged.map { ($0.userID, $0.payload) }
    }

    /// Threads created outside the log (provisioning for load tests): read them into the state.
    func threadsCreated(_ ids: [String], then: @escaping () -> Void) {
        let log = log
        loop.runBlocking({ Result { try log.threads(ids: ids) } }, then: { [weak self] result in
            if case .success(let (rows, names)) = result { self?.learn(rows, names) }
            then()
        })
    }

    /// Threads read from the store (a link, provisioning, another process's link) into the state, with their
    /// people's names. A thread the state has already keeps everything but its `active`.
    func learn(_ threads: [ThreadRow], _ names: [String: String]) {
        core.learn(threads: threads.map(ChatThread.init), names: names)
    }

    /// Whether a command naming `threadID` must wait for the thread to be read from the store: in a cluster, a
    /// thread another process just linked (or provisioning made) can reach a command here before the follower
    /// brings its link record, and refusing it `forbidden` (which apps are told not to retry) would be wrong.
    /// Alone, every thread is in memory: an unknown one is refused at once.
    func mustReadThread(_ threadID: String) -> Bool {
        follower != nil && chat.thread(id: threadID) == nil
    }

    /// Reads the thread (its saved views and its records after them) into the state, then calls `then` (with
    /// `unavailable` when the store could not be read): the waiting command runs again and finds it, or is
    /// refused as before if no such thread exists. Commands for one thread wait together, in arrival order.
    func readThread(_ threadID: String, then: @escaping (APIError?) -> Void) {
        if waitingForThread[threadID] != nil {
            waitingForThread[threadID]?.append(then)
            return
        }
        waitingForThread[threadID] = [then]
        guard let followable = follower?.log else { return finishThreadRead(threadID, nil) }
        let log = log
        loop.runBlocking({ Result { () throws -> ReloadedThreads? in
            let rows = try log.threads(ids: [threadID]).threads
            return rows.isEmpty ? nil : try followable.reloadThreads(nos: rows.map(\.no))
        } }, then: { [weak self] result in
            guard let self else { return }
            switch result {
            case .success(let reloaded):
                // The follower may have brought it meanwhile: what it applied is newer than this snapshot.
                if let reloaded, chat.thread(id: threadID) == nil {
                    learn(reloaded.threads, reloaded.names)
                    core.reset(reloaded.threads.map(ChatThread.init), tail: reloaded.tail)
                }
                finishThreadRead(threadID, nil)
            case .failure(let error):
                logger.error("reading a thread from the store failed", metadata: ["error": "\(error)"])
                storeFailedAt = loop.nowMilliseconds
                finishThreadRead(threadID, APIError(.unavailable, retryAfterSeconds: 1))
            }
        })
    }

    private func finishThreadRead(_ threadID: String, _ error: APIError?) {
        for waiting in waitingForThread.removeValue(forKey: threadID) ?? [] { waiting(error) }
    }

    // MARK: - Presence, typing, revoked sockets

    func isOnline(_ userID: String) -> Bool { broker.isOnline(userID) }

    /// The peers of the user's writable threads.
    func activePeers(of userID: String) -> [String] {
        chat.threads(of: userID).compactMap { thread in
            guard thread.active, let side = thread.side(of: userID) else { return nil }
            return thread.userID(side.other)
        }
    }

    func attach(_ socket: AppSocket) {
        broker.subscribe(socket, userID: socket.actor.userID)
    }

    func detach(_ socket: AppSocket) {
        broker.unsubscribe(socket, userID: socket.actor.userID)
    }

    func presenceChanged(_ userID: String, online: Bool) {
        let now = config.clock.now
        let frame = PresenceEvent(userId: userID, online: online, lastSeenAt: online ? nil : now).jsonText
        // The broker's `presenceChanged` fires in every process that sees the flip: each tells its own sockets.
        for peer in activePeers(of: userID) { broker.publishEphemeralLocally(userID: peer, frame: frame) }
        if !online { log.setLastSeen(userID: userID, at: now) }
    }

    /// Closes every socket of a revoked session with 4003.
    func closeSockets(userID: String, sessionID: String) {
        for case let socket as AppSocket in broker.localSubscribers(userID) where socket.sessionID == sessionID {
            socket.connection?.close(CloseCode(SpotterCloseCode.sessionRevoked), reason: "session revoked")
        }
    }

    /// Typing goes to the peer's sockets only; it is never stored.
    func typing(from userID: String, threadID: String, to peerID: String) {
        broker.publishEphemeral(userID: peerID, frame: TypingEvent(threadId: threadID, userId: userID, expiresIn: 5).jsonText)
    }
}
