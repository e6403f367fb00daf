/// Which events a record could make, known from its kind alone, before its thread is looked up or any JSON is
/// built: the webhook consumer builds events only for records some endpoint is subscribed to (issue 33).
extension WebhookEvents {
    /// Every event type `events(for:thread:)` may return for `record` (a superset: a session change that makes no
    /// event still lists the session types). Empty: the record makes no event whatever the endpoints.
    public static func possibleTypes(_ record: ChatRecord) -> Set<WebhookEventType> {
        switch record.content {
        case .message: [.messageCreated]
        case .session: [.sessionScheduled, .sessionCancelled, .sessionRescheduled, .sessionNeedsResolution, .sessionCompleted]
        case .tier: [.tierChanged]
        case .coaching: [.checkInCreated, .measurementCreated]
        case .change(let change):
            if case .delete = change.change { [.messageDeleted] } else { [] }
        case .erasure: [.userErased]
        case .receipt, .link, .ratingPrompt, .account, .unknown: []
        }
    }

    /// Whether `record` takes text back from deliveries queued before it (`forgetting`): an edit, a delete, an
    /// erasure. Those are handled whatever the endpoints are subscribed to now.
    public static func mayForget(_ record: ChatRecord) -> Bool {
        switch record.content {
        case .change, .erasure: true
        default: false
        }
    }
}
