import ArgumentParser
import SpotterCore
import SpotterPush
import SpotterServer

/// Sign in with Apple and Google (deploy/README.md, "Sign in with Apple and Google"): a provider is on when its
/// audience is given; its keys come from the provider's published URL unless a file or another URL is named.
struct IdentityOptions: ParsableArguments {
    @Option(name: .customLong("apple-audience"), help: ArgumentHelp("""
        Turns on POST /v1/auth/apple: the app's Services ID / bundle ID(s) Apple ID tokens must be for (their \
        `aud`), comma-separated. [env: SPOTTER_APPLE_AUDIENCE] (default: off)
        """, valueName: "ids"))
    var appleAudience: String?
    @Option(name: .customLong("apple-jwks"), help: ArgumentHelp("""
        Apple's signing keys (JWKS): a file path or an https:// URL. [env: SPOTTER_APPLE_JWKS] \
        (default: https://appleid.apple.com/auth/keys)
        """, valueName: "path-or-url"))
    var appleJWKS: String?
    @Option(name: .customLong("google-audience"), help: ArgumentHelp("""
        Turns on POST /v1/auth/google: the OAuth client ID(s) Google ID tokens must be for (their `aud`), \
        comma-separated. [env: SPOTTER_GOOGLE_AUDIENCE] (default: off)
        """, valueName: "ids"))
    var googleAudience: String?
    @Option(name: .customLong("google-jwks"), help: ArgumentHelp("""
        Google's signing keys (JWKS): a file path or an https:// URL. [env: SPOTTER_GOOGLE_JWKS] \
        (default: https://www.googleapis.com/oauth2/v3/certs)
        """, valueName: "path-or-url"))
    var googleJWKS: String?

    func apply(to config: inout ServerConfig) throws {
        config.identity.apple = try provider(.apple, audience: appleAudience ?? env("SPOTTER_APPLE_AUDIENCE"),
                                             keys: appleJWKS ?? env("SPOTTER_APPLE_JWKS"))
        config.identity.google = try provider(.google, audience: googleAudience ?? env("SPOTTER_GOOGLE_AUDIENCE"),
                                              keys: googleJWKS ?? env("SPOTTER_GOOGLE_JWKS"))
        if config.identity.apple != nil || config.identity.google != nil {
            config.identity.fetcher = CurlKeySetFetcher()
        }
    }

    private func provider(_ provider: IdentityProvider, audience: String?, keys: String?) throws -> IdentitySettings.Provider? {
        let flag = "--\(provider.rawValue)"
        guard let audience else {
            if keys != nil { throw ValidationError("\(flag)-jwks needs \(flag)-audience (the app's client id)") }
            return nil
        }
        let audiences = audience.split(separator: ",").map { String($0.filter { $0 != " " }) }.filter { !$0.isEmpty }
        guard !audiences.isEmpty, audiences.count <= 16, audiences.allSatisfy({ $0.utf8.count <= 255 }) else {
            throw ValidationError("\(flag)-audience: 1 to 16 client ids, comma-separated, each up to 255 bytes")
        }
        let source = keys ?? IdentitySettings.Provider.defaultKeys(provider)
        guard IdentitySettings.Provider.isURL(source) != nil, !source.isEmpty else {
            throw ValidationError("\(flag)-jwks: a file path or an https:// URL (http:// only on a loopback address)")
        }
        return IdentitySettings.Provider(keys: source, audiences: audiences)
    }
}
