/// What operators and load balancers get from the server besides the API: who may read `/metrics`, where it is
/// served, and how long `/readyz` says "not ready" before a shutdown starts to drain.
public struct OperatorSettings: Sendable {
    /// With it, `/metrics` needs `Authorization: Bearer <token>` (or an admin's access token). Never logged.
    public var metricsToken: String?
    /// With it, `/metrics` is served on this second listener only (`/healthz` and `/readyz` too), not on `port`.
    public var metricsListen: (host: String, port: Int)?
    /// Seconds between a shutdown request and the start of the drain, during which `/readyz` answers 503 and
    /// everything else is served as before: a load balancer sees the process leave before its sockets are
    /// closed. A second request (another SIGTERM) drains at once. 0: drain at once.
    public var drainDelaySeconds = 0

    public init() {}

    /// `ADDR:PORT` (`[v6]:PORT` for an IPv6 address) as a host and a port, or nil if it is not one.
    public static func listenAddress(_ text: String) -> (host: String, port: Int)? {
        guard let colon = text.lastIndex(of: ":") else { return nil }
        var host = String(text[..<colon])
        let portText = text[text.index(after: colon)...]
        guard !portText.isEmpty, portText.count <= 5, portText.allSatisfy({ $0.isASCII && $0.isNumber }),
              let port = Int(portText), (0...65535).contains(port) else { return nil }
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty, !host.contains(where: { $0 == " " || $0 == "[" || $0 == "]" }) else { return nil }
        return (host, port)
    }
}
