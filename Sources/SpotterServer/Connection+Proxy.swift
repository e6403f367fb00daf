import EventLoop
import WebSocket

/// Whose address a connection speaks for (`--trusted-proxy`, deploy/README.md "Behind a proxy").
///
/// The TCP peer's own address, unless the peer is a trusted proxy: then a PROXY protocol v2 header at the start of
/// the connection names the client, and on each HTTP request (the WebSocket upgrade included) `X-Forwarded-For`
/// does, read from the right. The address found is what the per-address rate limits count and the logs show.
/// An untrusted peer's headers are ignored, and a PROXY header from it closes the connection: it is either a
/// proxy missing from `--trusted-proxy` (better found at once than rate limited as one client) or a forgery.
struct ClientAddress {
    /// The address the connection speaks for so far (the peer's, or the PROXY header's source).
    var address: String
    /// Whether `address` is itself a trusted proxy, whose `X-Forwarded-For` is believed.
    var trusted: Bool
    /// Bytes of a PROXY header still being read; nil once decided (read, or absent).
    var pending: [UInt8]? = []

    init(peer: String, proxies: TrustedProxies) {
        let parsed = IPAddress(peer)
        address = parsed?.description ?? peer  // a v4-mapped peer counts as its IPv4 address
        trusted = parsed.map(proxies.contains) ?? false
    }
}

extension Connection {
    /// Reads a PROXY v2 header off the connection's first bytes. Returns the bytes that follow it (or all of
    /// them when there is none) for the HTTP parser; nil while more are needed, or once the connection is closed.
    func takeProxyHeader(_ bytes: UnsafeRawBufferPointer) -> [UInt8]? {
        guard var pending = client.pending else { return Array(bytes) }
        // Most connections: a request's first byte is a letter, never the signature's \r.
        if pending.isEmpty, let first = bytes.first, first != ProxyHeader.signature[0] {
            client.pending = nil
            return Array(bytes)
        }
        pending += bytes
        switch ProxyHeader.parse(pending) {
        case .needMore:
            client.pending = pending
            return nil
        case .absent:
            client.pending = nil
            return pending
        case .malformed(let reason):
            refuseProxyHeader("malformed", reason: reason)
            return nil
        case .header(let source, let length):
            guard client.trusted else {
                refuseProxyHeader("untrusted", reason: "from a peer not in --trusted-proxy")
                return nil
            }
            client.pending = nil
            server.metrics.count("spotter_proxy_headers_total", [("result", source == nil ? "local" : "accepted")])
            if let source {
                client.address = source.description
                client.trusted = server.config.trustedProxies.contains(source)
                server.logger.debug("client address from a PROXY header",
                                    metadata: ["connection": "\(id)", "address": "\(client.address)"])
            }
            return Array(pending[length...])
        }
    }

    private func refuseProxyHeader(_ result: String, reason: String) {
        server.metrics.count("spotter_proxy_headers_total", [("result", result)])
        server.logger.info("closing a connection for its PROXY header",
                           metadata: ["connection": "\(id)", "peer": "\(client.address)", "reason": "\(reason)"])
        client.pending = nil
        beginClosing()
        tcp.stopReading()
        closeDeadline = server.loop.nowMilliseconds  // nothing is owed to it: the next sweep drops it
    }

    /// The client's address for one request: from a trusted peer, `X-Forwarded-For`'s rightmost untrusted entry
    /// (none usable: the connection's own address); from anyone else, the connection's address.
    func address(for request: HTTPRequest) -> String {
        guard client.trusted else { return client.address }
        let values = request.headers.values("X-Forwarded-For")
        guard !values.isEmpty, let forwarded = ForwardedFor.client(values, trusted: server.config.trustedProxies) else {
            return client.address
        }
        return forwarded.description
    }
}
