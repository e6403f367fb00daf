import EventLoop
import Logging

/// What the API and its sockets use of the server: its options, its loop, its logs and metrics, the core's
/// runner and the outbound ledger. Built before the API, so nothing holds the server half-made.
final class ServerParts {
    let config: ServerConfig
    let loop: Loop
    let logger: Logger
    let metrics: ServerMetrics
    let runner: CoreRunner
    let outbound: OutboundLedger
    /// Takes deleted words off the disk (set by the server once its storage and files are known).
    var purger: Purger!

    init(config: ServerConfig, loop: Loop, logger: Logger, metrics: ServerMetrics, runner: CoreRunner, outbound: OutboundLedger) {
        self.config = config
        self.loop = loop
        self.logger = logger
        self.metrics = metrics
        self.runner = runner
        self.outbound = outbound
    }

    /// Bytes of uploads admitted and not yet answered (bounded by `maxUploadBytesInFlight`).
    private(set) var uploadBytesInFlight = 0

    /// Holds `bytes` of an upload about to be received, or nil when that would pass `maxUploadBytesInFlight`.
    func reserveUpload(_ bytes: Int) -> UploadReservation? {
        guard bytes <= config.maxUploadBytesInFlight &- uploadBytesInFlight else { return nil }
        uploadBytesInFlight += bytes
        return UploadReservation(bytes: bytes) { [weak self] released in self?.uploadBytesInFlight -= released }
    }
}
