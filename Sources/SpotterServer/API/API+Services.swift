import FoundationEssentials
import SpotterCore
import SpotterProtocol
import SpotterPorts
import WebSocket

/// The server-to-server API: admins make and revoke API keys; a service holding one posts system messages into a
/// thread ("Workout plan generated"), idempotently, through the same send path as a person's message.
extension API {
    /// Keys look like `spk_` and 43 characters of base64url (256 random bits).
    static let apiKeyPrefix = "spk_"

    func createAPIKey(_ request: HTTPRequest, _ actor: Actor, _ language: Language, _ respond: @escaping Respond) throws(APIError) {
        guard AccessPolicy.canAdminister(actor) else { throw APIError(.forbidden) }
        let body = try JSON.decode(APIKeyRequest.self, from: request.body)
        let name = try AccountRules.normalizeName(body.name ?? "")
        let scopes = body.scopes ?? []
        guard Set(scopes).count == scopes.count, scopes.allSatisfy(API.knownScopes.contains) else {
            throw APIError(.badRequest, field: "scopes")
        }
        let key = API.apiKeyPrefix + SecureRandom.token()
        let (accounts, clock) = (services.accounts, services.clock)
        run(status: 201, language, respond) { () -> APIKeyView in
            let made = try accounts.createAPIKey(id: SecureRandom.uuid(), name: name, keyHash: Digest.sha256Hex(key),
                                                 createdBy: actor.userID, now: clock.now, scopes: scopes)
            return APIKeyView(id: made.id, name: made.name, key: key, createdBy: made.createdBy, createdAt: made.createdAt,
                              revokedAt: nil, scopes: made.scopes)
        }
    }

    func listAPIKeys(_ actor: Actor, _ language: Language, _ respond: @escaping Respond) throws(APIError) {
        guard AccessPolicy.canAdminister(actor) else { throw APIError(.forbidden) }
        let accounts = services.accounts
        run(language, respond) { () -> APIKeyList in
            APIKeyList(keys: try accounts.apiKeys().map {
                APIKeyView(id: $0.id, name: $0.name, key: nil, createdBy: $0.createdBy, createdAt: $0.createdAt, revokedAt: $0.revokedAt,
                           scopes: $0.scopes)
            })
        }
    }

    func revokeAPIKey(_ id: String, _ actor: Actor, _ language: Language, _ respond: @escaping Respond) throws(APIError) {
        guard AccessPolicy.canAdminister(actor) else { throw APIError(.forbidden) }
        let (accounts, clock) = (services.accounts, services.clock)
        server.loop.runBlocking({ blockingResult { try accounts.revokeAPIKey(id: id, now: clock.now) } }, then: { result in
            switch result {
            case .success(true): respond(HTTPResponse(status: 204))
            case .success(false): respond(.apiError(APIError(.notFound, field: "id"), language))
            case .failure(let error): respond(.apiError(error, language))
            }
        })
    }

    /// `POST /v1/threads/{id}/system-messages` with `Authorization: Bearer spk_…`: the key is looked up (by its
    /// SHA-256, off the loop), then the message is sent like any other: durable before the answer, an event to
    /// every device of both participants, a retry with the same `client_message_id` answered with the original.
    func postSystemMessage(_ threadID: String, _ request: HTTPRequest, _ language: Language,
                           _ respond: @escaping Respond) throws(APIError) {
        guard let key = bearerToken(request), key.hasPrefix(API.apiKeyPrefix) else { throw APIError(.unauthorized) }
        let body = try JSON.decode(SystemMessageRequest.self, from: request.body)
        let clientMessageID = try MessageRules.clientMessageID(body.clientMessageId)
        let text = try MessageRules.text(body.text)
        let side: Side
        switch body.side ?? "client" {
        case "client": side = .client
        case "coach": side = .coach
        default: throw APIError(.badRequest, field: "side")
        }
        let accounts = services.accounts
        server.loop.runBlocking({ blockingResult { try accounts.apiKeyID(hash: Digest.sha256Hex(key)) } }, then: { [self] result in
            switch result {
            case .success(nil):
                respond(.apiError(APIError(.unauthorized), language))
            case .failure(let error):
                respond(.apiError(error, language))
            case .success:
                guard let thread = server.runner.chat.thread(id: threadID) else {
                    return respond(.apiError(APIError(.notFound, field: "thread_id"), language))
                }
                let send = SendRequest(sender: thread.userID(side), threadID: threadID, clientMessageID: clientMessageID,
                                       kind: .system, body: text)
                // A thread this process let go is brought up to date first (`CoreRunner+Interest`): its seq moved.
                server.runner.refresh([thread.no]) { [self] error in
                    if let error { return respond(.apiError(error, language)) }
                    server.runner.run(.send(send)) { sent in
                        switch sent {
                        case .success(let json): respond(HTTPResponse(status: 200, contentType: "application/json", body: json + "\n"))
                        case .failure(let error): respond(.apiError(error, language))
                        }
                    }
                }
            }
        })
    }
}
