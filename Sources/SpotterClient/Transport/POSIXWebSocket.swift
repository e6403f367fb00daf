#if os(Linux)
import Foundation
import Glibc
import WebSocket

/// The Linux transport: a TCP socket (ws://, or wss:// through OpenSSL: `TLSStream`), the upgrade written and
/// checked by hand, and frames read and written with the project's own RFC 6455 codec (the `WebSocket` module: pure,
/// no server code). One reader thread per connection blocks on `recv`; writes go through one serial queue, so a
/// server that stops reading never blocks the client's actor. A TLS handshake that fails (an untrusted certificate,
/// another name's) or does not finish in `handshakeTimeout` ends the connection with 1015 and the reason.
public struct POSIXWebSocketTransport: WebSocketTransport {
    /// The largest message accepted from the server.
    public var maxMessageBytes: Int
    /// Trusted for wss:// besides the system's trust store.
    public var trustedCertificates: TrustedCertificates?
    /// A TLS handshake not done in this time is given up.
    public var handshakeTimeout: Duration

    public init(maxMessageBytes: Int = 1 << 22, trustedCertificates: TrustedCertificates? = nil,
                handshakeTimeout: Duration = .seconds(10)) {
        self.maxMessageBytes = maxMessageBytes
        self.trustedCertificates = trustedCertificates
        self.handshakeTimeout = handshakeTimeout
    }

    public func connect(url: URL, headers: [String: String], subprotocols: [String]) -> any WebSocketConnection {
        POSIXWebSocketConnection(url: url, headers: headers, subprotocols: subprotocols, options: self)
    }
}

final class POSIXWebSocketConnection: WebSocketConnection, @unchecked Sendable {
    let events: AsyncStream<TransportEvent>
    private let continuation: AsyncStream<TransportEvent>.Continuation
    private let writes = DispatchQueue(label: "spotter.client.socket.write")
    // Guarded by `lock`.
    private let lock = NSLock()
    private var stream: (any SocketStream)?
    private var closeSent = false
    private var finished = false

    init(url: URL, headers: [String: String], subprotocols: [String], options: POSIXWebSocketTransport) {
        (events, continuation) = AsyncStream.makeStream(of: TransportEvent.self)
        let thread = Thread { [self] in run(url: url, headers: headers, subprotocols: subprotocols, options: options) }
        thread.name = "spotter.client.socket.read"
        thread.start()
    }

    // MARK: - Sending

    func send(_ text: String) {
        let frame = FrameEncoder.frame(.text, payload: Array(text.utf8), maskingKey: Self.maskingKey())
        enqueue(unlessClosing: true) { $0.write(frame) }
    }

    func close(code: Int, reason: String) {
        lock.lock()
        let first = !closeSent
        closeSent = true
        lock.unlock()
        // Before the TCP connect ends there is nothing to send: the reader thread finds `closeSent` and stops.
        if first, let wire = UInt16(exactly: code) {
            let frame = FrameEncoder.frame(.close, payload: FrameEncoder.closePayload(CloseCode(wire), reason: reason),
                                           maskingKey: Self.maskingKey())
            enqueue { $0.write(frame) }
        }
        // The reader sees the end and closes the descriptor; the caller has already let this connection go.
        enqueue { $0.shutdown() }
    }

    /// Runs `work` on the write queue with the stream, if it is still open. Enqueued under the lock, so nothing
    /// can run after `finish` has queued the stream's close (its descriptor's number may be reused by then).
    private func enqueue(unlessClosing: Bool = false, _ work: @escaping @Sendable (any SocketStream) -> Void) {
        lock.lock()
        defer { lock.unlock() }
        guard let stream, !(unlessClosing && closeSent) else { return }
        writes.async { work(stream) }
    }

    private static func maskingKey() -> UInt32 { UInt32.random(in: 1...UInt32.max) }

    // MARK: - The reader thread

    private func run(url: URL, headers: [String: String], subprotocols: [String], options: POSIXWebSocketTransport) {
        var code = 1006
        var reason = ""
        defer { finish(code: code, reason: reason) }
        let secure = ["wss", "https"].contains(url.scheme?.lowercased() ?? "")
        guard let host = url.host, let fd = Self.open(host: host, port: url.port ?? (secure ? 443 : 80)) else { return }
        let socket: any SocketStream
        do throws(TLSFailure) {
            socket = secure ? try TLSStream(fd: fd, host: host, trusting: options.trustedCertificates) : PlainStream(fd: fd)
        } catch {
            Glibc.close(fd)
            (code, reason) = (1015, error.reason)
            return
        }
        lock.lock()
        if closeSent {
            lock.unlock()
            socket.close()
            return
        }
        stream = socket
        lock.unlock()
        if let tls = socket as? TLSStream {
            // `close` (the client's connect timeout) can end this early: it shuts the socket down.
            do throws(TLSFailure) { try tls.handshake(timeout: options.handshakeTimeout) } catch {
                (code, reason) = (1015, error.reason)
                return
            }
        }

        // The upgrade.
        var keyBytes = [UInt8](repeating: 0, count: 16)
        for index in keyBytes.indices { keyBytes[index] = UInt8.random(in: 0...255) }
        let key = Data(keyBytes).base64EncodedString()
        var target = url.path.isEmpty ? "/" : url.path
        if let query = url.query { target += "?" + query }
        var request = "GET \(target) HTTP/1.1\r\nHost: \(host)\(url.port.map { ":\($0)" } ?? "")\r\n"
            + "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: \(key)\r\n"
        if !subprotocols.isEmpty { request += "Sec-WebSocket-Protocol: \(subprotocols.joined(separator: ", "))\r\n" }
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) where !Self.unsafe(name) && !Self.unsafe(value) {
            request += "\(name): \(value)\r\n"
        }
        let requestBytes = Array((request + "\r\n").utf8)
        enqueue { $0.write(requestBytes) }

        var buffer: [UInt8] = []
        var headEnd: Int?
        while headEnd == nil {
            guard let chunk = socket.read(), !chunk.isEmpty, buffer.count + chunk.count < 65_536 else { return }
            buffer += chunk
            headEnd = Self.endOfHead(buffer)
        }
        let head = String(decoding: buffer[..<headEnd!], as: UTF8.self)
        var rest = Array(buffer[(headEnd! + 4)...])
        let lines = head.components(separatedBy: "\r\n")
        let status = lines.first.flatMap { line in line.split(separator: " ").dropFirst().first.flatMap { Int($0) } } ?? 0
        var fields: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        guard status == 101 else {
            // A refusal: read its body (the server closes the connection after it) for its JSON error.
            let length = fields["content-length"].flatMap { Int($0) } ?? 0
            while rest.count < min(length, 65_536), let chunk = socket.read(), !chunk.isEmpty { rest += chunk }
            continuation.yield(.refused(status: status, body: Data(rest.prefix(length))))
            return
        }
        guard fields["upgrade"]?.lowercased() == "websocket", fields["sec-websocket-accept"] == Handshake.acceptKey(for: key) else {
            return
        }
        continuation.yield(.opened)

        // The frames.
        var reader = FrameReader(role: .client, maxMessageBytes: options.maxMessageBytes)
        var pending = rest
        while true {
            var ended = false
            do {
                try reader.read(pending) { event in
                    switch event {
                    case .text(let bytes):
                        continuation.yield(.text(String(decoding: bytes, as: UTF8.self)))
                    case .ping(let payload):
                        let pong = FrameEncoder.frame(.pong, payload: payload, maskingKey: Self.maskingKey())
                        enqueue(unlessClosing: true) { $0.write(pong) }
                    case .close(let closeCode, let closeReason):
                        code = Int(closeCode?.rawValue ?? 1005)
                        reason = closeReason
                        lock.lock()
                        let echo = !closeSent
                        closeSent = true
                        lock.unlock()
                        if echo {
                            let payload = closeCode.map { FrameEncoder.closePayload($0) } ?? []
                            let frame = FrameEncoder.frame(.close, payload: payload, maskingKey: Self.maskingKey())
                            enqueue { $0.write(frame) }
                        }
                        ended = true
                    case .binary, .pong:
                        break
                    }
                }
            } catch {
                return  // a protocol error from the server: the connection is over (1006 to the client)
            }
            if ended { return }
            guard let chunk = socket.read(), !chunk.isEmpty else { return }
            pending = chunk
        }
    }

    private func finish(code: Int, reason: String) {
        lock.lock()
        let first = !finished
        finished = true
        if let stream {
            writes.async { stream.close() }  // after whatever the queue still holds for this stream
        }
        stream = nil
        lock.unlock()
        if first {
            continuation.yield(.closed(code: code, reason: reason))
            continuation.finish()
        }
    }

    /// A connected TCP socket to `host`:`port`, or nil. Connecting is bounded by SO_SNDTIMEO (10 s).
    private static func open(host: String, port: Int) -> Int32? {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &list) == 0, let first = list else { return nil }
        defer { freeaddrinfo(list) }
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let info = entry {
            let fd = socket(info.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            if fd >= 0 {
                var timeout = timeval(tv_sec: 10, tv_usec: 0)
                setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
                var on: Int32 = 1
                setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
                if Glibc.connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 { return fd }
                Glibc.close(fd)
            }
            entry = info.pointee.ai_next
        }
        return nil
    }

    private static func endOfHead(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 0...(bytes.count - 4)
        where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
            return index
        }
        return nil
    }

    /// A header name or value with CR, LF or NUL would split the request: never sent.
    private static func unsafe(_ text: String) -> Bool {
        text.utf8.contains { $0 == 13 || $0 == 10 || $0 == 0 }
    }
}
#endif
