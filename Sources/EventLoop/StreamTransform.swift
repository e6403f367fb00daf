/// A layer between a `TCPConnection`'s socket and its owner's bytes (TLS): what the peer sends goes through
/// `receive` before `onRead` sees it, and what the owner sends goes through `send` before it is queued.
/// The layer keeps its own output (ciphertext, alerts, handshake records); the connection drains it into its
/// outbound buffer after each call. Loop thread only; nothing here may block.
public protocol StreamTransform: AnyObject {
    /// The layer carries the owner's bytes (the handshake is over). Until then nothing reaches `onRead`.
    var isReady: Bool { get }
    /// Takes bytes from the socket; calls `deliver` with the owner's bytes they carry (valid during the call,
    /// maybe several times). Returns true once the peer has closed its side cleanly. Throws when the stream
    /// cannot go on (the output may then hold an alert for the peer).
    func receive(_ bytes: UnsafeRawBufferPointer, deliver: (UnsafeRawBufferPointer) -> Void) throws -> Bool
    /// Takes the owner's bytes to send (held until the handshake is over if it is not).
    func send(_ bytes: UnsafeRawBufferPointer) throws
    /// The owner is done sending: a clean close for the peer goes into the output.
    func finish()
    /// Appends the bytes waiting for the socket to `output`.
    func drainOutput(into output: inout [UInt8])
}
