import SpotterPorts
import SpotterProtocol

/// AI-generation quotas (issue 30 item 4) in the client's `quota`: the counter is the accounts store's (the AI
/// service consumes through the services API, possibly on another process), so it is read, off the loop, each time
/// a quota is shown — before the hello for a socket that opens, so that the hello, the quota and `live` follow one
/// another with no wait between them (a command sent right after the hello finds the socket live).
extension CoreRunner {
    /// The user's AI generations of the current window, read off the loop (nil without a reader).
    func readAIGenerations(_ userID: String, then done: @escaping (AIGenerationAllowance?) -> Void) {
        guard let read = aiGenerations else { return done(nil) }
        let now = config.clock.now
        loop.runBlocking({ read(userID, now) }, then: done)
    }

    /// `view` with the AI generations: `known` (read before), or read now.
    func withAIGenerations(_ view: QuotaView, of userID: String, known: AIGenerationAllowance?,
                           then done: @escaping (QuotaView?) -> Void) {
        var view = view
        if let known {
            view.aiGenerations = known
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
