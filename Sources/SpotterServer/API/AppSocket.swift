import FoundationEssentials
import SpotterBroker
import SpotterCore
import SpotterPorts
import SpotterProtocol
import WebSocket

/// `/v1/ws`: one signed-in user's live connection. Loop thread only.
///
/// The access token checked at the upgrade sets when the socket expires.
/// Shortly before that the server sends `auth.expiring`; the client answers
/// with `auth.refresh` (its refresh token), which rotates the token and
/// extends the socket. A socket whose token lapses is closed with 4001.
/// Commands are JSON text frames `{"id":…,"type":…}`; every one gets a
/// reply with the same id, and bad input never closes the connection.
///
/// Events from the user's log arrive in cursor order with no gaps and no
/// duplicates: while the socket opens or replays after `resume`, live
/// events wait in a buffer, and every event at or below the last cursor
/// sent is dropped.
final class AppSocket: WebSocketEndpoint, BrokerSubscriber {
    let api: API
    let actor: Actor
    /// The session (refresh-token family) the socket's token belongs to: it
    /// follows `auth.refresh`, and revoking it closes the socket (4003).
    private(set) var sessionID: String
    var expiresAt: Int64
    var language: Language
    /// Whether the client chose a language at connect (else the saved one is used).
    private let languageChosen: Bool
    private var warned = false
    private(set) weak var connection: Connection?

    enum Delivery {
        /// Waiting for the first read (hello); live events are buffered.
        case opening
        /// Replaying the log after `resume`; live events are buffered.
        case replaying
        case live
    }
    private(set) var delivery = Delivery.opening
    private var buffered: [(cursor: Int64, frame: EventFrame)] = []
    /// The highest cursor this socket has sent (or the client said it has).
    var lastSentCursor: Int64 = 0
    /// Commands per connection (`ServerConfig.commandBurst`, `commandsPerSecond`).
    var commandBudget: TokenBucket
    /// `message.send` commands submitted and not yet committed.
    var pendingSends = 0
    /// When this socket last forwarded typing, per thread (loop ms).
    var lastTyping: [String: UInt64] = [:]
    /// The app said it went to the background (`app_state`): the person counts as away for pushes while every
    /// socket of theirs here is.
    var inBackground = false

    var runner: CoreRunner { api.server.runner }

    /// `cursor` from the connect URL: replay from it before going live, so
    /// no live event can slip in between the hello and a `resume`.
    private let resumeCursor: Int64?

    init(api: API, actor: Actor, claims: AccessClaims, language: Language?, resumeCursor: Int64? = nil) {
        self.resumeCursor = resumeCursor
        self.api = api
        self.actor = actor
        self.expiresAt = claims.expiresAt
        self.sessionID = claims.sessionID
        self.language = language ?? .english
        self.languageChosen = language != nil
        commandBudget = TokenBucket(capacity: Double(api.server.config.commandBurst),
                                    perSecond: Double(api.server.config.commandsPerSecond))
    }

    // MARK: - Life cycle

    func opened(on connection: Connection) {
        self.connection = connection
        api.server.outbound.add(connection, account: actor.userID)
        runner.attach(self)
        // In a cluster the user's threads this process let go are read again first (`CoreRunner+Interest`):
        // attached, the user's threads get every record from now on.
        runner.holdThreads(of: actor.userID, stillWanted: { [weak self] in self?.connection != nil }) { [weak self] in
            // … and the people those threads are shared with (`AppSocket+Counterparts`).
            self?.withCounterpartsKnown { [weak self] in
                guard let self, let connection = self.connection else { return }
                hello(on: connection)
            }
        }
    }

    private func hello(on connection: Connection) {
        withUserAndAIGenerations { [self] user, ai in
            guard let user else {
                connection.close(CloseCode(SpotterCloseCode.sessionRevoked), reason: "account not found")
                return
            }
            if !languageChosen, let saved = Language(rawValue: user.language) { language = saved }
            // Threads and the cursor come from the chat state, which the log keeps current: nothing else to read.
            let cursor = runner.chat.lastPos(of: actor.userID)
            lastSentCursor = cursor
            send(HelloEvent(user: user.view, expiresAt: expiresAt, cursor: cursor).jsonText)
            // A metered client's quota comes next (`--tiers`; a value, not a logged event), then the replay.
            runner.quotaView(actor.userID, knownAI: ai) { [weak self] view in
                guard let self else { return }
                if let view { send(QuotaEvent(quota: view).jsonText) }
                if let resumeCursor {
                    startResume(from: resumeCursor, id: nil)
                } else {
                    goLive()
                }
            }
        }
    }

    /// The socket's user, from the user directory at once (no SQLite on a connect), or read on the pool when
    /// the directory does not have them; nil if the account is gone or could not be read.
    func withUser(_ then: @escaping (UserRecord?) -> Void) {
        let accounts = api.services.accounts
        if let known = accounts.directory?.user(id: actor.userID) {
            then(known)
            return
        }
        let userID = actor.userID
        api.server.loop.runBlocking({
            blockingResult { try accounts.user(id: userID) }
        }, then: { result in
            if case .success(let user) = result { then(user) } else { then(nil) }
        })
    }

    func closed(on connection: Connection) {
        runner.detach(self)
    }

    func tick(on connection: Connection) {
        let now = api.services.clock.now
        if now >= expiresAt {
            connection.close(CloseCode(SpotterCloseCode.tokenExpired), reason: "token expired")
        } else if !warned, now >= expiresAt - api.server.config.tokenExpiryWarningSeconds {
            warned = true
            send(JSON.encode(AuthExpiringEvent(expiresAt: expiresAt, secondsLeft: Int(expiresAt - now))))
        }
    }

    // MARK: - Events

    /// A committed event for this user.
    func deliver(cursor: Int64, frame: EventFrame) {
        switch delivery {
        case .opening, .replaying:
            buffered.append((cursor, frame))
        case .live:
            sendLogged(cursor: cursor, frame: frame)
        }
    }

    func sendLogged(cursor: Int64, frame: EventFrame) {
        guard cursor > lastSentCursor else { return }  // already sent (replay and live overlap)
        lastSentCursor = cursor
        connection?.sendFrame(frame.bytes)
    }

    /// Presence and typing: not logged, sent only once the socket is live.
    func deliverEphemeral(_ frame: EventFrame) {
        if case .live = delivery { connection?.sendFrame(frame.bytes) }
    }

    func beginReplay(from cursor: Int64) {
        delivery = .replaying
        lastSentCursor = cursor
    }

    /// Sends what waited in the buffer and switches to live delivery.
    func goLive() {
        let waiting = buffered
        buffered = []
        delivery = .live
        for event in waiting { sendLogged(cursor: event.cursor, frame: event.frame) }
    }

    // MARK: - Commands

    func handle(_ event: WebSocketEvent, on connection: Connection) {
        // Every frame costs budget, readable or not: junk must not be free.
        let affordable = commandBudget.take(now: Double(api.server.loop.nowMilliseconds) / 1000)
        guard case .text(let bytes) = event else {
            reply(id: nil, error: APIError(.badRequest))
            return
        }
        let id: String, command: any SocketCommandBody
        switch SocketCommand.decode(bytes) {
        case .success(let decoded):
            (id, command) = decoded
        case .failure(let failure):
            reply(id: failure.id, error: failure.error)
            return
        }
        guard affordable else {
            reply(id: id, error: APIError(.rateLimited, retryAfterSeconds: 1))
            return
        }
        if let threadID = (command as? any ThreadScoped)?.threadId, runner.mustReadThread(threadID) {
            runner.readThread(threadID) { [self] error in
                if let error { return reply(id: id, error: error) }
                dispatch(command, id: id)
            }
            return
        }
        dispatch(command, id: id)
    }

    private func dispatch(_ command: any SocketCommandBody, id: String) {
        if !Self.commands.dispatch(command, id: id, on: self) {
            reply(id: id, error: APIError(.unknownCommand, field: "type"))
        }
    }

    func me(id: String?) {
        withUser { [self] user in
            if let user {
                send(Reply.ok(id: id, resultJSON: JSON.encode(user.view)))
            } else {
                reply(id: id, error: APIError(.unauthorized))
            }
        }
    }

    func refresh(_ body: RefreshRequest, id: String) {
        guard let token = body.refreshToken, !token.isEmpty else {
            reply(id: id, error: APIError(.missingField, field: "refresh_token"))
            return
        }
        let services = api.services
        let userID = actor.userID
        api.server.loop.runBlocking({
            // A refresh token of another account does not extend this socket, and is left untouched.
            blockingResult { try API.rotate(token, services, ownerID: userID) }
        }, then: { [self] result in
            switch result {
            case .success(.session(let session, let familyID)):
                expiresAt = api.services.clock.now + Int64(session.expiresIn)
                sessionID = familyID
                warned = false
                send(Reply.ok(id: id, resultJSON: JSON.encode(SocketRefreshResult(session: session, expiresAt: expiresAt))))
            case .success(.reused(let revoked)):
                reply(id: id, error: APIError(.refreshTokenReused))
                api.sessionsRevoked([revoked])
            case .failure(let error):
                reply(id: id, error: error)
            }
        })
    }

    // MARK: - Replies

    func runAndReply<T: Sendable & Encodable>(id: String?, _ work: @escaping @Sendable () throws -> T) {
        api.server.loop.runBlocking({ blockingResult(work) }, then: { [self] result in
            answer(id: id, result.map { JSON.encode($0) })
        })
    }

    /// Runs `work` off the loop and replies with the JSON text it returns (a page already fitted: `ReplyPage`).
    func runAndReplyJSON(id: String?, _ work: @escaping @Sendable () throws -> String) {
        api.server.loop.runBlocking({ blockingResult(work) }, then: { [self] result in answer(id: id, result) })
    }

    /// The reply to `id`: the result's JSON, or the error.
    func answer(id: String?, _ result: Result<String, APIError>) {
        switch result {
        case .success(let json): sendOK(id: id, resultJSON: json)
        case .failure(let error): reply(id: id, error: error)
        }
    }

    func reply(id: String?, error: APIError) {
        send(Reply.error(id: id, errorJSON: String(decoding: error.jsonObject(language), as: UTF8.self)))
    }

    func send(_ text: String) {
        guard let connection else { return }
        var text = text
        // Native strings are contiguous UTF-8: frame them in place, without a copy into an array first.
        text.withUTF8 { _ = connection.sendMessage(.text, UnsafeRawBufferPointer($0)) }
    }
}
