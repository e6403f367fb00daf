import SpotterCore
import SpotterProtocol
import SpotterPorts
import WebSocket

/// Notification preferences (issue 28, item 4): the kinds of push a person keeps on, the threads they muted and
/// their quiet hours, read in their own time zone. What each does to each push is `NotificationPolicy`'s.
extension API {
    /// `GET /v1/me/notifications`: the settings in force (the defaults for a user who never changed them).
    func notificationSettings(_ actor: Actor, _ language: Language, _ respond: @escaping Respond) {
        let (accounts, clock) = (services.accounts, services.clock)
        run(language, respond) { () -> NotificationSettings in
            guard let user = try accounts.user(id: actor.userID) else { throw APIError(.unauthorized) }
            return try accounts.notificationPreferences(userID: actor.userID)
                .settings(timeZone: TimeZoneRules.shownName(user.timeZone), now: clock.now)
        }
    }

    /// `PUT /v1/me/notifications`: any of the settings, checked on the loop (pure), saved off it in one
    /// transaction; answers the settings now in force. A muted thread must be one of the user's (`forbidden`).
    func updateNotificationSettings(_ request: HTTPRequest, _ actor: Actor, _ language: Language,
                                    _ respond: @escaping Respond) throws(APIError) {
        let body = try JSON.decode(NotificationSettingsRequest.self, from: request.body)
        let (accounts, clock) = (services.accounts, services.clock)
        let now = clock.now
        let change = try NotificationRules.check(body, now: now)
        run(language, respond) { () -> NotificationSettings in
            guard let user = try accounts.user(id: actor.userID) else { throw APIError(.unauthorized) }
            switch try accounts.updateNotificationPreferences(userID: actor.userID, change, now: now) {
            case .saved(let preferences):
                return preferences.settings(timeZone: TimeZoneRules.shownName(user.timeZone), now: now)
            case .notParticipant:
                throw APIError(.forbidden, field: "muted_threads.thread_id")
            }
        }
    }
}

extension API {
    /// `GET /v1/push/vapid-public-key`: the key browsers subscribe with; 404 `push_not_configured` on a server without
    /// Web Push. No sign-in: the key is public, and the console asks for it before it subscribes.
    func vapidPublicKey(_ language: Language, _ respond: @escaping Respond) {
        guard let key = server.config.webPushPublicKey else {
            return respond(.apiError(APIError(.pushNotConfigured), language))
        }
        respond(.json(200, VAPIDPublicKey(key: key)))
    }
}
