/// Sends one webhook delivery over HTTP(S) (the port; `SpotterPush`'s `CurlWebhookTransport` is the engine).
/// `send` does not block: the answer comes through `completion`, once, on the transport's own thread.
public protocol WebhookTransport: AnyObject, Sendable {
    func send(_ request: WebhookRequest, completion: @escaping @Sendable (WebhookAnswer) -> Void)
    /// Ends every request in flight (each completes with `.failed`) and the transport's thread.
    func shutdown()
}

/// A POST of a JSON body with the signature headers.
public struct WebhookRequest: Sendable, Equatable {
    public var url: String
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]
    public var timeoutSeconds: Double

    public init(url: String, headers: [(name: String, value: String)], body: [UInt8], timeoutSeconds: Double) {
        self.url = url
        self.headers = headers
        self.body = body
        self.timeoutSeconds = timeoutSeconds
    }

    public static func == (a: WebhookRequest, b: WebhookRequest) -> Bool {
        a.url == b.url && a.body == b.body && a.timeoutSeconds == b.timeoutSeconds
            && a.headers.map(\.name) == b.headers.map(\.name) && a.headers.map(\.value) == b.headers.map(\.value)
    }
}

/// What came back: a status (any; the dispatcher decides what it means), or no answer (refused, reset, timed
/// out, TLS failed), said in words for the dead-letter list.
public enum WebhookAnswer: Sendable, Equatable {
    case status(Int)
    case failed(String)
}
