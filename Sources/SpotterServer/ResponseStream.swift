import WebSocket

/// A response whose body is made a piece at a time off the loop and sent as HTTP chunks (`Connection+Streaming`):
/// an account export, which may be far larger than anything the server should hold in memory. Loop thread only.
///
/// The connection asks for the next piece only once the kernel has taken every byte of the previous one, so at
/// most one piece per stream is in memory, whatever the client's pace: a reader that stops reading stops the
/// reading of the store too (and is dropped at the idle timeout, which only the kernel taking bytes resets).
protocol ResponseStream: AnyObject {
    /// Status and headers; the body, if any, is not sent (`Transfer-Encoding: chunked` is added).
    var head: HTTPResponse { get }
    /// Makes the next piece (off the loop) and calls `deliver` with it on the loop: bytes (not empty), nil once the
    /// body is complete, or an error — the connection is then cut before the last chunk, so the client can tell
    /// the body is incomplete. Never called again before `deliver` ran.
    func next(_ deliver: @escaping (Result<[UInt8]?, any Error>) -> Void)
    /// Called once, on the loop, when the stream is over for any reason (complete, failed, the peer gone):
    /// release what it holds. A `next` may still be running; its `deliver` is then ignored.
    func finish()
}
