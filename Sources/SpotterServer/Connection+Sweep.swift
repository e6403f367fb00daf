import EventLoop
import SpotterProtocol
import WebSocket

extension Connection {
    /// Called by the server's sweep timer once a second.
    func sweep(now: UInt64) {
        if remote != nil {
            // Pings, idle peers and close deadlines are the socket loop's; the session's clock (the token) is here.
            if case .webSocket(let endpoint) = phase { endpoint.tick(on: self) }
            return
        }
        if let deadline = closeDeadline {
            if now >= deadline {
                // What is still unsent will not be read: a reset frees the kernel's copy at once too.
                if tcp.queuedBytes > 0 || tcp.kernelQueuedBytes > 0 { tcp.resetAndClose() } else { tcp.close() }
            }
            return
        }
        let silentMs = now &- lastHeard
        guard case .webSocket(let endpoint) = phase else {
            if !tcp.isTransformReady {
                // A TLS handshake is bounded like a request head: a client that stalls in it is cut off.
                if now &- openedAt >= UInt64(server.config.requestTimeoutSeconds) * 1000 {
                    server.metrics.requestTimeouts.increment()
                    tcp.close()
                }
                return
            }
            if let started = requestStartedAt, !awaitingResponse,
               now &- started >= UInt64(server.config.requestTimeoutSeconds) * 1000 {
                requestTimedOut()
            } else if silentMs >= UInt64(server.config.idleTimeoutSeconds) * 1000 {
                tcp.close()
            }
            return
        }
        // A ping always comes first; the peer then has the rest of the idle
        // timeout to answer, however late the sweep ran.
        // Stored fields only: the computed `effectivePingIntervalSeconds` copied the whole `ServerConfig` (retaining
        // its ~150 strings and arrays) for every socket every second.
        let idleSeconds = server.config.idleTimeoutSeconds
        let pingMs = UInt64(ServerConfig.effectivePingInterval(server.config.pingIntervalSeconds, idle: idleSeconds)) * 1000
        let idleMs = UInt64(idleSeconds) * 1000
        if let sentAt = pingSentAt {
            if now &- sentAt >= idleMs - min(pingMs, idleMs - 1000) {
                server.metrics.idleTimeouts.increment()
                close(.goingAway, reason: "idle timeout")
                closeDeadline = now + 1000  // a silent peer will not answer the handshake
                return
            }
        } else if silentMs >= pingMs {
            pingSentAt = now
            sendMessage(.ping, UnsafeRawBufferPointer(start: nil, count: 0))
        }
        if case .webSocket = phase { endpoint.tick(on: self) }
    }
}

extension HTTPError {
    /// A bounded label for metrics.
    static func metricReason(_ status: Int) -> String {
        switch status {
        case 400: return "bad_request"
        case 401: return "unauthorized"
        case 403: return "origin_not_allowed"
        case 404: return "not_found"
        case 405: return "method_not_allowed"
        case 408: return "request_timeout"
        case 413: return "body_too_large"
        case 426: return "not_websocket"
        case 431: return "head_too_large"
        case 501: return "unsupported_encoding"
        case 505: return "http_version"
        default: return "other"
        }
    }
}
