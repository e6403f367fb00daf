import Dispatch
import EventLoop
import SpotterTLS

#if canImport(Glibc)
import Glibc
#endif

/// TLS on the port (`--tls-cert`, `--tls-key`): every accepted socket gets a `TLSSession` between it and its
/// `Connection`, which sees only plaintext. SIGHUP (or `reloadTLS`) reads the files again into a new context
/// for new connections; open ones keep the context they were made from.
extension Server {
    /// Whether connections speak TLS.
    public var tlsEnabled: Bool { config.tlsCertificatePath != nil }

    /// Makes the first context from the configured files (before the loop runs).
    func loadTLS() throws {
        guard let certificate = config.tlsCertificatePath, let key = config.tlsKeyPath else { return }
        tlsContext = try TLSContext.server(certificatePath: certificate, keyPath: key)
        logger.info("TLS on", metadata: ["certificate": "\(certificate)"])
    }

    /// False if the session cannot be made (the socket is then closed).
    func attachTLS(to tcp: TCPConnection) -> Bool {
        guard let tlsContext else { return true }
        do {
            tcp.transform = try TLSSession(context: tlsContext)
            return true
        } catch {
            logger.error("cannot start a TLS session", metadata: ["error": "\(error)"])
            return false
        }
    }

    /// Reads the certificate and key again (off the loop) and uses them for new connections; if they cannot be
    /// used, the old ones stay and an error is logged. `done` runs on the loop with the outcome. Safe from any thread.
    public func reloadTLS(_ done: (@Sendable (Bool) -> Void)? = nil) {
        guard let certificate = config.tlsCertificatePath, let key = config.tlsKeyPath else {
            done?(false)
            return
        }
        let loop = self.loop
        let logger = self.logger
        DispatchQueue.global().async { [weak self] in
            let outcome = Result { try TLSContext.server(certificatePath: certificate, keyPath: key) }
            loop.execute { [weak self] in
                guard let self else { return }
                switch outcome {
                case .success(let context):
                    self.tlsContext = context
                    logger.info("TLS certificate reloaded", metadata: ["certificate": "\(certificate)"])
                    done?(true)
                case .failure(let error):
                    logger.error("TLS reload failed; keeping the certificate in use", metadata: ["error": "\(error)"])
                    done?(false)
                }
            }
        }
    }

    /// A SIGHUP watcher that reloads when TLS is on, and otherwise only says so (a `systemctl reload` must not
    /// stop a server that has nothing to reload).
    func watchForTLSReload() -> SignalWatcher? {
        SignalWatcher(loop: loop, signal: SIGHUP) { [weak self] _ in
            guard let self else { return }
            guard tlsEnabled else {
                logger.info("SIGHUP: nothing to reload (TLS is off)")
                return
            }
            logger.info("SIGHUP: reloading the TLS certificate")
            reloadTLS()
        }
    }
}
