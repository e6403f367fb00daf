import CTLS
import EventLoop

/// One TLS connection as a state machine over memory: ciphertext from the peer goes in through `receive`,
/// plaintext for the owner comes out of it; plaintext from the owner goes in through `send`; what must go to
/// the peer (handshake records, encrypted data, alerts, tickets) collects in the output until `drainOutput`.
/// No socket and no blocking: the loop feeds it what it read and writes what it drains (`StreamTransform`);
/// a test makes a client and a server talk by handing each one's output to the other.
///
/// OpenSSL's `SSL` reads from a memory BIO we write the peer's bytes into, and writes to a memory BIO we read
/// the peer's bytes from (`SSL_set_bio`), so it never touches a file descriptor.
public final class TLSSession: StreamTransform {
    private let ssl: OpaquePointer
    /// Ours to write the peer's bytes into; owned by `ssl`.
    private var incoming: OpaquePointer
    /// Ours to read the bytes for the peer from; owned by `ssl`.
    private var outgoing: OpaquePointer
    /// A memory BIO keeps the largest size it ever grew to; once empty and larger than this it is replaced,
    /// so an idle socket does not hold the buffer of its largest message (per-socket memory).
    public static let keptBufferBytes = 4096
    public let context: TLSContext
    /// Plaintext sent before the handshake finished, written once it has.
    private var held: [UInt8] = []
    public private(set) var isReady = false
    /// A fatal error happened: nothing more goes in or out (an alert may still be in the output).
    public private(set) var failed: TLSError?
    public private(set) var peerClosed = false
    private var finished = false

    /// A session for one connection; a client one names the server it expects (`serverName`, SNI) and may
    /// resume an earlier session.
    public init(context: TLSContext, serverName: String? = nil, resuming saved: TLSSavedSession? = nil) throws {
        ERR_clear_error()
        guard let ssl = SSL_new(context.raw) else { throw TLSError("SSL_new") }
        guard let incoming = BIO_new(BIO_s_mem()), let outgoing = BIO_new(BIO_s_mem()) else {
            SSL_free(ssl)
            throw TLSError("BIO_new")
        }
        // An empty memory BIO means "nothing yet" (retry), not end of stream.
        _ = spotter_tls_set_eof_return(incoming, -1)
        _ = spotter_tls_set_eof_return(outgoing, -1)
        SSL_set_bio(ssl, incoming, outgoing)
        self.ssl = ssl
        self.incoming = incoming
        self.outgoing = outgoing
        self.context = context
        if context.isServer {
            SSL_set_accept_state(ssl)
        } else {
            SSL_set_connect_state(ssl)
            if let serverName {
                _ = spotter_tls_set_host(ssl, serverName)
                _ = SSL_set1_host(ssl, serverName)
            }
            if let saved { _ = SSL_set_session(ssl, saved.raw) }
        }
    }

    deinit {
        // A session that ended without an error stays resumable even if no close_notify went either way
        // (OpenSSL would otherwise mark it spoiled as it frees the connection).
        if isReady, failed == nil { SSL_set_shutdown(ssl, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN) }
        SSL_free(ssl)
    }

    /// A client starts the handshake (its ClientHello goes into the output). A server waits for the peer.
    public func start() throws {
        guard !context.isServer, !isReady else { return }
        try handshake()
    }

    public func receive(_ bytes: UnsafeRawBufferPointer, deliver: (UnsafeRawBufferPointer) -> Void) throws -> Bool {
        if let failed { throw failed }
        guard !peerClosed else { return true }
        if bytes.count > 0 {
            let written = BIO_write(incoming, bytes.baseAddress, Int32(clamping: bytes.count))
            guard written == Int32(clamping: bytes.count) else { throw fail("BIO_write") }
        }
        if !isReady {
            try handshake()
            guard isReady else { return false }
        }
        // Everything decrypted now goes to the owner: a pause of the owner's reading stops the socket, not
        // this, so nothing may stay inside OpenSSL waiting for a read that will not come.
        try withUnsafeTemporaryAllocation(byteCount: 16 * 1024, alignment: 16) { buffer in
            while true {
                ERR_clear_error()
                let count = SSL_read(ssl, buffer.baseAddress, Int32(buffer.count))
                if count > 0 {
                    deliver(UnsafeRawBufferPointer(start: buffer.baseAddress, count: Int(count)))
                    continue
                }
                switch SSL_get_error(ssl, count) {
                case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
                    shrinkIncoming()
                    return
                case SSL_ERROR_ZERO_RETURN:
                    peerClosed = true
                    return
                default:
                    throw fail("reading")
                }
            }
        }
        return peerClosed
    }

    public func send(_ bytes: UnsafeRawBufferPointer) throws {
        if let failed { throw failed }
        guard !finished, bytes.count > 0 else { return }
        guard isReady else {
            held.append(contentsOf: bytes)
            if !context.isServer { try handshake() }
            return
        }
        try write(bytes)
    }

    private func write(_ bytes: UnsafeRawBufferPointer) throws {
        var offset = 0
        while offset < bytes.count {
            ERR_clear_error()
            let count = SSL_write(ssl, bytes.baseAddress! + offset, Int32(clamping: bytes.count - offset))
            guard count > 0 else { throw fail("writing") }  // a memory BIO always has room: anything else is fatal
            offset += Int(count)
        }
    }

    public func finish() {
        guard !finished, failed == nil else { return }
        finished = true
        ERR_clear_error()
        if isReady { _ = SSL_shutdown(ssl) }  // close_notify into the output
    }

    public func drainOutput(into output: inout [UInt8]) {
        let pending = Int(spotter_tls_pending_out(outgoing))
        guard pending > 0 else { return }
        let start = output.count
        output.append(contentsOf: repeatElement(0, count: pending))
        let read = output.withUnsafeMutableBytes { BIO_read(outgoing, $0.baseAddress! + start, Int32(pending)) }
        output.removeLast(pending - max(0, Int(read)))
        if spotter_tls_pending_out(outgoing) == 0, spotter_tls_bio_capacity(outgoing) > Self.keptBufferBytes,
           let fresh = Self.memoryBIO() {
            SSL_set0_wbio(ssl, fresh)  // frees the grown one
            outgoing = fresh
        }
    }

    private func shrinkIncoming() {
        guard spotter_tls_pending_out(incoming) == 0, spotter_tls_bio_capacity(incoming) > Self.keptBufferBytes,
              let fresh = Self.memoryBIO() else { return }
        SSL_set0_rbio(ssl, fresh)
        incoming = fresh
    }

    private static func memoryBIO() -> OpaquePointer? {
        guard let bio = BIO_new(BIO_s_mem()) else { return nil }
        _ = spotter_tls_set_eof_return(bio, -1)  // empty means "nothing yet", not end of stream
        return bio
    }

    /// The output as a new array (tests).
    public func takeOutput() -> [UInt8] {
        var output: [UInt8] = []
        drainOutput(into: &output)
        return output
    }

    private func handshake() throws {
        ERR_clear_error()
        let status = SSL_do_handshake(ssl)
        if status == 1 {
            isReady = true
            if !held.isEmpty {
                let pending = held
                held = []
                try pending.withUnsafeBytes { try write($0) }
            }
            return
        }
        switch SSL_get_error(ssl, status) {
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE: return
        default: throw fail("handshake")
        }
    }

    private func fail(_ what: String) -> TLSError {
        let error = TLSError("TLS \(what) failed")
        failed = error
        return error
    }

    // MARK: - What was agreed

    /// "TLSv1.3", "TLSv1.2".
    public var protocolVersion: String { String(cString: SSL_get_version(ssl)) }

    public var cipher: String {
        guard let cipher = SSL_get_current_cipher(ssl) else { return "" }
        return String(cString: SSL_CIPHER_get_name(cipher))
    }

    /// The protocol agreed by ALPN, nil when none was.
    public var alpn: String? {
        var data: UnsafePointer<UInt8>?
        var length: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &data, &length)
        guard let data, length > 0 else { return nil }
        return String(decoding: UnsafeBufferPointer(start: data, count: Int(length)), as: UTF8.self)
    }

    /// Bytes the two memory BIOs hold allocated (tests: an idle session keeps at most `keptBufferBytes` each).
    public var bufferCapacity: Int { Int(spotter_tls_bio_capacity(incoming) + spotter_tls_bio_capacity(outgoing)) }

    public var sessionReused: Bool { SSL_session_reused(ssl) == 1 }

    /// The peer certificate's serial number (hex) and subject (one line), nil without one.
    public var peerCertificate: (serial: String, subject: String)? {
        guard let certificate = SSL_get1_peer_certificate(ssl) else { return nil }
        defer { X509_free(certificate) }
        var subject = "?"
        if let name = X509_get_subject_name(certificate), let line = X509_NAME_oneline(name, nil, 0) {
            subject = String(cString: line)
            CRYPTO_free(line, #file, #line)
        }
        var serial = "?"
        if let integer = X509_get_serialNumber(certificate), let number = ASN1_INTEGER_to_BN(integer, nil) {
            if let hex = BN_bn2hex(number) {
                serial = String(cString: hex)
                CRYPTO_free(hex, #file, #line)
            }
            BN_free(number)
        }
        return (serial, subject)
    }

    /// The session to resume on a next connection (a client's, once the server's ticket has been read).
    public func savedSession() -> TLSSavedSession? {
        guard let raw = SSL_get1_session(ssl) else { return nil }
        return TLSSavedSession(raw: raw)
    }
}

/// An `SSL_SESSION` kept for resumption.
public final class TLSSavedSession: @unchecked Sendable {
    let raw: OpaquePointer
    init(raw: OpaquePointer) { self.raw = raw }
    public var isResumable: Bool { SSL_SESSION_is_resumable(raw) == 1 }
    deinit { SSL_SESSION_free(raw) }
}
