import Logging
import SpotterCore
import SpotterPorts
import SpotterPushCrypto
import Synchronization

/// Pushes to browsers through their push services (Mozilla's autopush, Google's FCM web endpoint, Apple's, …):
/// the payload encrypted to the subscription (RFC 8291, `aes128gcm`), signed for with the VAPID key (RFC 8292).
/// One VAPID JWT per push service's origin serves every push to it for half its 12-hour lifetime.
public final class WebPushProvider: PushProvider {
    public let platform = PushAddress.Platform.webpush
    public let vapidKey: VAPIDKey
    private let client: HTTP2Client
    private let clock: @Sendable () -> Int64
    private let logger: Logger
    /// Per origin: the `Authorization` value and when its JWT was signed.
    private let authorizations = Mutex<[String: (header: String, issuedAt: Int64)]>([:])
    /// Subscriptions' keys decoded and checked once (OpenSSL's decoding was a sixth of a push's CPU under load), by
    /// `p256dh` and `auth`; forgotten all at once past `keyCacheLimit`.
    private let decodedKeys = Mutex<[String: WebPushSubscriptionKeys]>([:])
    static let keyCacheLimit = 50_000

    /// A JWT is signed for `VAPIDKey.defaultLifetimeSeconds` (12 h) and replaced after half of it, so one presented
    /// on a retry hours later is still good.
    public static let renewAfterSeconds = VAPIDKey.defaultLifetimeSeconds / 2

    public init(vapidKey: VAPIDKey, client: HTTP2Client, clock: @escaping @Sendable () -> Int64 = PushClock.now,
                logger: Logger = Logger(label: "spotter.push.webpush")) {
        self.vapidKey = vapidKey
        self.client = client
        self.clock = clock
        self.logger = logger
    }

    public func send(_ message: PushMessage, completion: @escaping @Sendable (PushOutcome) -> Void) {
        guard message.address.platform == .webpush else { return completion(.rejected(reason: "not a Web Push address")) }
        let now = clock()
        let keys: WebPushSubscriptionKeys
        switch cachedKeys(of: message.address) {
        case .success(let found): keys = found
        case .failure(let failed): return completion(failed.outcome)
        }
        let body: [UInt8]
        let authorization: String
        do {
            body = try WebPushEncryption.encrypt(WebPushEncoding.payload(for: message), to: keys)
            authorization = try self.authorization(for: message.address.token, now: now)
        } catch {
            return completion(.rejected(reason: error.description))
        }
        client.send(WebPushEncoding.request(for: message, encryptedBody: body, authorization: authorization, now: now)) { result in
            switch result {
            case .failure(let error): completion(PushClock.outcome(of: error))
            case .success(let response): completion(WebPushEncoding.outcome(of: response))
            }
        }
    }

    /// The `Authorization` value for `endpoint` at `now`: the origin's cached one while it is younger than
    /// `renewAfterSeconds` (and the clock has not stepped back past it), else a new one.
    func authorization(for endpoint: String, now: Int64) throws(PushCryptoError) -> String {
        let origin = try PushOrigin.of(endpoint: endpoint)
        if let cached = authorizations.withLock({ $0[origin] }),
           now - cached.issuedAt < Self.renewAfterSeconds, now >= cached.issuedAt - 60 {
            return cached.header
        }
        let header = try vapidKey.authorization(endpoint: endpoint, now: now)
        authorizations.withLock { cache in
            if cache.count >= 1000 { cache.removeAll() }   // bounded: origins are a handful of push services
            cache[origin] = (header, now)
        }
        return header
    }

    public func shutdown() { client.shutdown() }

    /// The address's keys, decoded at most once while cached.
    private func cachedKeys(of address: PushAddress) -> Result<WebPushSubscriptionKeys, OutcomeError> {
        let name = (address.p256dh ?? "") + "|" + (address.auth ?? "")
        if let known = decodedKeys.withLock({ $0[name] }) { return .success(known) }
        let decoded = WebPushEncoding.keys(of: address)
        if case .success(let keys) = decoded {
            decodedKeys.withLock { cache in
                if cache.count >= Self.keyCacheLimit { cache.removeAll(keepingCapacity: true) }
                cache[name] = keys
            }
        }
        return decoded
    }
}
