import CLibUV

#if canImport(Glibc)
import Glibc
#endif

/// Moving a connected socket to another loop (`--loops N`). A libuv handle belongs to the loop it was made
/// on and cannot move; the socket under it can: the first loop duplicates its descriptor and closes its handle
/// (libuv takes it out of that loop's epoll first, and the duplicate keeps the socket open, so the peer sees
/// nothing), and the second loop opens a handle of its own on the duplicate (`uv_tcp_open`).
extension TCPConnection {
    /// Gives the socket up: returns a duplicate of its descriptor, which the caller now owns (pass it to
    /// `adopt` on the other loop, or `close` it), and closes this handle. Only with nothing queued or in
    /// flight and no transform (TLS state does not travel): nil otherwise, and the connection is untouched.
    public func detachDescriptor() -> Int32? {
        guard !isClosed, queuedBytes == 0, transform == nil else { return nil }
        var fd: uv_os_fd_t = -1
        guard uv_fileno(handle, &fd) == 0 else { return nil }
        let copy = dup(fd)
        guard copy >= 0 else { return nil }
        stopReading()
        onRead = nil
        onEnd = nil
        close()
        return copy
    }

    /// A connection on `loop` for a socket another loop gave up (`detachDescriptor`). Call on `loop`'s thread.
    /// On failure the descriptor is closed.
    public static func adopt(descriptor: Int32, loop: Loop) throws(UVError) -> TCPConnection {
        let connection = TCPConnection(loop: loop)
        let status = uv_tcp_open(connection.tcp, uv_os_sock_t(descriptor))
        guard status == 0 else {
            Glibc.close(descriptor)
            connection.close()
            throw UVError(status)
        }
        connection.setNoDelay()
        return connection
    }
}
