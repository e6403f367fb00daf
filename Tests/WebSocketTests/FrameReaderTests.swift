import Testing
@testable import WebSocket

/// RFC 6455 §5.7 examples byte for byte, and the reader's normal behaviour.
@Suite("FrameReader")
struct FrameReaderTests {
    static let hello = utf8("Hello")
    static let unmaskedHello: [UInt8] = [0x81, 0x05, 0x48, 0x65, 0x6C, 0x6C, 0x6F]
    static let maskedHello: [UInt8] = [0x81, 0x85, 0x37, 0xFA, 0x21, 0x3D, 0x7F, 0x9F, 0x4D, 0x51, 0x58]

    /// Reads `bytes` whole, one byte at a time and split at every point,
    /// and checks all three give `expected` without an error.
    func expectEvents(_ bytes: [UInt8], role: FrameReader.Role, _ expected: [WebSocketEvent],
                      sourceLocation: SourceLocation = #_sourceLocation) {
        let whole = readFrames(bytes, role: role)
        #expect(whole.error == nil, sourceLocation: sourceLocation)
        #expect(whole.events == expected, sourceLocation: sourceLocation)
        let byteByByte = readByteByByte(bytes, role: role)
        #expect(byteByByte.error == nil, sourceLocation: sourceLocation)
        #expect(byteByByte.events == expected, sourceLocation: sourceLocation)
        if bytes.count <= 300 {
            for cut in 1..<bytes.count {
                let split = readFrames(bytes, role: role, cuts: [cut])
                #expect(split.error == nil && split.events == expected, "cut \(cut)", sourceLocation: sourceLocation)
            }
        }
    }

    @Test("single-frame unmasked text, read by a client")
    func unmaskedText() {
        expectEvents(Self.unmaskedHello, role: .client, [.text(Self.hello)])
        #expect(serverFrame(.text, Self.hello) == Self.unmaskedHello)
    }

    @Test("single-frame masked text, read by a server")
    func maskedText() {
        expectEvents(Self.maskedHello, role: .server, [.text(Self.hello)])
        #expect(clientFrame(.text, Self.hello, key: 0x37FA_213D) == Self.maskedHello)
    }

    @Test("fragmented unmasked text")
    func fragmentedText() {
        let bytes: [UInt8] = [0x01, 0x03, 0x48, 0x65, 0x6C, 0x80, 0x02, 0x6C, 0x6F]
        expectEvents(bytes, role: .client, [.text(Self.hello)])
        // Nothing is delivered before the final fragment.
        #expect(readFrames(Array(bytes[..<5]), role: .client).events.isEmpty)
    }

    @Test("unmasked ping and masked pong")
    func pingAndPong() {
        expectEvents([0x89, 0x05, 0x48, 0x65, 0x6C, 0x6C, 0x6F], role: .client, [.ping(Self.hello)])
        let pong: [UInt8] = [0x8A, 0x85, 0x37, 0xFA, 0x21, 0x3D, 0x7F, 0x9F, 0x4D, 0x51, 0x58]
        expectEvents(pong, role: .server, [.pong(Self.hello)])
        #expect(clientFrame(.pong, Self.hello) == pong)
    }

    @Test("256-byte binary message with a 16-bit length")
    func binary16BitLength() {
        let payload = (0..<256).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let bytes: [UInt8] = [0x82, 0x7E, 0x01, 0x00] + payload
        expectEvents(bytes, role: .client, [.binary(payload)])
        #expect(serverFrame(.binary, payload) == bytes)
    }

    @Test("65536-byte binary message with a 64-bit length")
    func binary64BitLength() {
        let payload = (0..<65536).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) }
        let bytes: [UInt8] = [0x82, 0x7F, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00] + payload
        expectEvents(bytes, role: .client, [.binary(payload)])
        #expect(serverFrame(.binary, payload) == bytes)
        let masked = clientFrame(.binary, payload, key: 0xA1B2_C3D4)
        #expect(readFrames(masked, role: .server, cuts: [3, 14, 15, 20_001, 40_003]).events == [.binary(payload)])
    }

    @Test("length encodings at their boundaries", arguments: [0, 1, 125, 126, 127, 65535, 65536, 65537])
    func lengthBoundaries(_ count: Int) {
        let payload = (0..<count).map { UInt8(truncatingIfNeeded: $0) }
        let expectedHeader = count < 126 ? 2 : (count <= 0xFFFF ? 4 : 10)
        #expect(FrameEncoder.headerSize(payloadCount: count, masked: false) == expectedHeader)
        #expect(FrameEncoder.headerSize(payloadCount: count, masked: true) == expectedHeader + 4)
        let frame = clientFrame(.binary, payload, key: 0x0102_0304)
        #expect(frame.count == expectedHeader + 4 + count)
        #expect(readFrames(frame, role: .server, cuts: [1, expectedHeader + 1]).events == [.binary(payload)])
    }

    @Test("a zero masking key with the mask bit set is read as masked")
    func zeroMaskingKey() {
        let frame = clientFrame(.text, Self.hello, key: 0)
        #expect(frame[1] == 0x85)
        #expect(readFrames(frame, role: .server).events == [.text(Self.hello)])
    }

    @Test("control frames between fragments are delivered and the message still assembles")
    func interleavedControlFrames() {
        let text = utf8("مرحبا 😀 world")
        var bytes: [UInt8] = []
        bytes += clientFrame(.ping, utf8("p1"), key: 1)
        bytes += clientFrame(.text, Array(text[..<3]), fin: false, key: 0xDEAD_BEEF)  // cuts a letter in two
        bytes += clientFrame(.ping, utf8("p2"), key: 2)
        bytes += clientFrame(.continuation, Array(text[3..<9]), fin: false, key: 0x1234_5678)
        bytes += clientFrame(.pong, [], key: 3)
        bytes += clientFrame(.continuation, [], fin: false, key: 4)
        bytes += clientFrame(.ping, Array(repeating: 0x55, count: 125), key: 5)
        bytes += clientFrame(.continuation, Array(text[9...]), fin: true, key: 6)
        bytes += clientFrame(.binary, [1, 2, 3], key: 7)
        expectEvents(bytes, role: .server, [
            .ping(utf8("p1")), .ping(utf8("p2")), .pong([]), .ping(Array(repeating: 0x55, count: 125)),
            .text(text), .binary([1, 2, 3]),
        ])
    }

    @Test("several messages in one read come out in order")
    func severalMessages() {
        var bytes: [UInt8] = []
        for index in 0..<20 {
            bytes += clientFrame(index.isMultiple(of: 2) ? .text : .binary, utf8("message \(index)"), key: UInt32(index + 1))
        }
        let outcome = readFrames(bytes, role: .server)
        #expect(outcome.error == nil)
        #expect(outcome.events == (0..<20).map {
            $0.isMultiple(of: 2) ? .text(utf8("message \($0)")) : .binary(utf8("message \($0)"))
        })
    }

    @Test("close frames: empty payload, code only, code and reason")
    func closeFrames() {
        expectEvents(clientFrame(.close, []), role: .server, [.close(code: nil, reason: "")])
        expectEvents(clientFrame(.close, [0x03, 0xE8]), role: .server, [.close(code: .normal, reason: "")])
        expectEvents(serverFrame(.close, FrameEncoder.closePayload(.goingAway, reason: "وداعا")), role: .client,
                     [.close(code: .goingAway, reason: "وداعا")])
    }

    @Test("valid close codes are accepted", arguments: [1000, 1001, 1003, 1007, 1011, 3000, 4999] as [UInt16])
    func validCloseCodes(_ code: UInt16) {
        let outcome = readFrames(clientFrame(.close, FrameEncoder.closePayload(CloseCode(code), reason: "bye")), role: .server)
        #expect(outcome.error == nil)
        #expect(outcome.events == [.close(code: CloseCode(code), reason: "bye")])
    }

    @Test("bytes after a close frame are ignored, even invalid ones")
    func ignoresBytesAfterClose() {
        var reader = FrameReader(role: .server, maxMessageBytes: 1000)
        let first = clientFrame(.close, [0x03, 0xE8]) + clientFrame(.text, utf8("late")) + [0xFF, 0xFF]
        let outcome = feed(&reader, [first, serverFrame(.text, utf8("unmasked")), [0x70, 0x00]])
        #expect(outcome.error == nil)
        #expect(outcome.events == [.close(code: .normal, reason: "")])
    }

    @Test("buffered bytes: none while idle, bounded by 64 KiB for a merely announced frame")
    func bufferedBytes() {
        var reader = FrameReader(role: .server, maxMessageBytes: 10 << 20)
        #expect(reader.bufferedBytes == 0)
        // A 1 MiB binary frame, masked with a zero key so the payload is sent as is.
        let header: [UInt8] = [0x82, 0xFF, 0, 0, 0, 0, 0x00, 0x10, 0x00, 0x00, 0, 0, 0, 0]
        let payload = [UInt8](repeating: 0x5A, count: 1 << 20)
        var outcome = feed(&reader, [header])
        #expect(outcome.error == nil && outcome.events.isEmpty)
        #expect(reader.bufferedBytes > 0 && reader.bufferedBytes <= 70_000)
        outcome = feed(&reader, [payload, clientFrame(.ping, utf8("still there?"))])
        #expect(outcome.error == nil)
        #expect(outcome.events == [.binary(payload), .ping(utf8("still there?"))])
        #expect(reader.bufferedBytes == 0)
        // A header cut in two is held until it is complete.
        let frame = clientFrame(.text, Self.hello)
        outcome = feed(&reader, [Array(frame[..<3])])
        #expect(reader.bufferedBytes > 0 && reader.bufferedBytes < 64)
        outcome = feed(&reader, [Array(frame[3...])])
        #expect(outcome.events == [.text(Self.hello)])
        #expect(reader.bufferedBytes == 0)
    }

    @Test("close payload is cut to 125 bytes on a UTF-8 boundary")
    func closePayloadTruncation() {
        for prefix in 0..<4 {
            let reason = String(repeating: "x", count: prefix) + String(repeating: "😀", count: 40)
            let payload = FrameEncoder.closePayload(.normal, reason: reason)
            #expect(payload.count <= 125 && payload.count >= 122)
            #expect(Array(payload[..<2]) == [0x03, 0xE8])
            #expect(UTF8Validator.isValid(payload[2...]))
            #expect(reason.utf8.starts(with: payload[2...]))
            #expect(readFrames(clientFrame(.close, payload), role: .server).error == nil)
        }
        #expect(FrameEncoder.closePayload(.normal, reason: String(repeating: "a", count: 123)).count == 125)
    }
}
