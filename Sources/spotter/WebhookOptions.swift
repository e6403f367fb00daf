import ArgumentParser
import SpotterPush
import SpotterServer

/// Outbound webhooks (deploy/README.md, "Webhooks"): endpoints are registered through the admin API; these say
/// how long a failing delivery is retried.
struct WebhookOptions: ParsableArguments {
    @Option(name: .customLong("webhook-retry-for"), help: ArgumentHelp("""
        Seconds a failing webhook delivery is retried (exponential back-off with jitter) before it goes to its \
        endpoint's dead-letter list (default 86400: 24 h).
        """, valueName: "seconds"))
    var retryFor: Int?
    @Option(name: .customLong("webhook-retry-base"), help: ArgumentHelp("""
        Milliseconds before a failed webhook delivery's first retry, doubled after each failure up to an hour \
        (default 5000).
        """, valueName: "ms"))
    var retryBase: Int?
    @Option(name: .customLong("webhook-ca-file"), help: ArgumentHelp(
        "Trust this CA (PEM) for webhook receivers instead of the system's (a private CA).", valueName: "path"))
    var caFile: String?

    func apply(to config: inout ServerConfig) throws {
        if let retryFor {
            guard (1...7 * 86_400).contains(retryFor) else { throw ValidationError("--webhook-retry-for: 1 to 604800 seconds") }
            config.webhooks.retryForMilliseconds = Int64(retryFor) * 1000
        }
        if let retryBase {
            guard (1...3_600_000).contains(retryBase) else { throw ValidationError("--webhook-retry-base: 1 to 3600000 ms") }
            config.webhooks.retryBaseMilliseconds = Int64(retryBase)
        }
        config.webhooks.transport = CurlWebhookTransport(caFile: caFile)
    }
}
