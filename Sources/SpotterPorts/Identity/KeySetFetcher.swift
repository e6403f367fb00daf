/// Fetches a provider's published key set (JWKS) over HTTPS: the port the `spotter` executable fills with
/// SpotterPush's libcurl client (`CurlKeySetFetcher`). Called on a worker thread, never on the loop: it blocks
/// until the answer or its timeout.
public protocol KeySetFetcher: Sendable {
    /// `GET url`: the body of a 200 answer (at most `maxBytes`) and its `Cache-Control` header; throws for
    /// any other status, a body over the bound, or a transport failure.
    func fetch(url: String, maxBytes: Int, timeoutSeconds: Double) throws -> FetchedKeySet
}

public struct FetchedKeySet: Sendable, Equatable {
    public var body: [UInt8]
    public var cacheControl: String?
    public init(body: [UInt8], cacheControl: String?) {
        self.body = body
        self.cacheControl = cacheControl
    }
}

public struct KeySetFetchError: Error, Sendable, Equatable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
