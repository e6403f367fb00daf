import SpotterCore
import SpotterPorts

/// Sign in with Apple and Google (`--apple-audience`, `--apple-jwks`, `--google-audience`, `--google-jwks`;
/// deploy/README.md "Sign in with Apple and Google"). A provider without settings answers
/// `sign_in_provider_disabled`.
public struct IdentitySettings: Sendable {
    public struct Provider: Sendable {
        /// The provider's key set: a file path (read again when stale) or an `https://` URL (`http://` on a
        /// loopback address too, for tests and a local mirror), fetched through `fetcher`.
        public var keys: String
        /// The app client ids the tokens must be for (`aud`): a token for another app is refused.
        public var audiences: [String]
        public init(keys: String, audiences: [String]) {
            self.keys = keys
            self.audiences = audiences
        }

        /// The key set's published address for each provider (the flags' defaults).
        public static func defaultKeys(_ provider: IdentityProvider) -> String {
            switch provider {
            case .apple: return "https://appleid.apple.com/auth/keys"
            case .google: return "https://www.googleapis.com/oauth2/v3/certs"
            }
        }

        /// Whether `source` names a URL (else a file path); nil for a URL the server will not fetch (`http://`
        /// beyond loopback, another scheme).
        public static func isURL(_ source: String) -> Bool? {
            if source.hasPrefix("https://") { return true }
            if source.hasPrefix("http://") {
                let rest = source.dropFirst("http://".count)
                let loopback = ["127.0.0.1", "[::1]", "localhost"].contains { host in
                    rest.hasPrefix(host) && (rest.count == host.count
                        || [":", "/"].contains(rest[rest.index(rest.startIndex, offsetBy: host.count)]))
                }
                return loopback ? true : nil
            }
            return source.contains("://") ? nil : false
        }
    }

    public var apple: Provider?
    public var google: Provider?
    /// How URLs are fetched (the `spotter` executable sets SpotterPush's libcurl client); without one a URL
    /// answers `identity_keys_unavailable`.
    public var fetcher: (any KeySetFetcher)?
    /// Clock difference tolerated on `exp` and `iat` (0…300 s).
    public var skewSeconds: Int64 = 60
    /// After a failed read or fetch, none is tried again for this long (requests meanwhile answer
    /// `identity_keys_unavailable` with this `retry_after`, unless older keys are at hand).
    public var retryAfterFailureSeconds: Int64 = 30
    /// A token naming a key the set lacks makes one refetch at most this often (rotation is rare; forged
    /// `kid`s must not make the server fetch on every request).
    public var unknownKeyRefetchSeconds: Int64 = 60
    /// One fetch's timeout.
    public var fetchTimeoutSeconds: Double = 5

    public init() {}

    func provider(_ provider: IdentityProvider) -> Provider? {
        switch provider {
        case .apple: return apple
        case .google: return google
        }
    }
}
