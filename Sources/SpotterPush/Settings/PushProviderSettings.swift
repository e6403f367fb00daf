import Foundation
import Logging
import SpotterCore
import SpotterPorts
import SpotterPushCrypto

/// Where the providers' keys come from, as the command line gives them, and the factory that builds the
/// providers from them. A platform is enabled when its key is given (a file path, or the key's contents in an
/// environment variable); with neither, its provider is nil and pushes to its devices are not sent.
///
///     APNs      --apns-key PATH | SPOTTER_APNS_KEY (the .p8 PEM)   --apns-key-id ID  --apns-team-id ID  [--apns-url URL]
///     FCM       --fcm-service-account PATH | SPOTTER_FCM_SERVICE_ACCOUNT (the JSON)   [--fcm-url URL]
///     Web Push  --webpush-vapid-key PATH | SPOTTER_WEBPUSH_VAPID_KEY (the PEM)   --webpush-subject mailto:…|https://…
///     all       [--push-ca-file PATH]   (a CA to trust instead of the system's: the local stand-ins)
///
/// A path wins over the environment variable. Keys are read once, at start: a new key takes effect on restart.
/// Nothing here logs or prints a key: errors name the file or variable and what was wrong with it.
public struct PushProviderSettings: Sendable {
    public var apnsKeyPath: String?
    public var apnsKeyID: String?
    public var apnsTeamID: String?
    /// One APNs server for every device (a stand-in), instead of Apple's production or sandbox by environment.
    public var apnsURL: String?
    public var fcmServiceAccountPath: String?
    /// FCM's server (a stand-in) instead of https://fcm.googleapis.com.
    public var fcmURL: String?
    /// Where the token grant is posted instead of the account's `token_uri`.
    public var fcmTokenURL: String?
    public var webPushVAPIDKeyPath: String?
    public var webPushSubject: String?
    public var caFile: String?
    /// Each provider's requests time out after this long.
    public var timeoutSeconds: Double = 30

    public static let apnsKeyVariable = "SPOTTER_APNS_KEY"
    public static let fcmServiceAccountVariable = "SPOTTER_FCM_SERVICE_ACCOUNT"
    public static let webPushVAPIDKeyVariable = "SPOTTER_WEBPUSH_VAPID_KEY"

    public init(apnsKeyPath: String? = nil, apnsKeyID: String? = nil, apnsTeamID: String? = nil, apnsURL: String? = nil,
                fcmServiceAccountPath: String? = nil, fcmURL: String? = nil, fcmTokenURL: String? = nil,
                webPushVAPIDKeyPath: String? = nil, webPushSubject: String? = nil, caFile: String? = nil) {
        self.apnsKeyPath = apnsKeyPath
        self.apnsKeyID = apnsKeyID
        self.apnsTeamID = apnsTeamID
        self.apnsURL = apnsURL
        self.fcmServiceAccountPath = fcmServiceAccountPath
        self.fcmURL = fcmURL
        self.fcmTokenURL = fcmTokenURL
        self.webPushVAPIDKeyPath = webPushVAPIDKeyPath
        self.webPushSubject = webPushSubject
        self.caFile = caFile
    }

    /// The keys, read and checked, without starting anything: what `--check-config` can call.
    public func loadKeys(environment: [String: String] = ProcessInfo.processInfo.environment)
        throws(PushSettingsError) -> PushKeys {
        var keys = PushKeys()
        if let source = try Self.read(path: apnsKeyPath, variable: Self.apnsKeyVariable, environment: environment) {
            guard let keyID = apnsKeyID, !keyID.isEmpty else { throw .missingOption("--apns-key-id", needed: "an APNs key") }
            guard let teamID = apnsTeamID, !teamID.isEmpty else { throw .missingOption("--apns-team-id", needed: "an APNs key") }
            do { keys.apns = try APNsSigningKey(p8: source.text, keyID: keyID, teamID: teamID) }
            catch { throw .badKey(source.name, error) }
        }
        if let source = try Self.read(path: fcmServiceAccountPath, variable: Self.fcmServiceAccountVariable, environment: environment) {
            do { keys.fcm = try FCMServiceAccount(json: Array(source.text.utf8)) }
            catch { throw .badKey(source.name, error) }
        }
        if let source = try Self.read(path: webPushVAPIDKeyPath, variable: Self.webPushVAPIDKeyVariable, environment: environment) {
            guard let subject = webPushSubject, !subject.isEmpty else {
                throw .missingOption("--webpush-subject", needed: "a VAPID key")
            }
            do { keys.vapid = try VAPIDKey(pem: source.text, subject: subject) }
            catch { throw .badKey(source.name, error) }
        }
        if let caFile, !FileManager.default.isReadableFile(atPath: caFile) { throw .unreadableFile(caFile) }
        for (flag, url) in [("--apns-url", apnsURL), ("--fcm-url", fcmURL), ("--fcm-token-url", fcmTokenURL)] {
            if let url, !(url.hasPrefix("https://") || url.hasPrefix("http://")) { throw .badURL(flag) }
        }
        return keys
    }

    /// The providers for the configured platforms, each on its own HTTP/2 client thread. Call `shutdown()` on
    /// each (or `PushProviders.shutdown()`) when the server stops.
    public func makeProviders(environment: [String: String] = ProcessInfo.processInfo.environment,
                              clock: @escaping @Sendable () -> Int64 = PushClock.now,
                              logger: Logger = Logger(label: "spotter.push")) throws(PushSettingsError) -> PushProviders {
        let keys = try loadKeys(environment: environment)
        func client(_ name: String) -> HTTP2Client {
            HTTP2Client(options: .init(caFile: caFile, timeoutSeconds: timeoutSeconds, name: "push-" + name))
        }
        var providers = PushProviders()
        if let key = keys.apns {
            providers.apns = APNsProvider(signingKey: key, baseURL: apnsURL, client: client("apns"), clock: clock, logger: logger)
        }
        if let account = keys.fcm {
            providers.fcm = FCMProvider(account: account, baseURL: fcmURL, tokenURI: fcmTokenURL, client: client("fcm"),
                                        clock: clock, logger: logger)
        }
        if let key = keys.vapid {
            providers.webPush = WebPushProvider(vapidKey: key, client: client("webpush"), clock: clock, logger: logger)
        }
        return providers
    }

    /// The text of the file at `path`, else of `variable`; nil when neither is given.
    static func read(path: String?, variable: String, environment: [String: String])
        throws(PushSettingsError) -> (text: String, name: String)? {
        if let path, !path.isEmpty {
            guard let data = FileManager.default.contents(atPath: path) else { throw .unreadableFile(path) }
            guard !data.isEmpty, let text = String(data: data, encoding: .utf8) else { throw .emptyOrNotText(path) }
            return (text, path)
        }
        if let text = environment[variable], !text.isEmpty { return (text, "$" + variable) }
        return nil
    }
}

/// The keys `PushProviderSettings` read; nil for a platform not configured.
public struct PushKeys: Sendable {
    public var apns: APNsSigningKey?
    public var fcm: FCMServiceAccount?
    public var vapid: VAPIDKey?
}

/// The providers that were configured.
public struct PushProviders: Sendable {
    public var apns: APNsProvider?
    public var fcm: FCMProvider?
    public var webPush: WebPushProvider?

    /// Every configured provider, for the dispatcher to pick by `platform`.
    public var all: [any PushProvider] { ([apns, fcm, webPush] as [(any PushProvider)?]).compactMap { $0 } }
    /// The VAPID public key browsers subscribe with (`GET /v1/push/vapid-public-key`), when Web Push is on.
    public var vapidPublicKey: String? { webPush?.vapidKey.publicKeyBase64URL }

    public func shutdown() { for provider in all { provider.shutdown() } }
}

/// Why the push settings cannot be used. Descriptions name the file, variable or flag, never a key's bytes.
public enum PushSettingsError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file does not exist or cannot be read.
    case unreadableFile(String)
    /// The file is empty or not UTF-8 text.
    case emptyOrNotText(String)
    /// The key in the file (or variable) named was refused: `PushCryptoError` says why.
    case badKey(String, PushCryptoError)
    /// A flag another one needs: `needed` says which.
    case missingOption(String, needed: String)
    /// A URL flag that is not http(s).
    case badURL(String)

    public var description: String {
        switch self {
        case .unreadableFile(let path): "cannot read \(path)"
        case .emptyOrNotText(let path): "\(path) is empty or not text"
        case .badKey(let source, let error): "the key in \(source) was refused: \(error)"
        case .missingOption(let flag, let needed): "\(flag) is required with \(needed)"
        case .badURL(let flag): "\(flag) is not an http(s) URL"
        }
    }
}
