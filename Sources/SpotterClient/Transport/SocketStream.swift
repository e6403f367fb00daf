#if os(Linux)
import Glibc

/// The bytes of one connection, both ways: plain TCP (ws://) or through TLS (wss://, `TLSStream`). `read` runs on the
/// reader thread, `write` on the write queue, `shutdown` from any thread (it wakes both); `close` runs once, last.
protocol SocketStream: AnyObject, Sendable {
    /// The next bytes from the server; nil at the end (EOF, an error, or after `shutdown`).
    func read() -> [UInt8]?
    /// Writes all of `bytes`; false when the connection is gone.
    @discardableResult func write(_ bytes: [UInt8]) -> Bool
    func shutdown()
    func close()
}

/// Blocking send/recv on a connected socket.
final class PlainStream: SocketStream, @unchecked Sendable {
    let fd: Int32
    init(fd: Int32) { self.fd = fd }

    func read() -> [UInt8]? { Self.receive(fd) }
    func write(_ bytes: [UInt8]) -> Bool { Self.sendAll(fd, bytes) }
    func shutdown() { _ = Glibc.shutdown(fd, Int32(SHUT_RDWR)) }
    func close() { _ = Glibc.close(fd) }

    static func receive(_ fd: Int32, capacity: Int = 65_536) -> [UInt8]? {
        var chunk = [UInt8](repeating: 0, count: capacity)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress!, $0.count, 0) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return nil }
            return Array(chunk.prefix(count))
        }
    }

    /// MSG_NOSIGNAL: a server gone away is a false here, never a SIGPIPE.
    static func sendAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL)) }
            if written < 0 && errno == EINTR { continue }
            if written <= 0 { return false }
            offset += written
        }
        return true
    }
}
#endif
