import SpotterPorts

/// Webhook deliveries through the push providers' libcurl client (`HTTP2Client`): HTTP/2 where the receiver
/// offers it over TLS, HTTP/1.1 otherwise; redirects are not followed (a 3xx is an answer like any other); the
/// answer's body is read up to 4 KiB and dropped.
public final class CurlWebhookTransport: WebhookTransport {
    private let client: HTTP2Client

    /// `maxInFlight`: requests on the wire at once (the dispatcher sends at most one per endpoint anyway).
    /// `caFile`: a CA to trust instead of the system's (tests with a local TLS receiver).
    public init(maxInFlight: Int = 64, caFile: String? = nil) {
        client = HTTP2Client(options: HTTP2Client.Options(caFile: caFile, timeoutSeconds: 10, connectTimeoutSeconds: 10,
                                                          maxInFlight: maxInFlight, maxConnectionsPerHost: 4,
                                                          maxResponseBytes: 64 * 1024, name: "webhooks-http"))
    }

    public func send(_ request: WebhookRequest, completion: @escaping @Sendable (WebhookAnswer) -> Void) {
        let http = HTTPRequest(method: "POST", url: request.url, headers: request.headers.map { HTTPHeader($0.name, $0.value) },
                               body: request.body, timeoutSeconds: request.timeoutSeconds)
        client.send(http) { result in
            switch result {
            case .success(let response): completion(.status(response.status))
            case .failure(let error): completion(.failed(error.description))
            }
        }
    }

    public func shutdown() {
        client.shutdown()
    }
}
