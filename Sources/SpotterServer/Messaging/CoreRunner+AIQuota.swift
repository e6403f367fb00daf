import SpotterProtocol

/// AI-generation quotas (issue 30 item 4) in the client's `quota`: the counter is the accounts store's (the AI
/// service consumes through the services API, possibly on another process), so it is read, off the loop, each time
/// a quota is shown.
extension CoreRunner {
    func withAIGenerations(_ view: QuotaView, of userID: String, then done: @escaping (QuotaView?) -> Void) {
        guard let read = aiGenerations else { return done(view) }
        let now = config.clock.now
        loop.runBlocking({ read(userID, now) }, then: { (allowance: AIGenerationAllowance?) in
            var view = view
            view.aiGenerations = allowance
            done(view)
        })
    }
}
