import Logging
import SpotterCore
import SpotterPorts
import SpotterProtocol
import Synchronization

/// One provider's key set, cached: read (a file) or fetched (a URL) when first needed, fresh for the answer's
/// `Cache-Control: max-age` (1 minute … 1 day; a file, an hour), read again when stale, and once more when a
/// token names a key the set lacks (at most once per `unknownKeyRefetchSeconds`). A failed read keeps the keys
/// it had (stale keys verify until new ones come) and holds off the next try for `retryAfterFailureSeconds`.
///
/// Blocking: called on the hashing threads, never on the loop. One lock around the lot, so requests that find
/// the set stale wait for the one fetch instead of each making their own.
final class IdentityKeys: Sendable {
    enum Failure: Error, Equatable {
        /// No key with this id, after the refetch the rules allow.
        case unknownKey
        /// No keys at all: the source could not be read; retry after this many seconds.
        case unavailable(retryAfter: Int64)
    }

    private struct State {
        var keys: JSONWebKeySet?
        var freshUntil: Int64 = 0
        var lastFetchAt: Int64?
        var failedAt: Int64?
    }

    private let source: String
    private let settings: IdentitySettings
    private let logger: Logger
    private let state = Mutex(State())

    init(source: String, settings: IdentitySettings, logger: Logger) {
        self.source = source
        self.settings = settings
        self.logger = logger
    }

    func key(id kid: String, now: Int64) throws(Failure) -> RSAPublicKey {
        let outcome: Result<RSAPublicKey, Failure> = state.withLock { state in
            if let keys = state.keys, now < state.freshUntil {
                if let key = keys.keys[kid] { return .success(key) }
                // A key the fresh set lacks: refetch, unless one was made lately.
                if let last = state.lastFetchAt, now - last < settings.unknownKeyRefetchSeconds { return .failure(.unknownKey) }
            }
            if let failed = state.failedAt, now - failed < settings.retryAfterFailureSeconds {
                if let key = state.keys?.keys[kid] { return .success(key) }
                return .failure(state.keys == nil ? .unavailable(retryAfter: settings.retryAfterFailureSeconds - (now - failed))
                                                  : .unknownKey)
            }
            state.lastFetchAt = now
            do {
                let (keys, freshFor) = try load()
                state.keys = keys
                state.freshUntil = now + freshFor
                state.failedAt = nil
            } catch {
                state.failedAt = now
                logger.warning("could not read a sign-in provider's keys", metadata: ["source": "\(source)", "error": "\(error)"])
            }
            guard let keys = state.keys else { return .failure(.unavailable(retryAfter: settings.retryAfterFailureSeconds)) }
            return keys.keys[kid].map { .success($0) } ?? .failure(.unknownKey)
        }
        return try outcome.get()
    }

    /// Reads or fetches the set: its keys and how long they stay fresh.
    private func load() throws -> (JSONWebKeySet, Int64) {
        switch IdentitySettings.Provider.isURL(source) {
        case true?:
            guard let fetcher = settings.fetcher else { throw KeySetFetchError("no HTTP client for key set URLs") }
            let fetched = try fetcher.fetch(url: source, maxBytes: JSONWebKeySet.maxBytes, timeoutSeconds: settings.fetchTimeoutSeconds)
            return (try JSONWebKeySet(parsing: fetched.body), JSONWebKeySet.freshness(cacheControl: fetched.cacheControl))
        case false?:
            let bytes = try readWholeFile(source)
            return (try JSONWebKeySet(parsing: bytes), JSONWebKeySet.freshness(cacheControl: nil))
        case nil:
            throw KeySetFetchError("not a file path or an https URL")
        }
    }
}

/// Verifies ID tokens of the providers the server was started for: `POST /v1/auth/apple|google`.
final class IdentityVerification: Sendable {
    private let settings: IdentitySettings
    private let providers: [IdentityProvider: (IDTokenVerifier, IdentityKeys)]

    init(settings: IdentitySettings, logger: Logger) {
        self.settings = settings
        var providers: [IdentityProvider: (IDTokenVerifier, IdentityKeys)] = [:]
        for provider in IdentityProvider.allCases {
            guard let configured = settings.provider(provider), !configured.audiences.isEmpty else { continue }
            providers[provider] = (
                IDTokenVerifier(provider: provider, audiences: Set(configured.audiences), skewSeconds: settings.skewSeconds),
                IdentityKeys(source: configured.keys, settings: settings, logger: logger))
        }
        self.providers = providers
    }

    func isEnabled(_ provider: IdentityProvider) -> Bool { providers[provider] != nil }

    /// The token parsed (a malformed one costs no fetch), its key found, then checked. Blocking (a key set read).
    func verify(_ provider: IdentityProvider, token: String, nonce: String?, now: Int64) throws(APIError) -> VerifiedIdentity {
        guard let (verifier, keys) = providers[provider] else { throw APIError(.signInProviderDisabled) }
        do {
            let parsed = try IDToken(parsing: token)
            let key: RSAPublicKey
            switch Result(catching: { () throws(IdentityKeys.Failure) in try keys.key(id: parsed.keyID, now: now) }) {
            case .success(let found): key = found
            case .failure(.unknownKey): throw IDTokenRefusal.unknownKey
            case .failure(.unavailable(let wait)):
                throw APIError(.identityKeysUnavailable, retryAfterSeconds: Int(max(1, wait)))
            }
            return try verifier.check(parsed, key: key, now: now, nonce: nonce)
        } catch let refusal as IDTokenRefusal {
            throw Self.wire(refusal)
        } catch let error as APIError {
            throw error
        } catch {
            throw APIError(.internalError)
        }
    }

    /// What the wire says of a refusal: only which of the two codes, and the field.
    static func wire(_ refusal: IDTokenRefusal) -> APIError {
        switch refusal {
        case .expired, .issuedInFuture: return APIError(.idTokenExpired, field: "id_token")
        case .nonce: return APIError(.invalidIDToken, field: "nonce")
        case .tooLarge, .malformed, .algorithm, .unknownKey, .signature, .issuer, .audience:
            return APIError(.invalidIDToken, field: "id_token")
        }
    }
}
