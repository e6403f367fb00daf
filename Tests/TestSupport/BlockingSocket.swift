#if canImport(Glibc)
import Glibc
#endif

/// A plain blocking TCP socket on loopback with a receive timeout: the
/// simplest possible peer for integration tests, independent of the
/// server's own event loop code.
public final class BlockingSocket {
    public let fd: Int32
    /// The cluster's balanced port this socket was routed from (`TestCluster`), if it was.
    public let balancedPort: Int?
    private(set) var isOpen = true

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
        public init(description: String) { self.description = description }
    }

    /// Connects to 127.0.0.1:`port`. `receiveBufferBytes` shrinks SO_RCVBUF
    /// (back-pressure tests); `timeoutSeconds` bounds every read.
    /// A cluster's balanced port (`TestCluster`) connects to its next node instead.
    public init(port: Int, receiveBufferBytes: Int32? = nil, timeoutSeconds: Int = 5) throws {
        balancedPort = TestCluster.isBalanced(port) ? port : nil
        let port = TestCluster.route(port)
        // Close-on-exec: a process the tests start (a server, a watchdog) must not keep this socket open after
        // the test closes it, or the server never sees it go.
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else {
            isOpen = false
            throw Failure(description: "socket() failed")
        }
        if var size = receiveBufferBytes {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard status == 0 else {
            // deinit runs for a class whose init throws once every property is set:
            // it closes the descriptor. Closing it here too could close another
            // test's socket that reused the number in between.
            throw Failure(description: "connect to port \(port) failed: errno \(errno)")
        }
    }

    deinit { close() }

    public func close() {
        guard isOpen else { return }
        isOpen = false
        Glibc.close(fd)
    }

    /// Writes all bytes; returns false if the peer is gone (EPIPE, ECONNRESET).
    @discardableResult
    public func write(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            }
            if written <= 0 { return false }
            offset += written
        }
        return true
    }

    public func write(_ text: String) { write(Array(text.utf8)) }

    /// Reads what is available (blocking until at least one byte).
    /// Returns [] at EOF; throws on timeout or reset.
    public func read(max: Int = 65536) throws -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: max)
        let count = buffer.withUnsafeMutableBytes { Glibc.recv(fd, $0.baseAddress!, max, 0) }
        if count < 0 {
            if errno == EAGAIN || errno == EWOULDBLOCK { throw Failure(description: "read timed out") }
            if errno == ECONNRESET { return [] }
            throw Failure(description: "read failed: errno \(errno)")
        }
        return Array(buffer.prefix(count))
    }

    /// Reads until EOF (or timeout); returns everything read.
    public func readToEnd() throws -> [UInt8] {
        var all: [UInt8] = []
        while true {
            let chunk = try read()
            if chunk.isEmpty { return all }
            all += chunk
        }
    }

    /// Half-closes: no more writes from this side.
    public func shutdownWrite() { Glibc.shutdown(fd, Int32(SHUT_WR)) }
}
