import Logging
import SpotterCore
import SpotterPorts
import SpotterPushCrypto
import Synchronization

/// Pushes to Android devices (and apps using Firebase on iOS and the web) through FCM HTTP v1. The access token
/// comes from the service account's JWT-bearer grant, posted to its `token_uri`; it serves every push until a
/// minute before it expires, one grant at a time (pushes that find a grant in flight wait for it). A 401 drops the
/// token and the push is sent once more with a new one.
public final class FCMProvider: PushProvider {
    public let platform = PushAddress.Platform.fcm
    private let account: FCMServiceAccount
    private let client: HTTP2Client
    private let baseURL: String
    private let tokenURI: String
    private let clock: @Sendable () -> Int64
    private let logger: Logger

    private typealias Held = @Sendable (Result<FCMAccessToken, OutcomeError>) -> Void
    private struct State {
        var cache = FCMAccessTokenCache()
        /// Pushes waiting for the grant in flight.
        var held: [Held] = []
    }
    private let state = Mutex(State())

    /// `baseURL`: FCM's server (a test's stand-in instead); `tokenURI`: where the grant is posted, by default the
    /// account's own `token_uri` (which is also the assertion's audience).
    public init(account: FCMServiceAccount, baseURL: String? = nil, tokenURI: String? = nil, client: HTTP2Client,
                clock: @escaping @Sendable () -> Int64 = PushClock.now, logger: Logger = Logger(label: "spotter.push.fcm")) {
        self.account = account
        self.client = client
        self.baseURL = baseURL ?? FCMEncoding.productionURL
        self.tokenURI = tokenURI ?? account.tokenURI
        self.clock = clock
        self.logger = logger
    }

    public func send(_ message: PushMessage, completion: @escaping @Sendable (PushOutcome) -> Void) {
        guard message.address.platform == .fcm else { return completion(.rejected(reason: "not an FCM address")) }
        attempt(message, refreshedOnce: false, completion: completion)
    }

    private func attempt(_ message: PushMessage, refreshedOnce: Bool, completion: @escaping @Sendable (PushOutcome) -> Void) {
        withAccessToken { [self] result in
            switch result {
            case .failure(let failed):
                completion(failed.outcome)
            case .success(let token):
                let request = FCMEncoding.request(for: message, baseURL: baseURL, projectID: account.projectID,
                                                  accessToken: token.value, now: clock())
                client.send(request) { [self] result in
                    switch result {
                    case .failure(let error):
                        completion(PushClock.outcome(of: error))
                    case .success(let response) where response.status == 401:
                        state.withLock { $0.cache.providerRejected(token) }
                        if refreshedOnce { return completion(FCMEncoding.outcome(of: response)) }
                        logger.info("FCM refused the access token; getting a new one")
                        attempt(message, refreshedOnce: true, completion: completion)
                    case .success(let response):
                        completion(FCMEncoding.outcome(of: response))
                    }
                }
            }
        }
    }

    /// Calls `use` with a usable access token, after a grant when there is none; or with the outcome for the push
    /// when the grant fails.
    private func withAccessToken(_ use: @escaping Held) {
        let now = clock()
        let step = state.withLock { state -> FCMAccessTokenCache.Step in
            let step = state.cache.next(now: now)
            if case .send = step {} else { state.held.append(use) }
            return step
        }
        switch step {
        case .send(let token): use(.success(token))
        case .waitForToken: break
        case .requestToken: requestToken(now: now)
        }
    }

    private func requestToken(now: Int64) {
        let request = HTTPRequest(url: tokenURI,
                                  headers: [HTTPHeader("content-type", "application/x-www-form-urlencoded")],
                                  body: Array(account.grantRequestBody(now: now).utf8))
        client.send(request) { [self] result in
            let answer: Result<FCMAccessToken, OutcomeError>
            switch result {
            case .failure(let error):
                answer = .failure(OutcomeError(.retry(afterSeconds: nil, reason: "token grant: \(error)")))
            case .success(let response) where response.status == 200:
                if let token = try? FCMAccessToken(tokenResponse: response.body, receivedAt: clock()) {
                    answer = .success(token)
                } else {
                    answer = .failure(OutcomeError(.retry(afterSeconds: nil, reason: "token grant: an answer without a usable token")))
                }
            case .success(let response):
                // 400 invalid_grant: the key was revoked or the clock is off; the push waits and is tried again.
                let reason = ErrorBody.object(response.body)?["error"] as? String
                answer = .failure(OutcomeError(.retry(afterSeconds: response.retryAfterSeconds,
                                                      reason: "token grant: HTTP \(response.status) \(reason.map(ErrorBody.clean) ?? "")")))
            }
            let held = state.withLock { state in
                switch answer {
                case .success(let token): state.cache.received(token)
                case .failure: state.cache.grantFailed()
                }
                defer { state.held.removeAll() }
                return state.held
            }
            if case .failure(let failed) = answer { logger.warning("FCM token grant failed", metadata: ["outcome": "\(failed.outcome)"]) }
            for push in held { push(answer) }
        }
    }

    public func shutdown() {
        client.shutdown()
        let held = state.withLock { state in
            defer { state.held.removeAll() }
            return state.held
        }
        for push in held { push(.failure(OutcomeError(.retry(afterSeconds: nil, reason: HTTPClientError.shutdown.description)))) }
    }
}
