import SpotterPorts
import SpotterProtocol

/// AI-generation quotas (issue 30 item 4) in the client's `quota`: the counter is the accounts store's (the AI
/// service consumes through the services API, possibly on another process). It is read off the loop when a socket
/// opens (before the hello, so that the hello, the quota and `live` follow one another with no wait between them)
/// and when a tier changes, and kept (`aiAllowances`) with what a consume on this process answered, so that the
/// `quota` pushed after a send or a tier change goes out at once, in order with the frames around it, never after
/// a later reply. A kept figure whose window has ended is read again. In a cluster, a consume on another process
/// reaches this one's sockets as that process's `quota`; this process's kept figure catches up at the next socket
/// open or tier change.
extension CoreRunner {
    /// The user's AI generations of the current window, read off the loop (nil without a reader), and kept.
    func readAIGenerations(_ userID: String, then done: @escaping (AIGenerationAllowance?) -> Void) {
        guard let read = aiGenerations else { return done(nil) }
        let now = config.clock.now
        loop.runBlocking({ read(userID, now) }, then: { [weak self] allowance in
            self?.rememberAIGenerations(allowance, of: userID)
            done(allowance)
        })
    }

    /// Keeps what the store said or a consume answered (nil forgets).
    func rememberAIGenerations(_ allowance: AIGenerationAllowance?, of userID: String) {
        aiAllowances[userID] = allowance
    }

    /// `view` with the AI generations: `known` (read before), kept and still in its window, or read now.
    func withAIGenerations(_ view: QuotaView, of userID: String, known: AIGenerationAllowance?,
                           then done: @escaping (QuotaView?) -> Void) {
        var view = view
        if let known {
            rememberAIGenerations(known, of: userID)
            view.aiGenerations = known
            return done(view)
        }
        if let kept = aiAllowances[userID], kept.resetsAt > config.clock.now {
            view.aiGenerations = kept
            return done(view)
        }
        readAIGenerations(userID) { allowance in
            view.aiGenerations = allowance
            done(view)
        }
    }
}

extension AppSocket {
    /// The socket's user and, for a metered client (`--tiers`), their AI generations, read before the hello.
    func withUserAndAIGenerations(_ then: @escaping (UserRecord?, AIGenerationAllowance?) -> Void) {
        withUser { [self] user in
            guard let user, api.server.config.tiers, user.role == "client" else { return then(user, nil) }
            runner.readAIGenerations(user.id) { then(user, $0) }
        }
    }
}
