import SpotterCore
import SpotterProtocol
import SpotterPorts

/// Ratings on the live socket (`--ratings`): a client answers a `rating_prompt` with stars or skips it.
extension AppSocket {
    static func registerRatingCommands(_ table: inout CommandTable) {
        table.on(RatingSubmitCommand.self) { socket, body, id in
            socket.rate(threadID: body.threadId, stars: body.stars, feedback: body.feedback, sessionID: body.sessionId,
                        skipped: false, id: id)
        }
        table.on(RatingSkipCommand.self) { socket, body, id in
            socket.rate(threadID: body.threadId, stars: nil, feedback: nil, sessionID: body.sessionId, skipped: true, id: id)
        }
    }

    /// Feedback is at most this many characters (as people count them).
    static let maxFeedbackCharacters = 500

    private func rate(threadID: String?, stars: Int64?, feedback: String?, sessionID: String?, skipped: Bool, id: String) {
        let rating: RatingRecord
        do throws(APIError) {
            guard api.server.config.ratings else { throw APIError(.forbidden, field: "type") }
            guard let threadID else { throw APIError(.missingField, field: "thread_id") }
            let (thread, side) = try runner.chat.participant(threadID, actor.userID)
            guard side == .client else { throw APIError(.forbidden, field: "thread_id") }  // clients rate their coach
            if !skipped {
                guard let stars else { throw APIError(.missingField, field: "stars") }
                guard (1...5).contains(stars) else { throw APIError(.outOfRange, field: "stars") }
            }
            if let feedback, feedback.count > Self.maxFeedbackCharacters { throw APIError(.outOfRange, field: "feedback") }
            if let sessionID, runner.core.sessions[sessionID]?.threadID != thread.id {
                throw APIError(.sessionNotFound, field: "session_id")
            }
            rating = RatingRecord(coachId: thread.coachID, clientId: actor.userID, stars: skipped ? nil : stars.map { Int($0) },
                                  feedback: skipped ? nil : feedback, sessionId: sessionID, createdAt: api.server.config.clock.now)
        } catch {
            return reply(id: id, error: error)
        }
        let accounts = api.services.accounts
        api.server.loop.runBlocking({ blockingResult { try accounts.addRating(rating) } }, then: { [self] result in
            answer(id: id, result.map { "{}" })
        })
    }
}
