/// RFC 6455 §5.2 opcodes.
public enum Opcode: UInt8, Sendable {
    case continuation = 0x0
    case text = 0x1
    case binary = 0x2
    case close = 0x8
    case ping = 0x9
    case pong = 0xA

    public var isControl: Bool { rawValue & 0x8 != 0 }
}

/// Close status codes (RFC 6455 §7.4) that Spotter sends or checks.
public struct CloseCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    public init(_ rawValue: UInt16) { self.rawValue = rawValue }

    public static let normal = CloseCode(1000)
    public static let goingAway = CloseCode(1001)
    public static let protocolError = CloseCode(1002)
    public static let unsupportedData = CloseCode(1003)
    /// Never sent on the wire: a close frame without a status code.
    public static let noStatus = CloseCode(1005)
    /// Never sent on the wire: the connection dropped without a close frame.
    public static let abnormal = CloseCode(1006)
    public static let invalidPayload = CloseCode(1007)
    public static let policyViolation = CloseCode(1008)
    public static let messageTooBig = CloseCode(1009)
    public static let internalError = CloseCode(1011)
    public static let tryAgainLater = CloseCode(1013)

    /// Whether a peer may send this code in a close frame. 1005, 1006 and
    /// 1015 are reserved for local use, 1004 and 1016–2999 are unassigned or
    /// reserved for extensions; 3000–4999 belong to libraries and apps.
    public var isValidOnWire: Bool {
        switch rawValue {
        case 1000...1003, 1007...1014, 3000...4999: return true
        default: return false
        }
    }

    public var description: String { String(rawValue) }
}

/// Writes RFC 6455 frames. Server frames are unmasked; client frames carry
/// a masking key (§5.3), which the caller supplies so this stays pure.
public enum FrameEncoder {
    /// Bytes of header a frame with `payloadCount` bytes needs.
    public static func headerSize(payloadCount: Int, masked: Bool) -> Int {
        let base = payloadCount < 126 ? 2 : (payloadCount <= 0xFFFF ? 4 : 10)
        return base + (masked ? 4 : 0)
    }

    /// Appends one frame to `buffer`.
    public static func append(
        _ opcode: Opcode,
        payload: UnsafeRawBufferPointer,
        fin: Bool = true,
        maskingKey: UInt32? = nil,
        to buffer: inout [UInt8]
    ) {
        let count = payload.count
        // Grow geometrically: reserving exactly what this frame needs would copy a large backlog on every append.
        let needed = buffer.count + headerSize(payloadCount: count, masked: maskingKey != nil) + count
        if buffer.capacity < needed { buffer.reserveCapacity(max(needed, buffer.capacity * 2)) }
        appendHeader(opcode, payloadCount: count, fin: fin, masked: maskingKey != nil, to: &buffer)
        guard let key = maskingKey else {
            buffer.append(contentsOf: payload)
            return
        }
        withUnsafeBytes(of: key.bigEndian) { buffer.append(contentsOf: $0) }
        let start = buffer.count
        buffer.append(contentsOf: payload)
        buffer.withUnsafeMutableBytes { _ = applyMask(key, offset: 0, to: UnsafeMutableRawBufferPointer(rebasing: $0[start...])) }
    }

    /// Appends a frame's header (without the masking key) for a payload of `payloadCount` bytes.
    public static func appendHeader(
        _ opcode: Opcode, payloadCount count: Int, fin: Bool = true, masked: Bool = false, to buffer: inout [UInt8]
    ) {
        buffer.append((fin ? 0x80 : 0) | opcode.rawValue)
        let maskBit: UInt8 = masked ? 0x80 : 0
        if count < 126 {
            buffer.append(maskBit | UInt8(count))
        } else if count <= 0xFFFF {
            buffer.append(maskBit | 126)
            buffer.append(UInt8(count >> 8))
            buffer.append(UInt8(count & 0xFF))
        } else {
            buffer.append(maskBit | 127)
            for shift in stride(from: 56, through: 0, by: -8) {
                buffer.append(UInt8((UInt64(count) >> UInt64(shift)) & 0xFF))
            }
        }
    }

    public static func append(
        _ opcode: Opcode,
        payload: [UInt8],
        fin: Bool = true,
        maskingKey: UInt32? = nil,
        to buffer: inout [UInt8]
    ) {
        payload.withUnsafeBytes { append(opcode, payload: $0, fin: fin, maskingKey: maskingKey, to: &buffer) }
    }

    /// One complete frame as a new array.
    public static func frame(
        _ opcode: Opcode, payload: [UInt8], fin: Bool = true, maskingKey: UInt32? = nil
    ) -> [UInt8] {
        var out: [UInt8] = []
        append(opcode, payload: payload, fin: fin, maskingKey: maskingKey, to: &out)
        return out
    }

    /// The payload of a close frame: the code in network order, then the
    /// reason, cut so that the payload stays within the 125-byte control
    /// frame limit without splitting a UTF-8 sequence.
    public static func closePayload(_ code: CloseCode, reason: String = "") -> [UInt8] {
        var payload: [UInt8] = [UInt8(code.rawValue >> 8), UInt8(code.rawValue & 0xFF)]
        var utf8 = Array(reason.utf8)
        if utf8.count > 123 {
            var end = 123
            while end > 0 && utf8[end] & 0xC0 == 0x80 { end -= 1 }
            utf8 = Array(utf8[..<end])
        }
        payload.append(contentsOf: utf8)
        return payload
    }
}

/// Applies (or removes: XOR is its own inverse) a masking key to `bytes`,
/// starting at `offset` into the key. Returns the offset for the next piece.
@inline(__always)
func applyMask(_ key: UInt32, offset: Int, to bytes: UnsafeMutableRawBufferPointer) -> Int {
    guard let base = bytes.baseAddress, bytes.count > 0 else { return offset }
    // The key in wire order, rotated so that byte 0 lines up with `offset`.
    let k0 = key.bigEndian
    let shift = UInt32((offset & 3) * 8)
    let rotated = shift == 0 ? k0 : (k0 >> shift) | (k0 << (32 - shift))
    let wide = UInt64(rotated) | (UInt64(rotated) << 32)
    var index = 0
    let count = bytes.count
    while index + 8 <= count {
        let word = base.loadUnaligned(fromByteOffset: index, as: UInt64.self)
        base.storeBytes(of: word ^ wide, toByteOffset: index, as: UInt64.self)
        index += 8
    }
    withUnsafeBytes(of: rotated) { keyBytes in
        while index < count {
            let byte = base.load(fromByteOffset: index, as: UInt8.self)
            base.storeBytes(of: byte ^ keyBytes[index & 3], toByteOffset: index, as: UInt8.self)
            index += 1
        }
    }
    return (offset + count) & 3
}
