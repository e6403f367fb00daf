import WebSocket

/// One event as a socket sends it: the server's WebSocket text frame (RFC 6455 §5.2; a server's frames carry
/// no mask, so every socket sends the very same bytes), the frame header followed by the event's JSON.
///
/// Made once per event, where the event is made, and shared by every socket it goes to: the bytes are an
/// array, so passing an `EventFrame` along copies none of them, and each socket appends them to its output
/// buffer as they are — no JSON, no `String` and no framing per socket.
public struct EventFrame: Sendable, Equatable {
    /// The whole frame: the header, then the JSON.
    public let bytes: [UInt8]
    /// Where the JSON starts in `bytes` (after the 2-, 4- or 10-byte header).
    public let jsonStart: Int

    /// The frame of a JSON text (an ephemeral event, or a logged one another process sent).
    public init(_ json: String) {
        var json = json
        let count = json.utf8.count
        self.init(payloadCount: count) { bytes in json.withUTF8 { bytes.append(contentsOf: $0) } }
    }

    /// A logged event's frame: `{"cursor":N,` and then the fields of `object`, a JSON object's text `{…}`.
    /// The JSON is `"{\"cursor\":\(cursor)," + object.dropFirst()`, written once with the header in front.
    public init(cursor: Int64, object: String) {
        var object = object
        let lead: StaticString = "{\"cursor\":"
        let digits = EventFrame.decimalCount(cursor)
        let fields = max(object.utf8.count - 1, 0)
        self.init(payloadCount: lead.utf8CodeUnitCount + digits + 1 + fields) { bytes in
            lead.withUTF8Buffer { bytes.append(contentsOf: $0) }
            EventFrame.appendDecimal(cursor, digits: digits, to: &bytes)
            bytes.append(UInt8(ascii: ","))
            object.withUTF8 { bytes.append(contentsOf: $0.dropFirst()) }
        }
    }

    /// A logged event's frame from the event's JSON object as UTF-8 bytes (what the core makes: no `String`
    /// on the way): the same bytes as `init(cursor:object:)` with that text.
    public init(cursor: Int64, object: [UInt8]) {
        let lead: StaticString = "{\"cursor\":"
        let digits = EventFrame.decimalCount(cursor)
        let fields = max(object.count - 1, 0)
        self.init(payloadCount: lead.utf8CodeUnitCount + digits + 1 + fields) { bytes in
            lead.withUTF8Buffer { bytes.append(contentsOf: $0) }
            EventFrame.appendDecimal(cursor, digits: digits, to: &bytes)
            bytes.append(UInt8(ascii: ","))
            bytes.append(contentsOf: object.dropFirst())
        }
    }

    /// The header for `payloadCount` bytes, then what `write` appends (exactly that many), in one allocation.
    private init(payloadCount: Int, write: (inout [UInt8]) -> Void) {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(FrameEncoder.headerSize(payloadCount: payloadCount, masked: false) + payloadCount)
        FrameEncoder.appendHeader(.text, payloadCount: payloadCount, to: &bytes)
        jsonStart = bytes.count
        write(&bytes)
        assert(bytes.count == jsonStart + payloadCount, "the payload's length was announced wrong")
        self.bytes = bytes
    }

    /// The event's JSON (for a broker that sends it to other processes, and for tests).
    public var json: String { String(decoding: bytes[jsonStart...], as: UTF8.self) }

    /// Characters of `value` in decimal, its sign included.
    static func decimalCount(_ value: Int64) -> Int {
        var magnitude = value.magnitude
        var count = value < 0 ? 2 : 1
        while magnitude >= 10 {
            magnitude /= 10
            count += 1
        }
        return count
    }

    /// `value` in decimal (`digits` characters, from `decimalCount`).
    static func appendDecimal(_ value: Int64, digits: Int, to bytes: inout [UInt8]) {
        let start = bytes.count
        bytes.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: digits))
        if value < 0 { bytes[start] = UInt8(ascii: "-") }
        var magnitude = value.magnitude
        var at = start + digits - 1
        repeat {
            bytes[at] = UInt8(ascii: "0") + UInt8(magnitude % 10)
            magnitude /= 10
            at -= 1
        } while magnitude > 0
    }
}
