/// A violation of RFC 6455 by the peer, with the close code to answer it.
public struct WebSocketError: Error, Equatable, Sendable, CustomStringConvertible {
    public var closeCode: CloseCode
    public var reason: String
    public init(_ closeCode: CloseCode, _ reason: String) {
        self.closeCode = closeCode
        self.reason = reason
    }
    public var description: String { "\(closeCode.rawValue): \(reason)" }
}

/// What the reader found in the byte stream: whole messages and control frames.
public enum WebSocketEvent: Equatable, Sendable {
    /// A complete text message; its bytes are valid UTF-8.
    case text([UInt8])
    case binary([UInt8])
    case ping([UInt8])
    case pong([UInt8])
    /// A close frame. `code` is nil when the frame carried no status code.
    case close(code: CloseCode?, reason: String)
}

/// Turns raw bytes from a socket into WebSocket messages (RFC 6455 §5).
///
/// Incremental: the bytes may be split anywhere, one byte per call
/// included. Fragmented messages are reassembled, with control frames
/// allowed between fragments. Every limit is checked as soon as a frame
/// header is complete, before any payload is buffered: a message larger
/// than `maxMessageBytes` fails with 1009 while its first oversized header
/// is read. Text is validated as it arrives, so invalid UTF-8 fails with
/// 1007 at the first bad byte rather than at the end of the message.
///
/// The reader stops at the first close frame or error; later bytes are ignored.
public struct FrameReader: Sendable {
    public enum Role: Sendable {
        /// Reads client frames: they must be masked (§5.1).
        case server
        /// Reads server frames: they must not be masked.
        case client
    }

    public let role: Role
    /// Largest message (sum of its fragments' payloads) accepted, in bytes.
    public let maxMessageBytes: Int

    // Header bytes carried over when a header straddles two reads. At most 14.
    private var spill: [UInt8] = []
    private var inFrame = false
    private var frameOpcode: Opcode = .continuation
    private var frameFin = false
    private var frameRemaining: UInt64 = 0
    private var maskKey: UInt32 = 0
    private var maskOffset = 0

    // The message being assembled from data frames.
    private var messageOpcode: Opcode?
    private var message: [UInt8] = []
    private var utf8 = UTF8Validator()
    // The control frame being read (≤ 125 bytes).
    private var control: [UInt8] = []
    private var stopped = false

    public init(role: Role, maxMessageBytes: Int) {
        self.role = role
        self.maxMessageBytes = maxMessageBytes
    }

    /// Bytes held for a partial message or frame: what this connection costs while idle.
    public var bufferedBytes: Int { message.capacity + control.capacity + spill.capacity }

    /// Reads `bytes`, calling `emit` for every complete message or control frame.
    public mutating func read(
        _ bytes: UnsafeRawBufferPointer, _ emit: (WebSocketEvent) -> Void
    ) throws(WebSocketError) {
        guard let base = bytes.baseAddress else { return }
        var offset = 0
        let count = bytes.count
        while offset < count && !stopped {
            if !inFrame {
                guard let used = try readHeader(base + offset, count - offset) else { return }
                offset += used
                if frameRemaining == 0 { try finishFrame(emit) }
                continue
            }
            let take = Int(min(UInt64(count - offset), frameRemaining))
            try consumePayload(UnsafeRawBufferPointer(start: base + offset, count: take))
            offset += take
            frameRemaining -= UInt64(take)
            if frameRemaining == 0 { try finishFrame(emit) }
        }
    }

    public mutating func read(_ bytes: [UInt8], _ emit: (WebSocketEvent) -> Void) throws(WebSocketError) {
        // withUnsafeBytes cannot forward a typed throw, so carry the error out by hand.
        var failure: WebSocketError?
        bytes.withUnsafeBytes { raw in
            do throws(WebSocketError) { try read(raw, emit) } catch { failure = error }
        }
        if let failure { throw failure }
    }

    // MARK: - Header

    /// Parses a header from `spill` + the input. Returns input bytes used, or
    /// nil when the input ended first (the bytes are kept in `spill`).
    private mutating func readHeader(_ pointer: UnsafeRawPointer, _ available: Int) throws(WebSocketError) -> Int? {
        if spill.isEmpty {
            if let size = Self.headerSize(pointer, available) {
                try parseHeader(UnsafeRawBufferPointer(start: pointer, count: size))
                return size
            }
            spill.reserveCapacity(14)
            spill.append(contentsOf: UnsafeRawBufferPointer(start: pointer, count: available))
            return nil
        }
        let before = spill.count
        spill.append(contentsOf: UnsafeRawBufferPointer(start: pointer, count: min(available, 14 - before)))
        var failure: WebSocketError?
        let pending = spill  // parseHeader mutates self, so read a copy
        let size: Int? = pending.withUnsafeBytes { raw -> Int? in
            guard let size = Self.headerSize(raw.baseAddress!, raw.count) else { return nil }
            do throws(WebSocketError) { try parseHeader(UnsafeRawBufferPointer(rebasing: raw[..<size])) } catch { failure = error }
            return size
        }
        if let failure { throw failure }
        guard let size else { return nil }
        spill = []
        return size - before
    }

    /// The full header length if `available` bytes hold it, else nil.
    private static func headerSize(_ pointer: UnsafeRawPointer, _ available: Int) -> Int? {
        guard available >= 2 else { return nil }
        let second = pointer.load(fromByteOffset: 1, as: UInt8.self)
        var size = 2 + ((second & 0x80) != 0 ? 4 : 0)
        switch second & 0x7F {
        case 126: size += 2
        case 127: size += 8
        default: break
        }
        return available >= size ? size : nil
    }

    private mutating func parseHeader(_ header: UnsafeRawBufferPointer) throws(WebSocketError) {
        let first = header[0]
        let second = header[1]
        guard first & 0x70 == 0 else {
            throw WebSocketError(.protocolError, "reserved bits set without a negotiated extension")
        }
        guard let opcode = Opcode(rawValue: first & 0x0F) else {
            throw WebSocketError(.protocolError, "reserved opcode \(first & 0x0F)")
        }
        let fin = first & 0x80 != 0
        let masked = second & 0x80 != 0
        switch role {
        case .server where !masked: throw WebSocketError(.protocolError, "client frame not masked")
        case .client where masked: throw WebSocketError(.protocolError, "server frame masked")
        default: break
        }
        var index = 2
        var length = UInt64(second & 0x7F)
        if length == 126 {
            length = UInt64(header[2]) << 8 | UInt64(header[3])
            index = 4
        } else if length == 127 {
            length = 0
            for i in 2..<10 { length = length << 8 | UInt64(header[i]) }
            index = 10
            guard length >> 63 == 0 else { throw WebSocketError(.protocolError, "64-bit length with high bit set") }
        }
        if masked {
            maskKey = UInt32(header[index]) << 24 | UInt32(header[index + 1]) << 16
                | UInt32(header[index + 2]) << 8 | UInt32(header[index + 3])
        }
        try checkFrame(opcode, fin: fin, length: length)
        frameOpcode = opcode
        frameFin = fin
        frameRemaining = length
        maskOffset = 0
        inFrame = true
        if !masked { maskKey = 0 }
    }

    /// Every rule that can be decided from the header alone (§5.4, §5.5).
    private mutating func checkFrame(_ opcode: Opcode, fin: Bool, length: UInt64) throws(WebSocketError) {
        if opcode.isControl {
            guard fin else { throw WebSocketError(.protocolError, "fragmented control frame") }
            guard length <= 125 else { throw WebSocketError(.protocolError, "control frame longer than 125 bytes") }
            control = []
            control.reserveCapacity(Int(length))
            return
        }
        switch (opcode, messageOpcode) {
        case (.continuation, nil):
            throw WebSocketError(.protocolError, "continuation frame without a message in progress")
        case (.text, .some), (.binary, .some):
            throw WebSocketError(.protocolError, "new message before the previous one finished")
        case (.text, nil), (.binary, nil):
            messageOpcode = opcode
            utf8 = UTF8Validator()
        default:
            break
        }
        let total = UInt64(message.count) + length
        guard total <= UInt64(maxMessageBytes) else {
            throw WebSocketError(.messageTooBig, "message exceeds \(maxMessageBytes) bytes")
        }
        // Reserve for the first frame only, and at most 64 KiB: a declared
        // length is a claim, not data, and later fragments grow the buffer
        // geometrically through append.
        if message.isEmpty { message.reserveCapacity(Int(min(length, 65_536))) }
    }

    // MARK: - Payload

    private mutating func consumePayload(_ piece: UnsafeRawBufferPointer) throws(WebSocketError) {
        if frameOpcode.isControl {
            let start = control.count
            control.append(contentsOf: piece)
            maskOffset = Self.unmask(&control, from: start, key: maskKey, offset: maskOffset)
            return
        }
        let start = message.count
        message.append(contentsOf: piece)
        maskOffset = Self.unmask(&message, from: start, key: maskKey, offset: maskOffset)
        if messageOpcode == .text {
            var validator = utf8
            let valid = message.withUnsafeBytes { validator.validate(UnsafeRawBufferPointer(rebasing: $0[start...])) }
            utf8 = validator
            guard valid else { throw WebSocketError(.invalidPayload, "text message is not valid UTF-8") }
        }
    }

    /// Unmasks `buffer[start...]` in place; returns the key offset for the next piece.
    private static func unmask(_ buffer: inout [UInt8], from start: Int, key: UInt32, offset: Int) -> Int {
        guard key != 0, start < buffer.count else { return offset }
        return buffer.withUnsafeMutableBytes {
            applyMask(key, offset: offset, to: UnsafeMutableRawBufferPointer(rebasing: $0[start...]))
        }
    }

    private mutating func finishFrame(_ emit: (WebSocketEvent) -> Void) throws(WebSocketError) {
        inFrame = false
        switch frameOpcode {
        case .ping:
            emit(.ping(control))
        case .pong:
            emit(.pong(control))
        case .close:
            stopped = true
            emit(try Self.parseClose(control))
        case .text, .binary, .continuation:
            guard frameFin else { return }
            let opcode = messageOpcode
            let payload = message
            message = []
            messageOpcode = nil
            if opcode == .text {
                guard utf8.isComplete else {
                    throw WebSocketError(.invalidPayload, "text message ends inside a UTF-8 sequence")
                }
                emit(.text(payload))
            } else {
                emit(.binary(payload))
            }
        }
        if frameOpcode.isControl { control = [] }
    }

    /// §5.5.1: an optional 2-byte code, then an optional UTF-8 reason.
    static func parseClose(_ payload: [UInt8]) throws(WebSocketError) -> WebSocketEvent {
        if payload.isEmpty { return .close(code: nil, reason: "") }
        guard payload.count >= 2 else { throw WebSocketError(.protocolError, "close frame with a 1-byte payload") }
        let code = CloseCode(UInt16(payload[0]) << 8 | UInt16(payload[1]))
        guard code.isValidOnWire else { throw WebSocketError(.protocolError, "invalid close code \(code.rawValue)") }
        let reason = payload[2...]
        guard UTF8Validator.isValid(reason) else {
            throw WebSocketError(.invalidPayload, "close reason is not valid UTF-8")
        }
        return .close(code: code, reason: String(decoding: reason, as: UTF8.self))
    }
}
