import CLibUV

#if canImport(Glibc)
import Glibc
#endif

/// A socket address parsed by libuv (IPv4 or IPv6).
public struct SocketAddress: Sendable {
    var storage = sockaddr_storage()

    /// Parses a numeric host ("127.0.0.1", "::1") and port.
    public init(host: String, port: Int) throws(UVError) {
        let status: Int32 = withUnsafeMutableBytes(of: &storage) { raw in
            if host.contains(":") {
                return uv_ip6_addr(host, Int32(port), raw.baseAddress!.assumingMemoryBound(to: sockaddr_in6.self))
            }
            return uv_ip4_addr(host, Int32(port), raw.baseAddress!.assumingMemoryBound(to: sockaddr_in.self))
        }
        guard status == 0 else { throw UVError(status) }
    }

    func withPointer<T>(_ body: (UnsafePointer<sockaddr>) -> T) -> T {
        withUnsafeBytes(of: storage) { body($0.baseAddress!.assumingMemoryBound(to: sockaddr.self)) }
    }
}

/// A listening TCP socket. Loop thread only.
public final class TCPListener: LoopHandle {
    private var onConnection: ((TCPConnection) -> Void)?
    public private(set) var port: Int = 0

    public init(loop: Loop) {
        super.init(loop: loop, type: UV_TCP)
        uv_tcp_init(loop.raw, tcp)
        didInitialize()
    }

    private var tcp: UnsafeMutablePointer<uv_tcp_t> {
        UnsafeMutableRawPointer(handle).assumingMemoryBound(to: uv_tcp_t.self)
    }

    /// Binds and starts listening. Port 0 picks a free port; `port` tells which.
    public func listen(
        host: String, port: Int, backlog: Int32 = 1024, onConnection: @escaping (TCPConnection) -> Void
    ) throws(UVError) {
        let address = try SocketAddress(host: host, port: port)
        var status = address.withPointer { uv_tcp_bind(tcp, $0, 0) }
        guard status == 0 else { throw UVError(status) }
        self.onConnection = onConnection
        status = uv_listen(streamPointer(tcp), backlog) { server, status in
            let listener = LoopHandle.object(UnsafeMutableRawPointer(server), as: TCPListener.self)
            guard status == 0 else { return }  // EMFILE and friends: libuv retries on the next event
            listener.acceptOne()
        }
        guard status == 0 else { throw UVError(status) }
        self.port = boundPort()
    }

    private func acceptOne() {
        let connection = TCPConnection(loop: loop)
        guard uv_accept(streamPointer(tcp), connection.stream) == 0 else {
            connection.close()
            return
        }
        connection.setNoDelay()
        onConnection?(connection)
    }

    private func boundPort() -> Int {
        var storage = sockaddr_storage()
        var length = Int32(MemoryLayout<sockaddr_storage>.size)
        let status = withUnsafeMutableBytes(of: &storage) { raw in
            uv_tcp_getsockname(tcp, raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), &length)
        }
        guard status == 0 else { return 0 }
        return withUnsafeBytes(of: storage) { raw in
            let family = raw.load(as: sockaddr.self).sa_family
            if family == sa_family_t(AF_INET6) {
                return Int(UInt16(bigEndian: raw.load(as: sockaddr_in6.self).sin6_port))
            }
            return Int(UInt16(bigEndian: raw.load(as: sockaddr_in.self).sin_port))
        }
    }

    override func didClose() { onConnection = nil }
}
