import WebSocket

/// Frames made before they reach the socket: an event's, built once for every socket it goes to, and a
/// reply written in place. Both join the output buffer whole (the loop flushes it once per iteration).
extension Connection {
    /// Sends a complete frame made once for every socket it goes to (`EventFrame`): its bytes join the output
    /// buffer as they are. Returns false once the connection no longer accepts data (see `sendMessage`).
    @discardableResult
    func sendFrame(_ frame: [UInt8]) -> Bool {
        guard case .webSocket = phase else { return false }
        if let remote {
            remote.outbox.append(.frame(id: id, bytes: frame))  // the same bytes: the array is shared, not copied
            return true
        }
        tcp.send(frame)
        server.metrics.framesOut.increment()
        server.metrics.bytesOut.increment(by: frame.count)
        checkOutbound()
        return true
    }

    /// Sends one text frame that `write` appends to the output buffer whole (header and payload). Returns false
    /// once the connection no longer accepts data (see `sendMessage`).
    @discardableResult
    func sendText(_ write: (inout [UInt8]) -> Void) -> Bool {
        guard case .webSocket = phase else { return false }
        if let remote {
            var frame: [UInt8] = []
            write(&frame)
            remote.outbox.append(.frame(id: id, bytes: frame))
            return true
        }
        tcp.withOutbound { buffer in
            let before = buffer.count
            write(&buffer)
            server.metrics.bytesOut.increment(by: buffer.count - before)
        }
        server.metrics.framesOut.increment()
        checkOutbound()
        return true
    }
}
