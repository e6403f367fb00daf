import SpotterCore

/// One push to one device, as the dispatcher hands it to the provider of the device's platform. Built from a
/// committed log record by the push consumer; every field is decided before it reaches a provider, which only
/// encodes it for its platform (APNs JSON and headers, FCM HTTP v1 message, Web Push encrypted payload).
public struct PushMessage: Sendable, Equatable {
    /// Derived from the log record (and the device): the same on every retry and after a restart, so a provider
    /// or an app drops a repeat (`apns-id` as a UUID made from it, FCM `data.push_id`, Web Push payload `id`).
    public var id: String
    public var address: PushAddress
    /// What is shown; nil for a silent update (the badge only: a read on another device).
    public var alert: Alert?
    /// The receiver's total unread messages, for the app icon's badge.
    public var badge: Int?
    /// One per thread: a newer push with the same key replaces the older on the device (`apns-collapse-id`, FCM
    /// `collapse_key`, Web Push `Topic`, at most 32 characters of base64url alphabet).
    public var collapseKey: String?
    /// `message`, `session`, `reminder` or `badge` (the category an app sorts by; APNs `category`).
    public var category: String
    /// Handed to the app as it is (the thread, the session, the kind of change): strings only, FCM's rule.
    public var data: [String: String]
    /// Unix seconds after which the push is not worth delivering (`apns-expiration`, Web Push `TTL`, FCM `ttl`).
    public var expiresAt: Int64
    /// Urgent: delivered at once (`apns-priority: 10`, `Urgency: high`, FCM `priority: HIGH`); otherwise when the
    /// device sees fit (`5`, `normal`). Silent updates are never urgent.
    public var urgent: Bool

    public struct Alert: Sendable, Equatable {
        public var title: String
        public var body: String
        /// Quiet hours: shown without sound or banner (APNs `interruption-level: passive`, no `sound`).
        public var quiet: Bool

        public init(title: String, body: String, quiet: Bool) {
            self.title = title
            self.body = body
            self.quiet = quiet
        }
    }

    public init(id: String, address: PushAddress, alert: Alert?, badge: Int?, collapseKey: String?, category: String,
                data: [String: String], expiresAt: Int64, urgent: Bool) {
        self.id = id
        self.address = address
        self.alert = alert
        self.badge = badge
        self.collapseKey = collapseKey
        self.category = category
        self.data = data
        self.expiresAt = expiresAt
        self.urgent = urgent
    }
}

/// What a provider said about one push.
public enum PushOutcome: Sendable, Equatable {
    /// Accepted by the provider (APNs 200, FCM 200, Web Push 201/202).
    case delivered
    /// Try again later: a 429 or 5xx, a timeout, a refused connection, an expired provider token. `afterSeconds` is
    /// the provider's `Retry-After` when it gave one.
    case retry(afterSeconds: Int?, reason: String)
    /// The device is gone (APNs 410 or `BadDeviceToken`/`Unregistered`, FCM 404 `UNREGISTERED`, Web Push 404/410):
    /// remove it and never push to it again.
    case gone(reason: String)
    /// Refused for good (a 400 other than the above, 403, 413): dropped and counted.
    case rejected(reason: String)
}

/// A push service (APNs, FCM or Web Push). `send` never blocks: it queues the request on the provider's own
/// thread and calls `completion` once, on that thread, when the provider has answered or the request failed.
/// Implementations: SpotterPush's `APNsProvider`, `FCMProvider`, `WebPushProvider` (HTTP/2 through libcurl);
/// tests use in-memory ones.
public protocol PushProvider: AnyObject, Sendable {
    var platform: PushAddress.Platform { get }
    func send(_ message: PushMessage, completion: @escaping @Sendable (PushOutcome) -> Void)
    /// Ends the provider's connections; pending completions are called with `.retry` before it returns.
    func shutdown()
}
