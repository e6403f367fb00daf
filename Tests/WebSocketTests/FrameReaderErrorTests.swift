import Testing
@testable import WebSocket

/// Protocol violations and the close code each one must produce.
@Suite("FrameReader errors")
struct FrameReaderErrorTests {
    /// The close code `bytes` fail with, fed whole and one byte at a time
    /// (both must agree), or nil if neither fails.
    func failure(_ bytes: [UInt8], role: FrameReader.Role = .server, maxMessageBytes: Int = 1 << 20,
                 sourceLocation: SourceLocation = #_sourceLocation) -> CloseCode? {
        let whole = readFrames(bytes, role: role, maxMessageBytes: maxMessageBytes)
        let drip = readByteByByte(bytes, role: role, maxMessageBytes: maxMessageBytes)
        #expect(whole.error?.closeCode == drip.error?.closeCode, sourceLocation: sourceLocation)
        #expect(whole.events == drip.events, sourceLocation: sourceLocation)
        return whole.error?.closeCode
    }

    @Test("an unmasked frame to a server is a protocol error")
    func unmaskedToServer() {
        #expect(failure(serverFrame(.text, utf8("Hello")), role: .server) == .protocolError)
        #expect(failure(serverFrame(.ping, []), role: .server) == .protocolError)
    }

    @Test("a masked frame to a client is a protocol error")
    func maskedToClient() {
        #expect(failure(clientFrame(.text, utf8("Hello")), role: .client) == .protocolError)
        #expect(failure(clientFrame(.close, []), role: .client) == .protocolError)
    }

    @Test("RSV bits without an extension", arguments: [0x40, 0x20, 0x10, 0x70] as [UInt8])
    func reservedBits(_ bit: UInt8) {
        var frame = clientFrame(.text, utf8("Hello"))
        frame[0] |= bit
        #expect(failure(frame) == .protocolError)
    }

    @Test("reserved opcodes", arguments: [0x3, 0x4, 0x5, 0x6, 0x7, 0xB, 0xC, 0xD, 0xE, 0xF] as [UInt8])
    func reservedOpcodes(_ opcode: UInt8) {
        let frame: [UInt8] = [0x80 | opcode, 0x80, 0x01, 0x02, 0x03, 0x04]
        #expect(failure(frame) == .protocolError)
        #expect(failure([opcode, 0x00], role: .client) == .protocolError)
    }

    @Test("control frame longer than 125 bytes fails as soon as its header is read")
    func longControlFrame() {
        for opcode in [Opcode.ping, .pong, .close] {
            let frame = clientFrame(opcode, Array(repeating: 0x41, count: 126))
            #expect(Array(frame[..<4]) == [0x80 | opcode.rawValue, 0x80 | 126, 0x00, 126])
            #expect(failure(Array(frame[..<8])) == .protocolError)  // header only
        }
    }

    @Test("fragmented control frame")
    func fragmentedControlFrame() {
        #expect(failure(clientFrame(.ping, utf8("a"), fin: false)) == .protocolError)
        #expect(failure(clientFrame(.close, [], fin: false)) == .protocolError)
    }

    @Test("continuation frame with no message in progress")
    func orphanContinuation() {
        #expect(failure(clientFrame(.continuation, utf8("lo"))) == .protocolError)
        let afterComplete = clientFrame(.text, utf8("Hel")) + clientFrame(.continuation, utf8("lo"))
        #expect(failure(afterComplete) == .protocolError)
        #expect(readFrames(afterComplete, role: .server).events == [.text(utf8("Hel"))])
    }

    @Test("a new data frame while a fragmented message is in progress")
    func newMessageInsideFragmented() {
        let start = clientFrame(.text, utf8("Hel"), fin: false)
        #expect(failure(start + clientFrame(.text, utf8("lo"))) == .protocolError)
        #expect(failure(start + clientFrame(.binary, [1])) == .protocolError)
        #expect(failure(clientFrame(.binary, [1], fin: false) + clientFrame(.text, utf8("x"), fin: false)) == .protocolError)
    }

    @Test("64-bit length with its top bit set")
    func topBitLength() {
        let header: [UInt8] = [0x82, 0xFF, 0x80, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4]
        #expect(failure(header, maxMessageBytes: Int.max) == .protocolError)
        #expect(failure([0x82, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF], role: .client, maxMessageBytes: Int.max) == .protocolError)
    }

    @Test("a message over maxMessageBytes fails with 1009 when only its header has arrived")
    func tooBigFromHeader() {
        let limit = 1000
        let frame = clientFrame(.binary, Array(repeating: 7, count: limit + 1))
        #expect(failure(Array(frame[..<8]), maxMessageBytes: limit) == .messageTooBig)  // 2 + 2 + 4 header bytes
        // A 64-bit length far beyond memory, nothing but the header.
        let huge: [UInt8] = [0x81, 0xFF, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 1, 2, 3, 4]
        #expect(failure(huge, maxMessageBytes: limit) == .messageTooBig)
        // Exactly at the limit is fine.
        let atLimit = clientFrame(.binary, Array(repeating: 7, count: limit))
        #expect(failure(atLimit, maxMessageBytes: limit) == nil)
    }

    @Test("the limit applies to the sum of the fragments")
    func tooBigAcrossFragments() {
        let limit = 100
        let first = clientFrame(.text, Array(repeating: 0x61, count: 60), fin: false)
        let ping = clientFrame(.ping, Array(repeating: 0x70, count: 100))  // control frames do not count
        let second = clientFrame(.continuation, Array(repeating: 0x62, count: 41))
        #expect(failure(first + ping + Array(second[..<6]), maxMessageBytes: limit) == .messageTooBig)
        let fits = clientFrame(.continuation, Array(repeating: 0x62, count: 40))
        let outcome = readFrames(first + ping + fits, role: .server, maxMessageBytes: limit)
        #expect(outcome.error == nil)
        #expect(outcome.events.count == 2)
        // The count starts again with the next message.
        #expect(failure(first + fits + first + fits, maxMessageBytes: limit) == nil)
    }

    @Test("invalid UTF-8 fails with 1007 before the final fragment arrives")
    func invalidUTF8FailsFast() {
        let bad = clientFrame(.text, utf8("Hello ") + [0xC0, 0x80] + utf8(" world"), fin: false)
        var reader = FrameReader(role: .server, maxMessageBytes: 1000)
        let outcome = feed(&reader, [bad])
        #expect(outcome.error?.closeCode == .invalidPayload)
        // Even inside one frame: the payload so far is enough.
        let frame = clientFrame(.text, utf8("abc") + [0xED, 0xA0, 0x80] + Array(repeating: 0x61, count: 50))
        #expect(failure(Array(frame[..<(6 + 5)])) == .invalidPayload)
        // A later fragment that breaks a sequence begun in an earlier one.
        let split = clientFrame(.text, [0x61, 0xE2, 0x82], fin: false) + clientFrame(.continuation, [0x41], fin: false)
        #expect(failure(split) == .invalidPayload)
    }

    @Test("text ending inside a UTF-8 sequence at FIN")
    func textEndsMidSequence() {
        #expect(failure(clientFrame(.text, [0x61, 0xE2, 0x82])) == .invalidPayload)
        let fragments = clientFrame(.text, [0xF0, 0x9F], fin: false) + clientFrame(.continuation, [0x98], fin: false)
        #expect(failure(fragments + clientFrame(.continuation, [])) == .invalidPayload)
        #expect(failure(fragments + clientFrame(.continuation, [0x80])) == nil)
        // Binary messages are not validated.
        #expect(failure(clientFrame(.binary, [0xC0, 0xFF, 0xE2])) == nil)
    }

    @Test("close frame with a 1-byte payload")
    func oneByteClose() {
        #expect(failure(clientFrame(.close, [0x03])) == .protocolError)
    }

    @Test("close codes that may not appear on the wire",
          arguments: [0, 999, 1004, 1005, 1006, 1015, 1016, 2000, 2999, 5000, 65535] as [UInt16])
    func invalidCloseCodes(_ code: UInt16) {
        #expect(failure(clientFrame(.close, [UInt8(code >> 8), UInt8(code & 0xFF)])) == .protocolError)
        #expect(!CloseCode(code).isValidOnWire)
    }

    @Test("close reason that is not valid UTF-8")
    func invalidCloseReason() {
        #expect(failure(clientFrame(.close, [0x03, 0xE8, 0x61, 0xFF])) == .invalidPayload)
        #expect(failure(clientFrame(.close, [0x03, 0xE8, 0xE2, 0x82])) == .invalidPayload)
    }

    @Test("events before an error in the same read are still delivered")
    func eventsBeforeError() {
        let bytes = clientFrame(.ping, utf8("p")) + clientFrame(.text, utf8("ok")) + serverFrame(.text, utf8("bad"))
        let outcome = readFrames(bytes, role: .server)
        #expect(outcome.events == [.ping(utf8("p")), .text(utf8("ok"))])
        #expect(outcome.error?.closeCode == .protocolError)
    }
}
