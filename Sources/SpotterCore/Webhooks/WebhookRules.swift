import SpotterProtocol

/// What an admin may register as a webhook endpoint (`POST /v1/admin/webhooks`).
public enum WebhookRules {
    /// Endpoints at most: each one is a lane the dispatcher serves in order, and each delivery is one outbox row per
    /// endpoint subscribed.
    public static let maxEndpoints = 50

    /// A URL the server will POST to: `https://` (the body carries message text; the signature proves who sent it,
    /// not that no one read it), at most 2,048 bytes of printable ASCII, no user part (`https://a@b/` hides its
    /// real host), no fragment, a valid host and port. Admins set it, so an address or a private name is allowed.
    /// With `development` (tests with a local receiver) `http://` too.
    public static func url(_ raw: String?, development: Bool) throws(APIError) -> String {
        guard let raw, !raw.isEmpty else { throw APIError(.missingField, field: "url") }
        guard let url = EndpointURL(raw), url.secure || development else { throw APIError(.invalidWebhookURL, field: "url") }
        return raw
    }

    /// Known event names, at least one, none twice; answered in the order given.
    public static func events(_ raw: [String]?) throws(APIError) -> [WebhookEventType] {
        guard let raw, !raw.isEmpty else { throw APIError(.missingField, field: "events") }
        var seen: Set<String> = []
        var events: [WebhookEventType] = []
        for name in raw {
            guard let type = WebhookEventType(rawValue: name), seen.insert(name).inserted else {
                throw APIError(.invalidWebhookEvents, field: "events")
            }
            events.append(type)
        }
        return events
    }

    /// A new signing secret: `whsec_` and 256 random bits in base64url.
    public static func newSecret() -> String { "whsec_" + SecureRandom.token() }
}
