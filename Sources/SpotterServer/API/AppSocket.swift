import FoundationEssentials
import SpotterCore
import SpotterProtocol
import WebSocket

/// `/v1/ws`: one signed-in user's live connection.
///
/// The access token checked at the upgrade sets when the socket expires.
/// Shortly before that the server sends `auth.expiring`; the client answers
/// with `auth.refresh` (its refresh token), which rotates the token and
/// extends the socket. A socket whose token lapses is closed with 4001.
/// Commands are JSON text frames `{"id":…,"type":…}`; every one gets a
/// reply with the same id, and bad input never closes the connection.
final class AppSocket: WebSocketEndpoint {
    unowned let api: API
    let actor: Actor
    private var expiresAt: Int64
    private var language: Language
    /// Whether the client chose a language at connect (else the saved one is used).
    private let languageChosen: Bool
    private var warned = false

    init(api: API, actor: Actor, claims: AccessClaims, language: Language?) {
        self.api = api
        self.actor = actor
        self.expiresAt = claims.expiresAt
        self.language = language ?? .english
        self.languageChosen = language != nil
    }

    func opened(on connection: Connection) {
        let accounts = api.services.accounts
        let userID = actor.userID
        api.server.loop.runBlocking({ blockingResult { try accounts.user(id: userID) } }, then: { [self] result in
            guard case .success(let user?) = result else {
                connection.close(CloseCode(SpotterCloseCode.sessionRevoked), reason: "account not found")
                return
            }
            if !languageChosen, let saved = Language(rawValue: user.language) { language = saved }
            send(JSON.encode(HelloEvent(user: user.view, expiresAt: expiresAt)), on: connection)
        })
    }

    func handle(_ event: WebSocketEvent, on connection: Connection) {
        guard case .text(let bytes) = event else {
            reply(id: nil, error: APIError(.badRequest), on: connection)
            return
        }
        guard let head = try? JSONDecoder().decode(CommandHead.self, from: Data(bytes)) else {
            reply(id: nil, error: APIError(.badRequest), on: connection)
            return
        }
        switch head.type {
        case "me":
            let accounts = api.services.accounts
            let userID = actor.userID
            runAndReply(id: head.id, on: connection) { () -> UserView in
                guard let user = try accounts.user(id: userID) else { throw APIError(.unauthorized) }
                return user.view
            }
        case "auth.refresh":
            refresh(bytes, id: head.id, on: connection)
        case nil:
            reply(id: head.id, error: APIError(.missingField, field: "type"), on: connection)
        default:
            reply(id: head.id, error: APIError(.unknownCommand, field: "type"), on: connection)
        }
    }

    private func refresh(_ bytes: [UInt8], id: String?, on connection: Connection) {
        guard let token = (try? JSONDecoder().decode(RefreshRequest.self, from: Data(bytes)))?.refreshToken, !token.isEmpty else {
            reply(id: id, error: APIError(.missingField, field: "refresh_token"), on: connection)
            return
        }
        let services = api.services
        let userID = actor.userID
        api.server.loop.runBlocking({
            blockingResult { () -> SessionResponse in
                let session = try API.rotate(token, services)
                // A refresh token of another account does not extend this socket.
                guard session.user.id == userID else { throw APIError(.forbidden) }
                return session
            }
        }, then: { [self] result in
            switch result {
            case .success(let session):
                expiresAt = unixNow() + Int64(session.expiresIn)
                warned = false
                send(Reply.ok(id: id, resultJSON: JSON.encode(SocketRefreshResult(session: session, expiresAt: expiresAt))), on: connection)
            case .failure(let error):
                reply(id: id, error: error, on: connection)
                if error.code == .refreshTokenReused {
                    connection.close(CloseCode(SpotterCloseCode.sessionRevoked), reason: "session revoked")
                }
            }
        })
    }

    func tick(on connection: Connection) {
        let now = unixNow()
        if now >= expiresAt {
            connection.close(CloseCode(SpotterCloseCode.tokenExpired), reason: "token expired")
        } else if !warned, now >= expiresAt - api.server.config.tokenExpiryWarningSeconds {
            warned = true
            send(JSON.encode(AuthExpiringEvent(expiresAt: expiresAt, secondsLeft: Int(expiresAt - now))), on: connection)
        }
    }

    // MARK: - Replies

    private func runAndReply<T: Sendable & Encodable>(
        id: String?, on connection: Connection, _ work: @escaping @Sendable () throws -> T
    ) {
        api.server.loop.runBlocking({ blockingResult(work) }, then: { [self] result in
            switch result {
            case .success(let value): send(Reply.ok(id: id, resultJSON: JSON.encode(value)), on: connection)
            case .failure(let error): reply(id: id, error: error, on: connection)
            }
        })
    }

    private func reply(id: String?, error: APIError, on connection: Connection) {
        send(Reply.error(id: id, errorJSON: String(decoding: error.jsonObject(language), as: UTF8.self)), on: connection)
    }

    private func send(_ text: String, on connection: Connection) {
        var bytes = Array(text.utf8)
        bytes.withUnsafeBytes { _ = connection.sendMessage(.text, $0) }
    }
}
