import SpotterCore
import SpotterProtocol
import SpotterPorts
import WebSocket

/// Tier changes from billing (issue 29): `PUT /v1/services/users/{id}/tier` with `Authorization: Bearer spk_…` (a
/// key made with the `tier` scope) and an `Idempotency-Key`. The change is the admin's (`changeTier`): the same
/// `tier` record, the same live quota. The first answer is kept per key and `Idempotency-Key`: the same request again
/// gets it again and logs nothing; another request under the same `Idempotency-Key` is refused.
extension API {
    /// The scope a key needs to set tiers.
    static let tierScope = "tier"
    /// Scopes a key can be made with.
    static let knownScopes: Set<String> = [tierScope, quotaScope]

    func serviceSetTier(_ userID: String, _ request: HTTPRequest, _ language: Language, _ respond: @escaping Respond) throws(APIError) {
        guard let key = bearerToken(request), key.hasPrefix(API.apiKeyPrefix) else { throw APIError(.unauthorized) }
        let idempotencyKey = try Self.idempotencyKey(request)
        guard let name = try JSON.decode(TierRequest.self, from: request.body).tier else {
            throw APIError(.missingField, field: "tier")
        }
        guard let tier = Tier(rawValue: name) else { throw APIError(.badRequest, field: "tier") }
        // What "the same request" means: the same user and tier, however the JSON was spaced.
        let requestHash = Digest.sha256Hex("PUT tier\n\(userID)\n\(tier.rawValue)")
        let (accounts, clock) = (services.accounts, services.clock)
        server.loop.runBlocking({
            blockingResult { () throws -> (String, ServiceRequestClaim) in
                guard let found = try accounts.apiKey(hash: Digest.sha256Hex(key)) else { throw APIError(.unauthorized) }
                guard found.scopes.contains(Self.tierScope) else { throw APIError(.apiKeyScopeMissing) }
                return (found.id, try accounts.claimServiceRequest(keyID: found.id, idempotencyKey: idempotencyKey,
                                                                   requestHash: requestHash, now: clock.now))
            }
        }, then: { [self] result in
            switch result {
            case .failure(let error):
                respond(.apiError(error, language))
            case .success((_, .done(let answer))):
                respond(HTTPResponse(status: 200, headers: [("Content-Type", "application/json"), ("Idempotent-Replayed", "true")],
                                     body: Array(answer.utf8)))
            case .success((_, .inProgress)):
                respond(.apiError(APIError(.conflict, field: "Idempotency-Key", retryAfterSeconds: 1), language))
            case .success((_, .reused)):
                respond(.apiError(APIError(.idempotencyKeyReused, field: "Idempotency-Key"), language))
            case .success((let keyID, .claimed)):
                changeTier(userID, tier) { [self] changed in
                    switch changed {
                    case .success(let usage):
                        let answer = JSON.encode(usage) + "\n"
                        server.loop.runBlocking({
                            blockingResult { try accounts.finishServiceRequest(keyID: keyID, idempotencyKey: idempotencyKey, response: answer) }
                        }, then: { _ in respond(HTTPResponse(status: 200, contentType: "application/json", body: answer)) })
                    case .failure(let error):
                        // Nothing changed: the key is free for a retry.
                        server.loop.runBlocking({
                            blockingResult { try accounts.dropServiceRequest(keyID: keyID, idempotencyKey: idempotencyKey) }
                        }, then: { _ in respond(.apiError(error, language)) })
                    }
                }
            }
        })
    }

    /// `Idempotency-Key`: 1–255 characters of printable ASCII.
    static func idempotencyKey(_ request: HTTPRequest) throws(APIError) -> String {
        guard let value = request.headers["Idempotency-Key"], !value.isEmpty else {
            throw APIError(.missingField, field: "Idempotency-Key")
        }
        guard value.utf8.count <= 255, value.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw APIError(.badRequest, field: "Idempotency-Key")
        }
        return value
    }
}
