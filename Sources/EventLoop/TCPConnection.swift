import CLibUV

#if canImport(Glibc)
import Glibc
#endif

/// A connected TCP socket. Loop thread only.
///
/// Reading: bytes land in the loop's shared read buffer and are handed to
/// `onRead`, which must consume them before returning; an idle connection
/// holds no read buffer of its own.
///
/// Writing: `send` appends to an outbound buffer and asks the loop to flush
/// it before the next poll. A flush tries `uv_try_write` first; only what
/// the kernel did not take is copied into a `uv_write` request, and at most
/// one request is in flight, so `queuedBytes` is the connection's whole
/// backlog — the number a caller checks against its back-pressure bound.
public final class TCPConnection: LoopHandle {
    /// Bytes from the peer, valid only during the call.
    public var onRead: ((UnsafeRawBufferPointer) -> Void)?
    /// The peer closed its side (`UVError.endOfFile`) or the socket failed.
    /// Reading has stopped; the owner decides when to `close()`.
    public var onEnd: ((UVError) -> Void)?
    /// The handle is closed and freed: the last callback this connection makes.
    public var onClose: (() -> Void)?

    private var outbound: [UInt8] = []
    private var inFlightBytes = 0
    /// Bytes ever accepted by `send`, and ever taken by the kernel: a
    /// completion fires once `writtenTotal` reaches its `through` mark.
    private var queuedTotal: UInt64 = 0
    private var writtenTotal: UInt64 = 0
    private var completions: [(through: UInt64, callback: (UVError?) -> Void)] = []
    private var flushScheduled = false
    private var shutdownRequested = false
    private var shutdownStarted = false
    private var ended = false
    /// Bytes on the socket pass through this layer (TLS) when set; set it before `startReading`.
    public var transform: (any StreamTransform)?
    /// The owner's bytes written into by `withOutbound` while a transform is set, before they go through it.
    private var plainScratch: [UInt8] = []

    init(loop: Loop) {
        super.init(loop: loop, type: UV_TCP)
        uv_tcp_init(loop.raw, tcp)
        didInitialize()
    }

    var tcp: UnsafeMutablePointer<uv_tcp_t> {
        UnsafeMutableRawPointer(handle).assumingMemoryBound(to: uv_tcp_t.self)
    }

    var stream: UnsafeMutablePointer<uv_stream_t> { streamPointer(tcp) }

    func setNoDelay() { uv_tcp_nodelay(tcp, 1) }

    /// The peer's address without the port ("127.0.0.1", "::1"), or "" if unknown.
    public var peerAddress: String {
        var storage = sockaddr_storage()
        var length = Int32(MemoryLayout<sockaddr_storage>.size)
        let status = withUnsafeMutableBytes(of: &storage) { raw in
            uv_tcp_getpeername(tcp, raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), &length)
        }
        guard status == 0 else { return "" }
        var text = [CChar](repeating: 0, count: 64)
        let family = withUnsafeBytes(of: storage) { $0.load(as: sockaddr.self).sa_family }
        withUnsafeBytes(of: storage) { raw in
            if family == sa_family_t(AF_INET6) {
                _ = uv_ip6_name(raw.baseAddress!.assumingMemoryBound(to: sockaddr_in6.self), &text, text.count)
            } else {
                _ = uv_ip4_name(raw.baseAddress!.assumingMemoryBound(to: sockaddr_in.self), &text, text.count)
            }
        }
        return String(cString: text)
    }

    /// Bytes accepted by `send` and not yet taken by the kernel.
    public var queuedBytes: Int { outbound.count + inFlightBytes }

    /// The kernel did not take everything offered (a write is waiting for room): its send buffer is full,
    /// the peer is not keeping up.
    public var isBackedUp: Bool { inFlightBytes > 0 }

    /// Bytes in the kernel's send queue (written, not yet acknowledged by the peer), by SIOCOUTQ; 0 where
    /// it cannot be read. One system call: ask only about sockets that are backed up.
    public var kernelQueuedBytes: Int {
        guard !isClosed else { return 0 }
        var fd: uv_os_fd_t = -1
        guard uv_fileno(handle, &fd) == 0 else { return 0 }
        return max(0, Int(spotter_socket_unsent_bytes(fd)))
    }

    /// Caps the kernel's send buffer (SO_SNDBUF; Linux doubles the value, and stops autotuning it).
    public func setSendBufferSize(_ bytes: Int) {
        guard !isClosed, bytes > 0 else { return }
        var value = Int32(clamping: bytes)
        _ = uv_send_buffer_size(handle, &value)
    }

    /// Closes at once, discarding what the kernel still holds for the peer (a RST instead of a FIN), so a
    /// peer that never reads cannot keep that memory in use after the socket is given up on.
    public func resetAndClose() {
        guard !isClosed else { return }
        var fd: uv_os_fd_t = -1
        if uv_fileno(handle, &fd) == 0 {
            var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
            _ = setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        }
        close()
    }

    /// Capacity held by the outbound buffer while nothing is queued.
    public var idleOutboundCapacity: Int { outbound.capacity }

    // MARK: - Reading

    public func startReading() {
        guard !isClosed, !ended else { return }
        uv_read_start(stream, { handle, _, buffer in
            let loop = LoopHandle.object(UnsafeMutableRawPointer(handle), as: TCPConnection.self).loop
            buffer!.pointee = uv_buf_init(loop.readBuffer.assumingMemoryBound(to: CChar.self), UInt32(loop.readBufferSize))
        }, { handle, count, buffer in
            let connection = LoopHandle.object(UnsafeMutableRawPointer(handle), as: TCPConnection.self)
            if count > 0 {
                let bytes = UnsafeRawBufferPointer(start: buffer!.pointee.base, count: count)
                if let transform = connection.transform {
                    connection.receive(bytes, through: transform)
                } else {
                    connection.onRead?(bytes)
                }
            } else if count < 0 {
                connection.end(UVError(Int32(count)))
            }
        })
    }

    public func stopReading() {
        guard !isClosed else { return }
        uv_read_stop(stream)
    }

    private func end(_ error: UVError) {
        guard !ended, !isClosed else { return }
        ended = true
        uv_read_stop(stream)
        if error != .endOfFile { fireCompletions(failing: error) }
        onEnd?(error)
    }

    // MARK: - Writing

    /// Queues bytes; they are written before the loop next polls.
    ///
    /// `completion` runs on the loop once the kernel has taken every byte
    /// queued up to and including these (nil), or when the connection
    /// fails or closes first (the error; `UVError.canceled` after `close()`).
    public func send(_ bytes: UnsafeRawBufferPointer, completion: ((UVError?) -> Void)? = nil) {
        guard !isClosed, !shutdownRequested else {
            completion?(.canceled)
            return
        }
        if let transform {
            try? transform.send(bytes)  // a failed layer takes nothing more; its failure surfaced on a read
            drainTransform()
        } else {
            outbound.append(contentsOf: bytes)
            queuedTotal += UInt64(bytes.count)
        }
        if let completion { completions.append((queuedTotal, completion)) }
        scheduleFlush()
    }

    public func send(_ bytes: [UInt8], completion: ((UVError?) -> Void)? = nil) {
        bytes.withUnsafeBytes { send($0, completion: completion) }
    }

    /// Calls `callback` once everything queued so far has been taken by the
    /// kernel (at once if nothing is queued), or with the error if the
    /// connection fails or closes first. For producers that pace themselves.
    public func whenDrained(_ callback: @escaping (UVError?) -> Void) {
        guard !isClosed else {
            callback(.canceled)
            return
        }
        if queuedBytes == 0 {
            callback(nil)
        } else {
            completions.append((queuedTotal, callback))
        }
    }

    /// Lets the caller encode straight into the outbound buffer.
    public func withOutbound(_ body: (inout [UInt8]) -> Void) {
        guard !isClosed, !shutdownRequested else { return }
        if let transform {
            var plain = plainScratch
            plainScratch = []
            plain.removeAll(keepingCapacity: true)
            body(&plain)
            plain.withUnsafeBytes { try? transform.send($0) }
            plain.removeAll(keepingCapacity: plain.capacity <= 4096)
            plainScratch = plain
            drainTransform()
            return
        }
        let before = outbound.count
        body(&outbound)
        queuedTotal += UInt64(outbound.count - before)
        scheduleFlush()
    }

    /// Runs the completions whose bytes the kernel has taken (all of them,
    /// with `error`, when the connection failed).
    private func fireCompletions(failing error: UVError? = nil) {
        guard !completions.isEmpty else { return }
        var ready = 0
        while ready < completions.count, error != nil || completions[ready].through <= writtenTotal { ready += 1 }
        guard ready > 0 else { return }
        let due = completions[..<ready]
        completions.removeFirst(ready)
        for entry in due { entry.callback(error) }
    }

    private func scheduleFlush() {
        guard !flushScheduled, !outbound.isEmpty else { return }
        flushScheduled = true
        loop.scheduleFlush(self)
    }

    /// Writes what is queued. Called by the loop before it polls.
    func flush() {
        flushScheduled = false
        guard !isClosed, inFlightBytes == 0 else { return }
        guard !outbound.isEmpty else {
            if shutdownRequested { startShutdown() }
            return
        }
        let total = outbound.count
        let written: Int = outbound.withUnsafeMutableBytes { bytes in
            var buffer = uv_buf_init(bytes.baseAddress!.assumingMemoryBound(to: CChar.self), UInt32(bytes.count))
            return Int(uv_try_write(stream, &buffer, 1))
        }
        if written < 0 && written != Int(UV_EAGAIN.rawValue) {
            outbound = []
            end(UVError(Int32(written)))
            return
        }
        let taken = max(written, 0)
        if taken < total { writeRemainder(from: taken) }
        // Keep a small buffer for the next reply; give big ones back.
        outbound.removeAll(keepingCapacity: outbound.capacity <= 4096)
        writtenTotal += UInt64(taken)
        if inFlightBytes == 0 && shutdownRequested { startShutdown() }
        fireCompletions()
    }

    /// Copies `outbound[offset...]` into one allocation with its request and
    /// hands it to libuv; the write callback frees both.
    private func writeRemainder(from offset: Int) {
        let count = outbound.count - offset
        let requestSize = MemoryLayout<uv_write_t>.stride
        let block = UnsafeMutableRawPointer.allocate(byteCount: requestSize + count, alignment: 16)
        let request = block.bindMemory(to: uv_write_t.self, capacity: 1)
        let payload = block + requestSize
        outbound.withUnsafeBytes { payload.copyMemory(from: $0.baseAddress! + offset, byteCount: count) }
        request.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        var buffer = uv_buf_init(payload.assumingMemoryBound(to: CChar.self), UInt32(count))
        let status = uv_write(request, stream, &buffer, 1) { request, status in
            let connection = Unmanaged<TCPConnection>.fromOpaque(request!.pointee.data).takeUnretainedValue()
            UnsafeMutableRawPointer(request!).deallocate()
            connection.writeCompleted(status)
        }
        if status != 0 {
            block.deallocate()
            end(UVError(status))
            return
        }
        inFlightBytes = count
    }

    private func writeCompleted(_ status: Int32) {
        let written = inFlightBytes
        inFlightBytes = 0
        if status < 0 {
            if status != Int32(UV_ECANCELED.rawValue) { end(UVError(status)) }
            return
        }
        writtenTotal += UInt64(written)
        fireCompletions()
        if !outbound.isEmpty {
            flush()
        } else if shutdownRequested {
            startShutdown()
        }
    }

    /// Sends FIN once everything queued is written (half-close). Reading goes
    /// on, so the peer's last bytes and its own FIN still arrive as `onEnd`.
    public func shutdownAfterFlush() {
        guard !isClosed, !shutdownRequested else { return }
        if let transform {
            transform.finish()  // the layer's clean close goes out before the FIN
            drainTransform()
        }
        shutdownRequested = true
        if queuedBytes == 0 { startShutdown() }
    }

    // MARK: - Through a transform

    /// False while the transform (TLS) has not finished its handshake: nothing of the owner's has arrived yet.
    public var isTransformReady: Bool { transform?.isReady ?? true }

    private func receive(_ bytes: UnsafeRawBufferPointer, through transform: any StreamTransform) {
        let peerClosed: Bool
        do {
            peerClosed = try transform.receive(bytes) { [unowned self] plain in
                if !isClosed, !ended { onRead?(plain) }
            }
        } catch {
            // The alert the layer wrote is offered to the kernel once, then the stream ends.
            drainTransform()
            if !isClosed { flush() }
            end(UVError(Int32(UV_EPROTO.rawValue)))
            return
        }
        drainTransform()
        if peerClosed { end(.endOfFile) }
    }

    private func drainTransform() {
        guard let transform, !isClosed else { return }
        let before = outbound.count
        transform.drainOutput(into: &outbound)
        queuedTotal += UInt64(outbound.count - before)
        scheduleFlush()
    }

    private func startShutdown() {
        guard !shutdownStarted, !isClosed else { return }
        shutdownStarted = true
        let request = UnsafeMutablePointer<uv_shutdown_t>.allocate(capacity: 1)
        let status = uv_shutdown(request, stream) { request, _ in request!.deallocate() }
        if status != 0 { request.deallocate() }
    }

    override func didClose() {
        fireCompletions(failing: .canceled)
        outbound = []
        plainScratch = []
        transform = nil
        onRead = nil
        onEnd = nil
        let callback = onClose
        onClose = nil
        callback?()
    }
}

// MARK: - Client side

extension TCPConnection {
    /// Opens a connection to `address`, optionally from a chosen local
    /// address (load tests spread their sources over 127.0.0.0/8).
    public static func connect(
        loop: Loop, to address: SocketAddress, from source: SocketAddress? = nil,
        _ completion: @escaping (Result<TCPConnection, UVError>) -> Void
    ) {
        let connection = TCPConnection(loop: loop)
        if let source {
            let status = source.withPointer { uv_tcp_bind(connection.tcp, $0, 0) }
            if status != 0 {
                connection.close()
                completion(.failure(UVError(status)))
                return
            }
        }
        let pending = PendingConnect(connection: connection, completion: completion)
        let request = UnsafeMutablePointer<uv_connect_t>.allocate(capacity: 1)
        request.pointee.data = Unmanaged.passRetained(pending).toOpaque()
        let status = address.withPointer { uv_tcp_connect(request, connection.tcp, $0) { request, status in
            let pending = Unmanaged<PendingConnect>.fromOpaque(request!.pointee.data).takeRetainedValue()
            request!.deallocate()
            if status == 0 {
                pending.connection.setNoDelay()
                pending.completion(.success(pending.connection))
            } else {
                pending.connection.close()
                pending.completion(.failure(UVError(status)))
            }
        } }
        if status != 0 {
            Unmanaged<PendingConnect>.fromOpaque(request.pointee.data).release()
            request.deallocate()
            connection.close()
            completion(.failure(UVError(status)))
        }
    }
}

private final class PendingConnect {
    let connection: TCPConnection
    let completion: (Result<TCPConnection, UVError>) -> Void
    init(connection: TCPConnection, completion: @escaping (Result<TCPConnection, UVError>) -> Void) {
        self.connection = connection
        self.completion = completion
    }
}
