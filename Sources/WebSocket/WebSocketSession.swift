/// The life of one WebSocket connection after the handshake, as a pure
/// state machine: bytes and requests go in, actions come out, and the
/// caller (a socket shell) carries them out in order.
///
/// It answers pings, runs the closing handshake of RFC 6455 §7 (echoing
/// the peer's status code, ignoring data after a close was sent), and turns
/// protocol violations into a close frame with the right code followed by
/// closing the TCP connection.
public struct WebSocketSession: Sendable {
    public enum State: Sendable, Equatable {
        case open
        /// We sent a close frame and wait for the peer's (§7.1.2).
        case waitingForPeerClose
        /// Both close frames exchanged, or the connection failed.
        case closed
    }

    public enum Action: Equatable, Sendable {
        /// A complete message for the application.
        case deliver(WebSocketEvent)
        /// Bytes to write to the socket, in order.
        case send([UInt8])
        /// A pong arrived: the peer is alive.
        case receivedPong
        /// Close the TCP connection once everything queued is written.
        /// `code` is what the connection ended with, for metrics and logs.
        case closeConnection(CloseCode)
    }

    public private(set) var state: State = .open
    private var reader: FrameReader
    private var maskGenerator: MaskGenerator?

    /// - Parameters:
    ///   - role: `.server` reads masked client frames and writes unmasked ones;
    ///     `.client` the reverse.
    ///   - maxMessageBytes: the largest message accepted; larger ones close with 1009.
    ///   - maskSeed: seeds the masking keys of a client; ignored for a server.
    public init(role: FrameReader.Role, maxMessageBytes: Int, maskSeed: UInt64 = 0x9E37_79B9_7F4A_7C15) {
        reader = FrameReader(role: role, maxMessageBytes: maxMessageBytes)
        if role == .client { maskGenerator = MaskGenerator(seed: maskSeed) }
    }

    public var bufferedBytes: Int { reader.bufferedBytes }

    /// Feeds bytes from the socket.
    public mutating func receive(_ bytes: UnsafeRawBufferPointer, _ act: (Action) -> Void) {
        guard state != .closed else { return }
        // The callback mutates the session, so lift the reader out while it
        // runs (a move, not a copy: the placeholder holds no buffers).
        var current = reader
        reader = FrameReader(role: current.role, maxMessageBytes: current.maxMessageBytes)
        defer { reader = current }
        do {
            try current.read(bytes) { event in handle(event, act) }
        } catch {
            fail(error, act)
        }
    }

    public mutating func receive(_ bytes: [UInt8], _ act: (Action) -> Void) {
        bytes.withUnsafeBytes { receive($0, act) }
    }

    private mutating func handle(_ event: WebSocketEvent, _ act: (Action) -> Void) {
        switch event {
        case .ping(let payload):
            if state == .open { act(.send(frame(.pong, payload))) }
        case .pong:
            act(.receivedPong)
        case .text, .binary:
            // §7.1.2: once we sent a close frame, further data is discarded.
            if state == .open { act(.deliver(event)) }
        case .close(let code, _):
            let wasOpen = state == .open
            state = .closed
            if wasOpen {
                // §5.5.1: echo the status code we received (none if none was sent).
                let payload = code.map { FrameEncoder.closePayload($0) } ?? []
                act(.send(frame(.close, payload)))
            }
            act(.closeConnection(code ?? .noStatus))
        }
    }

    /// §7.1.7 "Fail the WebSocket Connection": send a close frame with the
    /// code for the violation (unless one was already sent), then drop TCP.
    private mutating func fail(_ error: WebSocketError, _ act: (Action) -> Void) {
        if state == .open {
            act(.send(frame(.close, FrameEncoder.closePayload(error.closeCode, reason: error.reason))))
        }
        state = .closed
        act(.closeConnection(error.closeCode))
    }

    // MARK: - Requests from the application

    /// Starts the closing handshake. Returns the close frame to send, or nil
    /// if the connection is already closing.
    public mutating func close(_ code: CloseCode, reason: String = "") -> [UInt8]? {
        guard state == .open else { return nil }
        state = .waitingForPeerClose
        return frame(.close, FrameEncoder.closePayload(code, reason: reason))
    }

    /// Marks the connection closed without a handshake (the peer vanished,
    /// or the closing handshake timed out).
    public mutating func abandon() { state = .closed }

    /// Encodes a data or ping frame for this side of the connection; nil if
    /// the connection no longer accepts data.
    public mutating func encode(_ opcode: Opcode, _ payload: [UInt8]) -> [UInt8]? {
        guard state == .open else { return nil }
        return frame(opcode, payload)
    }

    /// Appends a frame to `buffer` without an intermediate array. Returns
    /// false if the connection no longer accepts data.
    public mutating func append(_ opcode: Opcode, _ payload: UnsafeRawBufferPointer, to buffer: inout [UInt8]) -> Bool {
        guard state == .open else { return false }
        FrameEncoder.append(opcode, payload: payload, maskingKey: maskGenerator?.next(), to: &buffer)
        return true
    }

    private mutating func frame(_ opcode: Opcode, _ payload: [UInt8]) -> [UInt8] {
        FrameEncoder.frame(opcode, payload: payload, maskingKey: maskGenerator?.next())
    }
}

/// Masking keys for a client (§5.3). A xorshift generator: unpredictable
/// enough for a load-test or test client, which is the only client here.
struct MaskGenerator: Sendable {
    private var state: UInt64
    init(seed: UInt64) { state = seed == 0 ? 0x2545_F491_4F6C_DD1D : seed }
    mutating func next() -> UInt32 {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return UInt32(truncatingIfNeeded: state >> 16) | 1  // never 0: a 0 key looks unmasked in logs
    }
}
