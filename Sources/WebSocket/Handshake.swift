#if canImport(Base64Codec)
import Base64Codec  // a module of its own in the package; compiled into this one by Tests/scripts/fuzz.sh
#endif
import COpenSSL
import FoundationEssentials

/// The server side of the opening handshake (RFC 6455 §4.2).
public struct HandshakePolicy: Sendable {
    /// Origins a browser may connect from, compared exactly (scheme://host[:port]).
    /// Empty allows every origin. Requests without `Origin` (native apps) are allowed.
    public var allowedOrigins: Set<String>
    /// Subprotocols the server speaks, most preferred first.
    public var subprotocols: [String]

    public init(allowedOrigins: Set<String> = [], subprotocols: [String] = ["spotter.v1"]) {
        self.allowedOrigins = allowedOrigins
        self.subprotocols = subprotocols
    }
}

public enum Handshake {
    /// The GUID of RFC 6455 §1.3.
    static let guid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    /// The outcome of a valid upgrade request.
    public struct Accepted: Sendable, Equatable {
        public var acceptKey: String
        /// The subprotocol chosen from the client's offer, if any.
        public var subprotocol: String?

        /// The `101 Switching Protocols` response.
        public var response: HTTPResponse {
            var headers: [(name: String, value: String)] = [
                ("Upgrade", "websocket"), ("Connection", "Upgrade"), ("Sec-WebSocket-Accept", acceptKey),
            ]
            if let subprotocol { headers.append(("Sec-WebSocket-Protocol", subprotocol)) }
            return HTTPResponse(status: 101, headers: headers)
        }
    }

    /// Checks an upgrade request against §4.2.1 and the policy.
    ///
    /// Errors: 405 for a method other than GET; 426 (with
    /// `Sec-WebSocket-Version: 13`) when the request is not a WebSocket
    /// upgrade or asks for another version; 400 for a missing `Connection:
    /// Upgrade` or a bad `Sec-WebSocket-Key`; 403 for a disallowed origin.
    public static func accept(_ request: HTTPRequest, policy: HandshakePolicy) throws(HTTPError) -> Accepted {
        guard request.method == "GET" else {
            throw HTTPError(405, "WebSocket upgrade needs GET", headers: [("Allow", "GET")])
        }
        let upgradeRequired: [(name: String, value: String)] = [("Upgrade", "websocket"), ("Sec-WebSocket-Version", "13")]
        guard request.versionMinor >= 1, request.headers.hasToken("Upgrade", "websocket") else {
            throw HTTPError(426, "this endpoint speaks WebSocket: send Upgrade: websocket", headers: upgradeRequired)
        }
        guard request.headers.hasToken("Connection", "upgrade") else {
            throw HTTPError(400, "missing Connection: Upgrade")
        }
        guard request.headers.values("Sec-WebSocket-Version") == ["13"] else {
            throw HTTPError(426, "unsupported WebSocket version; use 13", headers: upgradeRequired)
        }
        let keys = request.headers.values("Sec-WebSocket-Key")
        guard keys.count == 1, let key = keys.first, let decoded = Base64.decode(key, alphabet: .standard, padded: true), decoded.count == 16 else {
            throw HTTPError(400, "Sec-WebSocket-Key must be 16 bytes in base64")
        }
        if !policy.allowedOrigins.isEmpty, let origin = request.headers["Origin"],
           !policy.allowedOrigins.contains(origin), !isSameOrigin(origin, host: request.headers["Host"]) {
            throw HTTPError(403, "origin not allowed")
        }
        let offered = request.headers.tokens("Sec-WebSocket-Protocol")
        let chosen = offered.first { policy.subprotocols.contains($0) }
        return Accepted(acceptKey: acceptKey(for: key), subprotocol: chosen)
    }

    /// Whether `origin` is the server's own (its authority is the request's `Host`, under http or https): pages the
    /// server serves itself (the console) may always connect, whatever the allow-list says.
    static func isSameOrigin(_ origin: String, host: String?) -> Bool {
        guard let host, !host.isEmpty else { return false }
        let lowered = origin.lowercased()
        for scheme in ["http://", "https://"] where lowered.hasPrefix(scheme) {
            return lowered.dropFirst(scheme.count) == host.lowercased()
        }
        return false
    }

    /// base64(SHA-1(key + GUID)), §4.2.2 step 5.4.
    public static func acceptKey(for key: String) -> String {
        Base64.encode(sha1(Array((key + guid).utf8)), alphabet: .standard, padded: true)
    }

    /// SHA-1 looked up in OpenSSL's provider once: `EVP_sha1()` made every digest fetch it again (most of the
    /// handshake's SHA-1 cost). Read-only after the first use, which OpenSSL allows from any thread.
    nonisolated(unsafe) static let sha1Algorithm: OpaquePointer? = EVP_MD_fetch(nil, "SHA1", nil)

    static func sha1(_ bytes: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let ok = bytes.withUnsafeBytes { input in
            EVP_Digest(input.baseAddress, input.count, &digest, &length, sha1Algorithm ?? EVP_sha1(), nil)
        }
        precondition(ok == 1, "OpenSSL SHA-1 failed")
        return Array(digest.prefix(Int(length)))
    }
}
