import SpotterProtocol
import WebSocket

/// A success reply written straight into the socket's output buffer: the frame header, then
/// `{"type":"reply","id":…,"ok":true,"result":…}` piece by piece, the result's JSON copied once. Before, the
/// reply was first built as a `String` (`Reply.ok`, an interpolation that grew its storage as it went) and
/// then framed; the bytes are the same (a test compares the two over random ids and results).
extension AppSocket {
    /// `send(Reply.ok(id: id, resultJSON: resultJSON))`, without the `String`.
    func sendOK(id: String?, resultJSON: String) {
        guard let connection else { return }
        connection.sendText { Self.appendOKFrame(id: id, resultJSON: resultJSON, to: &$0) }
    }

    /// The frame of `Reply.ok(id:resultJSON:)`, appended to `buffer`.
    static func appendOKFrame(id: String?, resultJSON: String, to buffer: inout [UInt8]) {
        let head: StaticString = "{\"type\":\"reply\",\"id\":"
        let middle: StaticString = ",\"ok\":true,\"result\":"
        var idJSON = id.map(JSONText.string) ?? "null"
        var result = resultJSON
        let count = head.utf8CodeUnitCount + idJSON.utf8.count + middle.utf8CodeUnitCount + result.utf8.count + 1
        let needed = buffer.count + FrameEncoder.headerSize(payloadCount: count, masked: false) + count
        // Geometric growth, as `FrameEncoder.append` does: a backlog is not copied on every reply.
        if buffer.capacity < needed { buffer.reserveCapacity(max(needed, buffer.capacity * 2)) }
        FrameEncoder.appendHeader(.text, payloadCount: count, to: &buffer)
        head.withUTF8Buffer { buffer.append(contentsOf: $0) }
        idJSON.withUTF8 { buffer.append(contentsOf: $0) }
        middle.withUTF8Buffer { buffer.append(contentsOf: $0) }
        result.withUTF8 { buffer.append(contentsOf: $0) }
        buffer.append(UInt8(ascii: "}"))
    }
}
