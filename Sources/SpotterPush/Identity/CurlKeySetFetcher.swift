import Dispatch
import SpotterPorts
import Synchronization

/// Sign-in providers' key sets (JWKS) through the push providers' libcurl client (`HTTP2Client`): a `GET`, HTTP/2
/// where the server offers it over TLS, HTTP/1.1 otherwise; redirects not followed; the body bounded. Blocks the
/// calling worker thread until the answer or the timeout (the server's `IdentityKeys` calls it off the loop).
public final class CurlKeySetFetcher: KeySetFetcher {
    private let client: HTTP2Client

    /// `caFile`: a CA to trust instead of the system's (a private mirror of the key set).
    public init(caFile: String? = nil) {
        client = HTTP2Client(options: HTTP2Client.Options(caFile: caFile, timeoutSeconds: 10, connectTimeoutSeconds: 5,
                                                          maxInFlight: 4, maxConnectionsPerHost: 2,
                                                          maxResponseBytes: 256 * 1024, name: "identity-keys-http"))
    }

    public func fetch(url: String, maxBytes: Int, timeoutSeconds: Double) throws -> FetchedKeySet {
        let request = HTTPRequest(method: "GET", url: url, headers: [HTTPHeader("Accept", "application/json")], body: [],
                                  timeoutSeconds: timeoutSeconds)
        let answer = Mutex<Result<HTTPResponse, HTTPClientError>?>(nil)
        let done = DispatchSemaphore(value: 0)
        client.send(request) { result in
            answer.withLock { $0 = result }
            done.signal()
        }
        // The client applies the timeout; this wait only guards against a transfer that never completes.
        guard done.wait(timeout: .now() + timeoutSeconds + 5) == .success, let result = answer.withLock({ $0 }) else {
            throw KeySetFetchError("no answer within \(Int(timeoutSeconds)) s")
        }
        switch result {
        case .success(let response):
            guard response.status == 200 else { throw KeySetFetchError("the key set's server answered \(response.status)") }
            guard response.body.count <= maxBytes else { throw KeySetFetchError("the key set is over \(maxBytes) bytes") }
            return FetchedKeySet(body: response.body, cacheControl: response.headers["cache-control"])
        case .failure(let error):
            throw KeySetFetchError(error.description)
        }
    }

    public func shutdown() {
        client.shutdown()
    }
}
