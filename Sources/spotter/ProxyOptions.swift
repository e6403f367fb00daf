import ArgumentParser
import Logging
import SpotterServer

/// Which peers may say whose connection it is (deploy/README.md, "Behind a proxy").
struct ProxyOptions: ParsableArguments {
    @Option(name: .customLong("trusted-proxy"), help: ArgumentHelp("""
        A proxy's address or CIDR block, IPv4 or IPv6 (repeatable). A peer inside one may start its connection \
        with a PROXY protocol v2 header and send X-Forwarded-For: the client's address is taken from them for \
        rate limits, logs and metrics. Other peers' headers are ignored, and a PROXY header from them closes \
        the connection. [env: SPOTTER_TRUSTED_PROXIES, comma-separated] (default: none)
        """, valueName: "cidr"))
    var trustedProxies: [String] = []

    private var values: [String] {
        trustedProxies.isEmpty
            ? (env("SPOTTER_TRUSTED_PROXIES") ?? "").split(separator: ",").map { String($0).trimmed() }.filter { !$0.isEmpty }
            : trustedProxies
    }

    /// Checked when the command line is read, before anything is opened.
    func validate() throws {
        var probe = ServerConfig()
        try trust(values, in: &probe)
    }

    private func trust(_ values: [String], in config: inout ServerConfig) throws {
        do {
            try config.trustProxies(values)
        } catch {
            throw ValidationError("--trusted-proxy: \(error)")
        }
    }

    func apply(to config: inout ServerConfig, logger: Logger) throws {
        let values = values
        try trust(values, in: &config)
        if !values.isEmpty {
            logger.info("trusting proxies for client addresses", metadata: ["ranges": "\(config.trustedProxyDescriptions.joined(separator: ","))"])
        }
    }
}
