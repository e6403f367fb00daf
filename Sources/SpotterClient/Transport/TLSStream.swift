#if os(Linux)
import CTLS
import Foundation
import Glibc

/// Why TLS did not start (or broke): reported as close code 1015, "TLS handshake failure" (RFC 6455 §7.4.1).
struct TLSFailure: Error {
    var reason: String
}

/// TLS over a connected blocking socket, as a client: TLS 1.2 or newer, the server's chain verified against the
/// system's trust store (plus `TrustedCertificates`), the name in the URL checked against the certificate
/// (`X509_VERIFY_PARAM_set1_host`, or `set1_ip_asc` for an address) and sent as SNI. OpenSSL works on memory BIOs
/// under one lock (an SSL object is not to be used from two threads at once); the socket is read and written here,
/// with MSG_NOSIGNAL, outside OpenSSL.
final class TLSStream: SocketStream, @unchecked Sendable {
    private let fd: Int32
    private let context: OpaquePointer
    private let ssl: OpaquePointer
    private let input: OpaquePointer   // what came from the socket, for OpenSSL to read
    private let output: OpaquePointer  // what OpenSSL wrote, for the socket
    private let lock = NSLock()
    // Guarded by `lock`.
    private var closed = false
    /// The server's close_notify (or a bad record) was read: nothing more comes, even if TCP stays open.
    private var ended = false

    /// Sets up TLS on `fd` for `host` (nothing is sent until `handshake`).
    init(fd: Int32, host: String, trusting extra: TrustedCertificates?) throws(TLSFailure) {
        self.fd = fd
        guard let context = SSL_CTX_new(TLS_client_method()) else { throw Self.failure("SSL_CTX_new") }
        self.context = context
        guard spotter_tls_set_min_proto(context, spotter_tls1_2()) == 1, SSL_CTX_set_default_verify_paths(context) == 1 else {
            SSL_CTX_free(context)
            throw Self.failure("the system's trust store")
        }
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        if let extra {
            do throws(TLSFailure) { try Self.add(extra, to: context) } catch {
                SSL_CTX_free(context)
                throw error
            }
        }
        guard let ssl = SSL_new(context), let input = BIO_new(BIO_s_mem()), let output = BIO_new(BIO_s_mem()) else {
            SSL_CTX_free(context)
            throw Self.failure("SSL_new")
        }
        self.ssl = ssl
        self.input = input
        self.output = output
        SSL_set_bio(ssl, input, output)  // the SSL owns both BIOs now
        SSL_set_connect_state(ssl)
        let param = SSL_get0_param(ssl)
        X509_VERIFY_PARAM_set_hostflags(param, 0x4)  // X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS
        var address = in6_addr()
        if inet_pton(AF_INET, host, &address) == 1 || inet_pton(AF_INET6, host, &address) == 1 {
            // An address: checked against the certificate's IP names; no SNI for it (RFC 6066 §3).
            guard X509_VERIFY_PARAM_set1_ip_asc(param, host) == 1 else { throw Self.failure("bad address \(host)") }
        } else {
            guard X509_VERIFY_PARAM_set1_host(param, host, 0) == 1, spotter_tls_set_host(ssl, host) == 1 else {
                throw Self.failure("bad host name")
            }
        }
    }

    deinit {
        SSL_free(ssl)
        SSL_CTX_free(context)
    }

    /// Runs the handshake, bounded by `timeout` (a server that accepts TCP and never answers is given up).
    func handshake(timeout: Duration) throws(TLSFailure) {
        let deadline = ContinuousClock.now + timeout
        while true {
            lock.lock()
            ERR_clear_error()
            let result = SSL_connect(ssl)
            let error = SSL_get_error(ssl, result)
            let verify = SSL_get_verify_result(ssl)
            let detail = Self.errorText()
            let pending = takeOutput()
            lock.unlock()
            if !pending.isEmpty, !PlainStream.sendAll(fd, pending) { throw TLSFailure(reason: "the connection was closed during the TLS handshake") }
            if result == 1 { return }
            guard error == SSL_ERROR_WANT_READ else {
                if verify != Int(X509_V_OK) {
                    throw TLSFailure(reason: "certificate not accepted: " + String(cString: X509_verify_cert_error_string(verify)))
                }
                throw TLSFailure(reason: "TLS handshake failed" + (detail.isEmpty ? "" : ": " + detail))
            }
            let left = deadline - ContinuousClock.now
            let milliseconds = max(0, Int32(clamping: left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000))
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, milliseconds)
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { throw TLSFailure(reason: "no TLS handshake from the server in time") }
            guard let bytes = PlainStream.receive(fd, capacity: 16_384) else {
                throw TLSFailure(reason: "the connection was closed during the TLS handshake")
            }
            feed(bytes)
        }
    }

    func read() -> [UInt8]? {
        while true {
            lock.lock()
            let over = ended
            lock.unlock()
            guard !over, let bytes = PlainStream.receive(fd) else { return nil }
            lock.lock()
            feed(bytes)
            var plain: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 16_384)
            while true {
                ERR_clear_error()
                let count = chunk.withUnsafeMutableBytes { SSL_read(ssl, $0.baseAddress, Int32($0.count)) }
                if count > 0 {
                    plain += chunk.prefix(Int(count))
                    continue
                }
                ended = SSL_get_error(ssl, count) != SSL_ERROR_WANT_READ  // close_notify, or a bad record
                break
            }
            let pending = takeOutput()  // e.g. a KeyUpdate's answer
            if !pending.isEmpty { _ = PlainStream.sendAll(fd, pending) }
            let endedNow = ended
            lock.unlock()
            if !plain.isEmpty { return plain }  // what came before an end is still handed over; the next read ends
            if endedNow { return nil }
        }
    }

    func write(_ bytes: [UInt8]) -> Bool {
        guard !bytes.isEmpty else { return true }
        lock.lock()
        defer { lock.unlock() }
        guard !closed else { return false }
        ERR_clear_error()
        let written = bytes.withUnsafeBytes { SSL_write(ssl, $0.baseAddress, Int32($0.count)) }  // all of it, into memory
        guard written == bytes.count else { return false }
        return PlainStream.sendAll(fd, takeOutput())
    }

    func shutdown() { _ = Glibc.shutdown(fd, Int32(SHUT_RDWR)) }

    func close() {
        lock.lock()
        closed = true
        lock.unlock()
        _ = Glibc.close(fd)
    }

    // MARK: - Helpers (under `lock`)

    private func feed(_ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { BIO_write(input, $0.baseAddress, Int32($0.count)) }
    }

    private func takeOutput() -> [UInt8] {
        let count = spotter_tls_pending_out(output)
        guard count > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: count)
        let read = bytes.withUnsafeMutableBytes { BIO_read(output, $0.baseAddress, Int32($0.count)) }
        return read > 0 ? Array(bytes.prefix(Int(read))) : []
    }

    /// Adds each certificate of `extra` to the context's store.
    private static func add(_ extra: TrustedCertificates, to context: OpaquePointer) throws(TLSFailure) {
        let bytes = Array(extra.pem.utf8)
        guard let bio = bytes.withUnsafeBytes({ BIO_new_mem_buf($0.baseAddress, Int32($0.count)) }) else { throw failure("BIO") }
        defer { BIO_free(bio) }
        let store = SSL_CTX_get_cert_store(context)
        var added = 0
        while let certificate = PEM_read_bio_X509(bio, nil, nil, nil) {
            X509_STORE_add_cert(store, certificate)
            X509_free(certificate)
            added += 1
        }
        ERR_clear_error()  // the end of the PEM text reads as an error
        guard added > 0 else { throw TLSFailure(reason: "no certificate in the trusted certificates' PEM") }
    }

    private static func failure(_ what: String) -> TLSFailure {
        let detail = errorText()
        return TLSFailure(reason: what + (detail.isEmpty ? "" : ": " + detail))
    }

    /// The first of OpenSSL's queued errors, as text.
    private static func errorText() -> String {
        let code = ERR_get_error()
        guard code != 0 else { return "" }
        var buffer = [UInt8](repeating: 0, count: 256)
        buffer.withUnsafeMutableBufferPointer { $0.withMemoryRebound(to: CChar.self) { ERR_error_string_n(code, $0.baseAddress, $0.count) } }
        return String(decoding: buffer.prefix { $0 != 0 }, as: UTF8.self)
    }
}
#endif
