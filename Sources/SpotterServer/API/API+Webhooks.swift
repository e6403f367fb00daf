import SpotterCore
import SpotterProtocol
import SpotterPorts
import WebSocket

/// Outbound webhooks (issue 29): admins register endpoints, list them (never their secrets), delete them, rotate
/// their secrets, and read and replay what could not be delivered. Protocol/README.md, "Webhooks".
extension API {
    func createWebhook(_ request: HTTPRequest, _ actor: Actor, _ language: Language, _ respond: @escaping Respond) throws(APIError) {
        guard AccessPolicy.canAdminister(actor) else { throw APIError(.forbidden) }
        let body = try JSON.decode(WebhookEndpointRequest.self, from: request.body)
        let url = try WebhookRules.url(body.url, development: server.config.development)
        let events = try WebhookRules.events(body.events)
        let (accounts, clock) = (services.accounts, services.clock)
        run(status: 201, language, respond) { () -> WebhookView in
            guard let made = try accounts.createWebhook(id: SecureRandom.uuid(), url: url, events: events,
                                                        secret: WebhookRules.newSecret(), createdBy: actor.userID, now: clock.now,
                                                        limit: WebhookRules.maxEndpoints) else {
                throw APIError(.tooManyWebhooks)
            }
            return Self.view(made, secret: true)
        }
    }

    func listWebhooks(_ actor: Actor, _ language: Language, _ respond: @escaping Respond) throws(APIError) {
        guard AccessPolicy.canAdminister(actor) else { throw APIError(.forbidden) }
        let accounts = services.accounts
        run(language, respond) { WebhookList(webhooks: try accounts.webhooks().map { Self.view($0, secret: false) }) }
    }

    func deleteWebhook(_ id: String, _ actor: Actor, _ language: Language, _ respond: @escaping Respond) throws(APIError) {
        guard AccessPolicy.canAdminister(actor) else { throw APIError(.forbidden) }
        let accounts = services.accounts
        server.loop.runBlocking({ blockingResult { try accounts.deleteWebhook(id: id) } }, then: { result in
            switch result {
            case .success(true): respond(HTTPResponse(status: 204))
            case .success(false): respond(.apiError(APIError(.notFound, field: "id"), language))
            case .failure(let error): respond(.apiError(error, language))
            }
        })
    }

    func rotateWebhookSecret(_ id: String, _ actor: Actor, _ language: Language, _ respond: @escaping Respond) throws(APIError) {
        guard AccessPolicy.canAdminister(actor) else { throw APIError(.forbidden) }
        let accounts = services.accounts
        run(language, respond) { () -> WebhookView in
            guard let rotated = try accounts.rotateWebhookSecret(id: id, secret: WebhookRules.newSecret()) else {
                throw APIError(.notFound, field: "id")
            }
            return Self.view(rotated, secret: true)
        }
    }

    func webhookDeadLetters(_ id: String, _ actor: Actor, _ language: Language, _ respond: @escaping Respond) throws(APIError) {
        guard AccessPolicy.canAdminister(actor) else { throw APIError(.forbidden) }
        let accounts = services.accounts
        run(language, respond) { () -> DeadLetterList in
            guard try accounts.webhooks().contains(where: { $0.id == id }) else { throw APIError(.notFound, field: "id") }
            return DeadLetterList(deadLetters: try accounts.webhookDeadLetters(endpointID: id, limit: 1000).map {
                DeadLetterView(eventId: $0.eventID, type: $0.eventType, payload: $0.payload, attempts: $0.attempts,
                               lastError: $0.lastError, queuedAt: $0.enqueuedAt, deadAt: $0.deadAt)
            })
        }
    }

    func replayWebhookDeadLetters(_ id: String, _ request: HTTPRequest, _ actor: Actor, _ language: Language,
                                  _ respond: @escaping Respond) throws(APIError) {
        guard AccessPolicy.canAdminister(actor) else { throw APIError(.forbidden) }
        let eventIDs = try JSON.decode(ReplayRequest.self, from: request.body).eventIds
        if let eventIDs, eventIDs.count > 1000 || eventIDs.contains(where: { $0.isEmpty || $0.utf8.count > 200 }) {
            throw APIError(.outOfRange, field: "event_ids")
        }
        let accounts = services.accounts
        run(language, respond) { () -> ReplayView in
            guard try accounts.webhooks().contains(where: { $0.id == id }) else { throw APIError(.notFound, field: "id") }
            // Due at once: the dispatcher finds them at its next poll (every 250 ms).
            let replayed = try accounts.replayWebhookDeadLetters(endpointID: id, eventIDs: eventIDs, now: SystemClock.milliseconds)
            return ReplayView(replayed: replayed)
        }
    }

    private static func view(_ record: WebhookEndpointRecord, secret: Bool) -> WebhookView {
        WebhookView(id: record.id, url: record.url, events: record.events.map(\.rawValue), secret: secret ? record.secret : nil,
                    createdBy: record.createdBy, createdAt: record.createdAt)
    }
}
