import Foundation

/// Certificate authorities the client trusts for wss:// besides the system's (`/etc/ssl/certs`): a private
/// deployment's own CA, or a test CA. Used by the Linux transport (`POSIXWebSocketTransport`); on Apple platforms
/// the system's trust (and the device's installed profiles) decide.
public struct TrustedCertificates: Sendable, Hashable {
    /// One or more certificates in PEM (`-----BEGIN CERTIFICATE-----` …).
    public var pem: String

    public init(pem: String) { self.pem = pem }

    /// The PEM file at `path`, read now.
    public init(contentsOfFile path: String) throws {
        pem = try String(contentsOfFile: path, encoding: .utf8)
    }
}
