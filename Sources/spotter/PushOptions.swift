import ArgumentParser
import Foundation
import Logging
import SpotterCore
import SpotterPush
import SpotterServer

/// The push providers and how pushes are worded and coalesced (deploy/README.md, "Push providers"). A platform is
/// on when its key is given; with none, no push is decided.
struct PushOptions: ParsableArguments {
    @Option(name: .customLong("apns-key"), help: ArgumentHelp("""
        APNs token-based authentication key (.p8, from the Apple Developer account); or its contents in \
        SPOTTER_APNS_KEY. Needs --apns-key-id and --apns-team-id.
        """, valueName: "path"))
    var apnsKey: String?
    @Option(name: .customLong("apns-key-id"), help: "The APNs key's id (10 characters). [env: SPOTTER_APNS_KEY_ID]")
    var apnsKeyID: String?
    @Option(name: .customLong("apns-team-id"), help: "The Apple Developer team id. [env: SPOTTER_APNS_TEAM_ID]")
    var apnsTeamID: String?
    @Option(name: .customLong("apns-url"), help: ArgumentHelp(
        "One APNs server for every device instead of Apple's production and sandbox (a stand-in).", valueName: "url"))
    var apnsURL: String?
    @Option(name: .customLong("fcm-service-account"), help: ArgumentHelp("""
        Firebase service-account JSON (project_id, client_email, private_key, token_uri); or its contents in \
        SPOTTER_FCM_SERVICE_ACCOUNT.
        """, valueName: "path"))
    var fcmServiceAccount: String?
    @Option(name: .customLong("fcm-url"), help: ArgumentHelp("FCM's server instead of https://fcm.googleapis.com.", valueName: "url"))
    var fcmURL: String?
    @Option(name: .customLong("fcm-token-url"), help: ArgumentHelp("Where the token grant goes instead of the account's token_uri.",
                                                                    valueName: "url"))
    var fcmTokenURL: String?
    @Option(name: .customLong("webpush-vapid-key"), help: ArgumentHelp("""
        Web Push VAPID private key (PEM, P-256); or its contents in SPOTTER_WEBPUSH_VAPID_KEY. Needs \
        --webpush-subject. Browsers subscribe with its public half (GET /v1/push/vapid-public-key).
        """, valueName: "path"))
    var webPushVAPIDKey: String?
    @Option(name: .customLong("webpush-subject"), help: ArgumentHelp(
        "A mailto: or https: contact for the push services. [env: SPOTTER_WEBPUSH_SUBJECT]", valueName: "uri"))
    var webPushSubject: String?
    @Option(name: .customLong("push-ca-file"), help: ArgumentHelp(
        "Trust this CA (PEM) for the push providers instead of the system's (local stand-ins).", valueName: "path"))
    var pushCAFile: String?
    @Option(name: .customLong("push-preview"), help: ArgumentHelp("""
        How much a message push shows: full (sender and the first 100 characters), sender ("New message from \
        Sara", the default) or none ("New message"). [env: SPOTTER_PUSH_PREVIEW]
        """, valueName: "full|sender|none"))
    var pushPreview: String?
    @Option(name: .customLong("push-coalesce"), help: ArgumentHelp("""
        One visible push per thread and device per this many seconds; messages meanwhile are counted into the \
        next (default 30, 0 for none). [env: SPOTTER_PUSH_COALESCE]
        """, valueName: "seconds"))
    var pushCoalesce: Int?

    private func env(_ name: String) -> String? {
        ProcessInfo.processInfo.environment[name].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Reads the keys and starts a provider per configured platform (its own HTTP/2 client thread).
    func apply(to config: inout ServerConfig, logger: Logger) throws -> PushProviders {
        let settings = PushProviderSettings(
            apnsKeyPath: apnsKey, apnsKeyID: apnsKeyID ?? env("SPOTTER_APNS_KEY_ID"), apnsTeamID: apnsTeamID ?? env("SPOTTER_APNS_TEAM_ID"),
            apnsURL: apnsURL, fcmServiceAccountPath: fcmServiceAccount, fcmURL: fcmURL, fcmTokenURL: fcmTokenURL,
            webPushVAPIDKeyPath: webPushVAPIDKey, webPushSubject: webPushSubject ?? env("SPOTTER_WEBPUSH_SUBJECT"), caFile: pushCAFile)
        if let text = pushPreview ?? env("SPOTTER_PUSH_PREVIEW") {
            guard let preview = PushPreview(rawValue: text) else {
                throw ValidationError("--push-preview must be full, sender or none, got '\(text)'")
            }
            config.push.preview = preview
        }
        if let seconds = try pushCoalesce ?? env("SPOTTER_PUSH_COALESCE").map(parseSeconds) {
            guard (0...86_400).contains(seconds) else { throw ValidationError("--push-coalesce must be 0…86400 seconds") }
            config.push.coalesceMilliseconds = Int64(seconds) * 1000
        }
        let providers: PushProviders
        do {
            providers = try settings.makeProviders(logger: logger)
        } catch {
            throw ValidationError("push providers: \(error)")
        }
        config.push.providers = providers.all
        config.webPushPublicKey = providers.vapidPublicKey
        if !providers.all.isEmpty {
            logger.info("pushing through", metadata: ["platforms": "\(providers.all.map(\.platform.rawValue))",
                                                      "preview": "\(config.push.preview.rawValue)"])
        }
        return providers
    }

    private func parseSeconds(_ text: String) throws -> Int {
        guard let value = Int(text) else { throw ValidationError("SPOTTER_PUSH_COALESCE must be a whole number of seconds") }
        return value
    }
}
