import Testing
@testable import WebSocket

@Suite("WebSocketSession.ActionBuffer")
struct ActionBufferTests {
    @Test("collect returns the session's actions in order; the buffer given back is reused empty")
    func collectsAndReuses() {
        var session = WebSocketSession(role: .server, maxMessageBytes: 1 << 16)
        var buffer = WebSocketSession.ActionBuffer()
        let frames = clientFrame(.ping, utf8("p")) + clientFrame(.text, utf8("hi"))
        let actions = frames.withUnsafeBytes { buffer.collect($0, through: &session) }
        #expect(actions == [.send(serverFrame(.pong, utf8("p"))), .deliver(.text(utf8("hi")))])
        let capacity = actions.capacity
        buffer.giveBack(actions)
        let again = buffer.take()
        #expect(again.isEmpty)
        #expect(again.capacity == capacity)
    }

    @Test("a buffer with more room than keptCapacity is dropped when given back")
    func dropsLargeBuffers() {
        var buffer = WebSocketSession.ActionBuffer(keptCapacity: 16)
        var large = buffer.take()
        large.reserveCapacity(256)
        buffer.giveBack(large)
        #expect(buffer.take().capacity < 256)
        var small = buffer.take()
        small.reserveCapacity(2)
        let kept = small.capacity
        buffer.giveBack(small)
        #expect(buffer.take().capacity == kept)
    }

    @Test("a take while the buffer is out gets a fresh array")
    func nestedTake() {
        var buffer = WebSocketSession.ActionBuffer()
        var outer = buffer.take()
        outer.append(.receivedPong)
        #expect(buffer.take().isEmpty)
        buffer.giveBack(outer)
        #expect(buffer.take().isEmpty)
    }
}
