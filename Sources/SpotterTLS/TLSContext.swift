import CTLS

/// Why TLS could not be set up or went wrong: OpenSSL's error queue, in its words.
public struct TLSError: Error, CustomStringConvertible, Sendable {
    public let description: String
    public init(_ what: String) {
        var reasons: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            var text = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &text, text.count)
            reasons.append(String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        description = reasons.isEmpty ? what : what + ": " + reasons.joined(separator: "; ")
    }
}

/// An `SSL_CTX`: the certificate, key and settings new sessions are made from. Shared by every session made
/// from it (OpenSSL counts the references, so a context replaced on a reload lives on in the sessions that
/// still use it). Immutable once made, so it may be made on any thread and handed to the loop.
public final class TLSContext: @unchecked Sendable {
    let raw: OpaquePointer
    public let isServer: Bool

    private init(raw: OpaquePointer, isServer: Bool) {
        self.raw = raw
        self.isServer = isServer
    }

    deinit { SSL_CTX_free(raw) }

    /// TLS 1.2 with the ECDHE AEAD suites; TLS 1.3 with OpenSSL's suites (all AEAD).
    static let tls12Ciphers = [
        "ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-RSA-AES128-GCM-SHA256",
        "ECDHE-ECDSA-AES256-GCM-SHA384", "ECDHE-RSA-AES256-GCM-SHA384",
        "ECDHE-ECDSA-CHACHA20-POLY1305", "ECDHE-RSA-CHACHA20-POLY1305",
    ].joined(separator: ":")

    /// A server context from PEM files: the certificate (with its chain after it) and its private key, which
    /// must match. Reads the files: call off the loop.
    public static func server(certificatePath: String, keyPath: String) throws -> TLSContext {
        ERR_clear_error()
        guard let raw = SSL_CTX_new(TLS_server_method()) else { throw TLSError("SSL_CTX_new") }
        let context = TLSContext(raw: raw, isServer: true)
        try context.applyCommonSettings()
        _ = SSL_CTX_set_options(raw, spotter_tls_server_options())
        guard SSL_CTX_use_certificate_chain_file(raw, certificatePath) == 1 else {
            throw TLSError("cannot load the certificate \(certificatePath)")
        }
        guard SSL_CTX_use_PrivateKey_file(raw, keyPath, SSL_FILETYPE_PEM) == 1 else {
            throw TLSError("cannot load the private key \(keyPath)")
        }
        guard SSL_CTX_check_private_key(raw) == 1 else { throw TLSError("the private key does not match the certificate") }
        // Resumption: a server-side session cache (TLS 1.2 ids) and tickets (on by default; one per handshake).
        _ = spotter_tls_set_session_cache(raw, spotter_tls_sess_cache_server())
        let idContext = Array("spotter".utf8)
        _ = SSL_CTX_set_session_id_context(raw, idContext, UInt32(idContext.count))
        _ = SSL_CTX_set_num_tickets(raw, 1)
        spotter_tls_use_alpn_http11(raw)
        return context
    }

    /// A client context (tests, load tools) trusting the CA in `caPath` (PEM), or nothing checked when nil.
    /// `maximumVersion`/`minimumVersion` are OpenSSL's version numbers (`TLSContext.tls12` …).
    public static func client(trusting caPath: String?, minimumVersion: Int32? = nil, maximumVersion: Int32? = nil) throws -> TLSContext {
        ERR_clear_error()
        guard let raw = SSL_CTX_new(TLS_client_method()) else { throw TLSError("SSL_CTX_new") }
        let context = TLSContext(raw: raw, isServer: false)
        try context.applyCommonSettings()
        if let minimumVersion { _ = spotter_tls_set_min_proto(raw, minimumVersion) }
        if let maximumVersion { _ = spotter_tls_set_max_proto(raw, maximumVersion) }
        if let caPath {
            guard SSL_CTX_load_verify_locations(raw, caPath, nil) == 1 else { throw TLSError("cannot load the CA \(caPath)") }
            SSL_CTX_set_verify(raw, SSL_VERIFY_PEER, nil)
        }
        // No client-side cache: a session is resumed only when handed over (`TLSSession(resuming:)`), and a
        // cached one would be spoiled by OpenSSL when its connection ends without a close_notify.
        _ = spotter_tls_set_session_cache(raw, 0)
        _ = spotter_tls_offer_alpn_http11(raw)
        return context
    }

    private func applyCommonSettings() throws {
        _ = spotter_tls_set_min_proto(raw, spotter_tls1_2())
        _ = spotter_tls_set_mode(raw, spotter_tls_mode_flags())
        guard SSL_CTX_set_cipher_list(raw, Self.tls12Ciphers) == 1 else { throw TLSError("cipher list") }
    }

    public static var tls11: Int32 { spotter_tls1_1() }
    public static var tls12: Int32 { spotter_tls1_2() }
    public static var tls13: Int32 { spotter_tls1_3() }
}
