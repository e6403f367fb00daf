import SpotterCore
import SpotterProtocol
import SpotterPorts
import WebSocket

/// Subscription tiers (`--tiers`): admins set a client's tier and read their usage. A change applies at once:
/// the client's live sockets get their new quota.
extension API {
    func setTier(_ userID: String, _ request: HTTPRequest, _ actor: Actor, _ language: Language,
                 _ respond: @escaping Respond) throws(APIError) {
        guard AccessPolicy.canAdminister(actor) else { throw APIError(.forbidden) }
        guard let name = try JSON.decode(TierRequest.self, from: request.body).tier else {
            throw APIError(.missingField, field: "tier")
        }
        guard let tier = Tier(rawValue: name) else { throw APIError(.badRequest, field: "tier") }
        changeTier(userID, tier) { result in
            switch result {
            case .success(let usage): respond(.json(200, usage))
            case .failure(let error): respond(.apiError(error, language))
            }
        }
    }

    /// A client's tier change, whoever asks (an admin, or billing through `PUT /v1/services/users/{id}/tier`): the
    /// user's row, then the `tier` record on the client's current thread (replayed by `resume`) and the live quota
    /// on their sockets; `completion` (on the loop) gets the usage once the record is committed.
    func changeTier(_ userID: String, _ tier: Tier, _ completion: @escaping (Result<UsageView, APIError>) -> Void) {
        let accounts = services.accounts
        // The AI generations under the new tier are read with the change, so that the `quota` pushed after the
        // record goes out at once: before this answer, never after a socket the caller opens next.
        let (readAI, now) = (server.runner.aiGenerations, server.config.clock.now)
        server.loop.runBlocking({
            blockingResult { () throws -> (UserRecord, AIGenerationAllowance?) in
                do {
                    let user = try accounts.setTier(userID: userID, tier.rawValue)
                    return (user, readAI?(userID, now))
                } catch AccountStoreError.notFound {
                    throw APIError(.notFound, field: "id")
                } catch AccountStoreError.conflict {
                    throw APIError(.conflict, field: "id")  // coaches and admins have no tier
                }
            }
        }, then: { [self] (result: Result<(UserRecord, AIGenerationAllowance?), APIError>) in
            switch result {
            case .success(let (_, allowance)):
                server.runner.rememberAIGenerations(allowance, of: userID)
                // The client's threads this process let go are brought up to date first (`CoreRunner+Interest`).
                server.runner.refresh(server.runner.chat.threads(of: userID).map(\.no)) { [self] _ in
                    server.runner.run(.tierSet(clientID: userID, tier: tier.rawValue)) { [self] _ in
                        server.runner.quotaView(userID) { quota in
                            completion(.success(UsageView(userId: userID, tier: tier.rawValue, quota: quota)))
                        }
                    }
                }
            case .failure(let error):
                completion(.failure(error))
            }
        })
    }

    func usage(_ userID: String, _ actor: Actor, _ language: Language, _ respond: @escaping Respond) throws(APIError) {
        guard AccessPolicy.canAdminister(actor) else { throw APIError(.forbidden) }
        guard let user = services.accounts.directory?.user(id: userID), user.role == "client" else {
            throw APIError(.notFound, field: "id")
        }
        answerUsage(userID, tier: Tier(stored: user.tier), language, respond)
    }

    private func answerUsage(_ userID: String, tier: Tier, _ language: Language, _ respond: @escaping Respond) {
        server.runner.quotaView(userID) { quota in
            respond(.json(200, UsageView(userId: userID, tier: tier.rawValue, quota: quota)))
        }
    }
}

/// Ratings (`--ratings`): admins read a coach's average and newest answers.
extension API {
    func coachRatings(_ coachID: String, _ actor: Actor, _ language: Language, _ respond: @escaping Respond) throws(APIError) {
        guard AccessPolicy.canAdminister(actor) else { throw APIError(.forbidden) }
        guard services.accounts.directory?.user(id: coachID)?.role == "coach" else { throw APIError(.notFound, field: "id") }
        let accounts = services.accounts
        run(language, respond) { () -> CoachRatingsView in
            let ratings = try accounts.ratings(ofCoach: coachID)
            return CoachRatingsView(
                coachId: coachID, average: ratings.average.map { ($0 * 10).rounded() / 10 }, count: ratings.count,
                skipped: ratings.skipped,
                recent: ratings.recent.map {
                    RatingView(clientId: $0.clientId, stars: $0.stars, feedback: $0.feedback, sessionId: $0.sessionId,
                               createdAt: $0.createdAt)
                })
        }
    }
}
