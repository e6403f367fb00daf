import SpotterCore
import SpotterProtocol
import SpotterPorts
import WebSocket

/// AI-generation quotas (issue 30 item 4): the AI service consumes one generation per plan it makes with
/// `POST /v1/services/users/{id}/quotas/ai_generation/consume`, `Authorization: Bearer spk_…` (a key made with the
/// `quota` scope) and an `Idempotency-Key`. Spotter counts it in the user's week or day (their time zone) and
/// answers what is left, or refuses with `quota_exceeded` and the window's `resets_at`. The count and the stored
/// answer are one transaction: a retry with the same key gets the first answer and consumes nothing, even after a
/// crash. The client's live sockets get their new `quota`.
extension API {
    /// The scope a key needs to consume quotas.
    static let quotaScope = "quota"

    func serviceConsumeAIGeneration(_ userID: String, _ request: HTTPRequest, _ language: Language,
                                    _ respond: @escaping Respond) throws(APIError) {
        guard let key = bearerToken(request), key.hasPrefix(API.apiKeyPrefix) else { throw APIError(.unauthorized) }
        let idempotencyKey = try Self.idempotencyKey(request)
        // The body, if any, says nothing (the path names the user and the quota): any other request is this one.
        let requestHash = Digest.sha256Hex("POST ai_generation\n\(userID)")
        let (accounts, clock, metered) = (services.accounts, services.clock, server.config.tiers)
        server.loop.runBlocking({
            blockingResult { () throws -> Result<AccountStore.AIGenerationConsume, APIError> in
                guard let found = try accounts.apiKey(hash: Digest.sha256Hex(key)) else { throw APIError(.unauthorized) }
                guard found.scopes.contains(Self.quotaScope) else { throw APIError(.apiKeyScopeMissing) }
                let now = clock.now
                do {
                    return .success(try accounts.consumeAIGeneration(userID: userID, keyID: found.id, idempotencyKey: idempotencyKey,
                                                                     requestHash: requestHash, metered: metered, now: now))
                } catch let used as AccountStore.AIQuotaExhausted {
                    return .failure(APIError(.quotaExceeded, field: "ai_generation",
                                             retryAfterSeconds: Int(clamping: max(1, used.resetsAt - now)),
                                             detail: .aiGenerationQuota(tier: used.tier, resetsAt: used.resetsAt)))
                } catch AccountStoreError.notFound {
                    throw APIError(.notFound, field: "id")
                }
            }
        }, then: { [self] (result: Result<Result<AccountStore.AIGenerationConsume, APIError>, APIError>) in
            switch result {
            case .failure(let error), .success(.failure(let error)):
                respond(.apiError(error, language))
            case .success(.success(.replayed(let answer))):
                respond(HTTPResponse(status: 200, headers: [("Content-Type", "application/json"), ("Idempotent-Replayed", "true")],
                                     body: Array(answer.utf8)))
            case .success(.success(.inProgress)):
                respond(.apiError(APIError(.conflict, field: "Idempotency-Key", retryAfterSeconds: 1), language))
            case .success(.success(.reused)):
                respond(.apiError(APIError(.idempotencyKeyReused, field: "Idempotency-Key"), language))
            case .success(.success(.accepted(let view, let json))):
                respond(HTTPResponse(status: 200, contentType: "application/json", body: json))
                server.runner.rememberAIGenerations(view.aiGenerations, of: userID)
                server.runner.pushQuota(userID)
            }
        })
    }
}
