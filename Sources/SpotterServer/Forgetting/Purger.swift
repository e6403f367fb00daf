import Foundation
import Logging
import SpotterCore
import SpotterPorts
import Synchronization

/// Takes what was deleted off the disk: the storage's part (SQLite's WAL checkpointed and truncated, PostgreSQL's
/// tables vacuumed: `ServerStorage.purgeDisk`) and the files no row names any longer (`AttachmentStore`). The rows
/// themselves were rewritten when the delete or the erasure was appended (`MessageForgetting`); a purge makes sure
/// no older copy of their bytes is left in a file. Blocking: the purge consumer's thread or a worker, never the loop.
final class Purger: Sendable {
    private let storage: any ServerStorage
    private let attachments: AttachmentStore
    private let metrics: ServerMetrics
    private let logger: Logger
    /// One purge at a time (the consumer's and an admin's).
    private let running = Mutex(())

    init(storage: any ServerStorage, attachments: AttachmentStore, metrics: ServerMetrics, logger: Logger) {
        self.storage = storage
        self.attachments = attachments
        self.metrics = metrics
        self.logger = logger
    }

    struct Report: Sendable, Equatable {
        var disk: DiskPurge
        var filesRemoved: Int
        var milliseconds: Int
    }

    func purge() throws -> Report {
        try running.withLock { _ in
            let started = ContinuousClock.now
            let disk = try storage.purgeDisk()
            let removed = try attachments.removeUnnamedFiles()
            let took = ContinuousClock.now - started
            let report = Report(disk: disk, filesRemoved: removed,
                                milliseconds: Int(took.components.seconds * 1000 + took.components.attoseconds / 1_000_000_000_000_000))
            metrics.count("spotter_purges_total", [])
            metrics.count("spotter_purged_files_total", [], by: removed)
            if !disk.walTruncated && disk.vacuumed.isEmpty {
                metrics.count("spotter_purge_incomplete_total", [])
                logger.warning("purge: readers kept the WAL from being truncated; the next purge tries again")
            }
            logger.info("purged", metadata: ["files": "\(removed)", "wal_truncated": "\(disk.walTruncated)",
                                             "vacuumed": "\(disk.vacuumed.count)", "ms": "\(report.milliseconds)"])
            return report
        }
    }
}

/// The purge as a durable consumer of the log ("purge"): a record that deleted or rewrote words (an edit, a
/// delete, an erasure) makes it purge by `--purge-within` after the record was made; its position moves past the
/// record only once the purge is done, so a crash before it means a purge at the next start. Records that change
/// no words pass straight through.
final class PurgeConsumer: LogConsumer {
    let name = "purge"
    let start = LogConsumerStart.newest
    /// Only edits, deletes and erasures take words away (`needsPurge`): the others are passed over in the store.
    let kinds: Set<ChatRecord.Kind>? = [.change, .erasure]
    private let purger: Purger
    private let clock: any Clock
    /// Seconds from the record to the purge: half of `--purge-within`, so the purge is done well within it.
    private let delay: Int64
    private let wake = DispatchSemaphore(value: 0)
    private let stopping = Atomic<Bool>(false)

    init(purger: Purger, clock: any Clock, purgeWithinSeconds: Int64) {
        self.purger = purger
        self.clock = clock
        delay = max(1, purgeWithinSeconds / 2)
    }

    /// Whether a record leaves words to purge.
    static func needsPurge(_ record: ChatRecord) -> Bool {
        record.content.change != nil || record.content.erasure != nil
    }

    func deliver(_ deliveries: [LogDelivery]) throws {
        guard let first = deliveries.first(where: { Self.needsPurge($0.record) }) else { return }
        // From the record's time, or now if the record claims a later one (a clock set back, a row from elsewhere):
        // no sum past Int64 whatever the log holds.
        let due = min(first.record.at, clock.now) + delay
        while clock.now < due {
            if stopping.load(ordering: .acquiring) { throw Stopped() }
            _ = wake.wait(timeout: .now() + .milliseconds(250))
        }
        _ = try purger.purge()
    }

    /// Ends a wait for a purge's time (the server stops; the purge happens after the next start).
    func stop() {
        stopping.store(true, ordering: .releasing)
        wake.signal()
    }

    struct Stopped: Error {}
}
