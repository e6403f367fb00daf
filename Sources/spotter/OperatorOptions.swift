import ArgumentParser
import SpotterServer

/// `/metrics` protection and the drain a load balancer sees coming (deploy/README.md, "Metrics and health").
struct OperatorOptions: ParsableArguments {
    @Option(name: .customLong("metrics-token"), help: ArgumentHelp("""
        /metrics then needs `Authorization: Bearer <token>` (an admin's access token works too); without it \
        /metrics is open. Prefer the environment: a flag shows in the process list. Never logged. \
        [env: SPOTTER_METRICS_TOKEN]
        """, valueName: "token"))
    var metricsToken: String?

    @Option(name: .customLong("metrics-listen"), help: ArgumentHelp("""
        Serve /metrics (and /healthz, /readyz) on this second address only, as ADDR:PORT ([v6]:PORT), and not on \
        the main port. [env: SPOTTER_METRICS_LISTEN] (default: none, /metrics on the main port)
        """, valueName: "addr:port"))
    var metricsListen: String?

    @Option(name: .customLong("drain-delay"), help: ArgumentHelp("""
        Seconds between SIGTERM and the drain, during which /readyz answers 503 and everything else is served, so \
        a load balancer takes the process out first; a second SIGTERM drains at once (0–300). \
        [env: SPOTTER_DRAIN_DELAY] (default: 0)
        """, valueName: "seconds"))
    var drainDelay: Int?

    func apply(to config: inout ServerConfig) throws {
        if let token = metricsToken ?? env("SPOTTER_METRICS_TOKEN") {
            guard token.utf8.count >= 16, token.utf8.allSatisfy({ (0x21...0x7e).contains($0) }) else {
                throw ValidationError("the metrics token must be at least 16 visible ASCII characters, without spaces")
            }
            config.operators.metricsToken = token
        }
        if let text = metricsListen ?? env("SPOTTER_METRICS_LISTEN") {
            guard let address = OperatorSettings.listenAddress(text) else {
                throw ValidationError("--metrics-listen must be ADDR:PORT (or [v6]:PORT), got '\(text)'")
            }
            config.operators.metricsListen = address
        }
        let delay = try drainDelay ?? envInt("SPOTTER_DRAIN_DELAY") ?? 0
        guard (0...300).contains(delay) else { throw ValidationError("--drain-delay must be 0–300 seconds, got \(delay)") }
        config.operators.drainDelaySeconds = delay
    }
}
