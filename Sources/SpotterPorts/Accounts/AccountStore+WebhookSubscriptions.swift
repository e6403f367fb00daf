import SpotterCore

/// Raised by `enqueueWebhooks(…, considered:)` when an endpoint registered after the caller's look is subscribed to
/// an event type the caller did not build: nothing was written; build the batch again.
public enum WebhookIntakeError: Error, Equatable {
    case subscriptionsChanged
}

extension AccountStore {
    /// Every event type some endpoint is subscribed to (empty: no endpoint). The webhook consumer builds events of
    /// these types only, and hands them to `enqueueWebhooks` as `considered`, which checks them again in its
    /// transaction.
    public func webhookSubscriptions() throws -> Set<WebhookEventType> {
        try read { db in try Self.subscriptions(db) }
    }

    static func subscriptions(_ db: any SQLDatabase) throws -> Set<WebhookEventType> {
        var types = Set<WebhookEventType>()
        for row in try db.fetchAll("SELECT events FROM webhookEndpoint") {
            let events: String = row["events"]
            for name in events.split(separator: ",") {
                if let type = WebhookEventType(rawValue: String(name)) { types.insert(type) }
            }
        }
        return types
    }
}
