import Foundation
import Logging
import SpotterCore
import SpotterPorts
import SpotterPushCrypto
import Synchronization

/// Pushes to iPhones, iPads and Macs through APNs' HTTP/2 API with token-based authentication: one ES256 provider
/// token from the `.p8` key serves every request until it is 50 minutes old (`APNsProviderToken`); APNs' 403
/// `ExpiredProviderToken` (or `InvalidProviderToken`) renews it at once and the push is sent once more; a second
/// refusal is the push's outcome (a retry for an expired token, refused for an invalid one).
public final class APNsProvider: PushProvider {
    public let platform = PushAddress.Platform.apns
    private let client: HTTP2Client
    private let baseURLOverride: String?
    private let clock: @Sendable () -> Int64
    private let logger: Logger
    private let token: Mutex<APNsProviderToken>

    /// `baseURL`: one server for every push (a test's stand-in), instead of Apple's production or sandbox server
    /// chosen by each device's environment. `clock`: Unix seconds (tests move it to see the token renewed).
    public init(signingKey: APNsSigningKey, baseURL: String? = nil, client: HTTP2Client,
                clock: @escaping @Sendable () -> Int64 = PushClock.now, logger: Logger = Logger(label: "spotter.push.apns")) {
        self.client = client
        baseURLOverride = baseURL
        self.clock = clock
        self.logger = logger
        token = Mutex(APNsProviderToken(signingKey: signingKey))
    }

    public func send(_ message: PushMessage, completion: @escaping @Sendable (PushOutcome) -> Void) {
        guard message.address.platform == .apns else { return completion(.rejected(reason: "not an APNs address")) }
        guard let topic = message.address.topic, !topic.isEmpty else { return completion(.rejected(reason: "no apns-topic")) }
        let payload = APNsEncoding.payload(for: message)
        guard payload.count <= APNsEncoding.maxPayloadBytes else {
            return completion(.rejected(reason: "payload of \(payload.count) bytes, more than APNs' 4096"))
        }
        attempt(message, renewedOnce: false, completion: completion)
    }

    private func attempt(_ message: PushMessage, renewedOnce: Bool, completion: @escaping @Sendable (PushOutcome) -> Void) {
        let now = clock()
        let providerToken = token.withLock { $0.token(now: now) }
        let base = APNsEncoding.baseURL(environment: message.address.environment, override: baseURLOverride)
        let request = APNsEncoding.request(for: message, baseURL: base, providerToken: providerToken)
        client.send(request) { [self] result in
            switch result {
            case .failure(let error):
                completion(PushClock.outcome(of: error))
            case .success(let response):
                if APNsEncoding.isExpiredProviderToken(response) || (response.status == 403 && ErrorBody.reason(response.body) == "InvalidProviderToken") {
                    token.withLock { $0.providerRejected(providerToken) }
                    if !renewedOnce {
                        logger.info("APNs refused the provider token; renewing it", metadata: ["status": "\(response.status)"])
                        return attempt(message, renewedOnce: true, completion: completion)
                    }
                }
                completion(APNsEncoding.outcome(of: response))
            }
        }
    }

    public func shutdown() { client.shutdown() }
}

/// The providers' shared pieces: the wall clock in Unix seconds, and a failed request as an outcome.
public enum PushClock {
    @Sendable public static func now() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec)
    }

    /// No answer: try again later (a refused or reset connection, a timeout, the client shut down).
    static func outcome(of error: HTTPClientError) -> PushOutcome {
        .retry(afterSeconds: nil, reason: error.description)
    }
}
