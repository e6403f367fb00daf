import GRDB
import Logging
import SpotterCore
import SpotterPorts

#if canImport(Glibc)
import Glibc
#endif

/// Spotter's SQLite database: one `DatabasePool` (WAL mode) on one file in
/// the data directory, migrated on open.
///
/// Open it before the event loop starts, and never call it from the loop
/// thread afterwards: GRDB blocks while SQLite works. Later features reach
/// it through the store's writer thread.
public final class Store: Sendable {
    /// GRDB's connections: the engine's own (the package's tests reach them too), never part of a port.
    package let writer: any DatabaseWriter
    /// How many times a server has started on this database, this start included.
    public let runNumber: Int64?
    /// The database file (nil in memory).
    public let path: String?

    /// Opens (creating if needed) `directory/spotter.sqlite` and migrates it. With `synchronousFull` (the
    /// default) every commit is fsynced to the WAL before it returns, so an acknowledged write survives a
    /// power loss, not only a crash.
    public static func open(directory: String, synchronousFull: Bool = true, writerCacheKiB: Int = 65_536,
                            logger: Logger = Logger(label: "spotter.store")) throws -> Store {
        try StoreDirectory.make(directory)
        var configuration = Configuration()
        configuration.busyMode = .timeout(5)
        configuration.prepareDatabase { db in
            if synchronousFull { try db.execute(sql: "PRAGMA synchronous = FULL") }
            // What a statement deletes or overwrites is overwritten with zeros in the page (and a freed page whole),
            // so a deleted message's words leave the database file once its pages are checkpointed (`purgeDisk`).
            try db.execute(sql: "PRAGMA secure_delete = ON")
        }
        let pool = try DatabasePool(path: directory + "/spotter.sqlite", configuration: configuration)
        if synchronousFull {
            // DatabasePool switches its writer connection to WAL with `synchronous = NORMAL` after
            // prepareDatabase ran: set FULL again on that (one, long-lived) writer connection.
            try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
        }
        // The writer's page cache holds every page a group-commit batch dirties (SQLite's default is 2 MiB): a
        // smaller one spills dirty pages into the WAL mid-transaction and reads them back. Pages are shared by
        // nothing else, so this costs at most this much memory.
        // Checkpoints run on the store writer's checkpoint thread; the writer's own automatic checkpoint (inside
        // a COMMIT) is only the backstop that restarts the WAL and bounds it at 32 MiB.
        try pool.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA cache_size = -\(writerCacheKiB)")
            try db.execute(sql: "PRAGMA wal_autocheckpoint = 8192")
        }
        try migrator.migrate(pool)
        logger.info("database ready", metadata: ["path": "\(pool.path)"])
        return Store(writer: pool, runNumber: nil, path: pool.path)
    }

    /// An in-memory database for tests.
    public static func inMemory() throws -> Store {
        let queue = try DatabaseQueue()
        try migrator.migrate(queue)
        return Store(writer: queue, runNumber: nil, path: nil)
    }

    private init(writer: any DatabaseWriter, runNumber: Int64?, path: String?) {
        self.writer = writer
        self.runNumber = runNumber
        self.path = path
    }

    /// Records a server start and returns a store that knows its run number.
    public func recordingStart(version: String, at unixSeconds: Int64) throws -> Store {
        let run = try writer.write { db -> Int64 in
            try db.execute(sql: "INSERT INTO serverRun (version, startedAt) VALUES (?, ?)", arguments: [version, unixSeconds])
            return db.lastInsertedRowID
        }
        return Store(writer: writer, runNumber: run, path: path)
    }

    /// Copies every committed page from the WAL into the database file and truncates the WAL to nothing, so no
    /// old page image (a deleted message's words) is left in either file; false when readers kept it from finishing
    /// (the next purge tries again). Blocking. It runs on a connection of its own with a short busy timeout, tried a
    /// few times with pauses between: while a TRUNCATE checkpoint waits for readers it holds the write lock, so the
    /// store's writer waits at most that timeout per attempt, never the pool's five seconds.
    public func truncateWAL(attempts: Int = 10, busyMilliseconds: Int = 200) -> Bool {
        guard let path else { return true }  // in memory: no file
        var configuration = Configuration()
        configuration.busyMode = .timeout(Double(busyMilliseconds) / 1000)
        configuration.label = "spotter.purge"
        guard let connection = try? DatabaseQueue(path: path, configuration: configuration) else { return false }
        defer { try? connection.close() }
        for attempt in 0..<max(1, attempts) {
            if attempt > 0 { usleep(100_000) }
            // SQLITE_BUSY (a reader past the busy timeout) throws: tried again.
            let done = (try? connection.writeWithoutTransaction { db -> Bool in
                let result = try db.checkpoint(.truncate)
                return result.walFrameCount == result.checkpointedFrameCount
            }) ?? false
            if done, walBytes() == 0 { return true }
        }
        return false
    }

    /// The WAL file's size (0 when there is none).
    func walBytes() -> Int {
        guard let path else { return 0 }
        var info = stat()
        return stat(path + "-wal", &info) == 0 ? Int(info.st_size) : 0
    }

    /// Applied migrations, oldest first.
    public func appliedMigrations() throws -> [String] {
        try writer.read { db in try Store.migrator.appliedMigrations(db) }
    }

    /// Migrations are plain SQL and never change once shipped. GRDB knows them by name only; conditions on a
    /// record's kind come from `LogSQL`, whose numbers never change (see there).
    static let migrator: DatabaseMigrator = {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1-serverRun") { db in
            try db.execute(sql: """
                CREATE TABLE serverRun (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    version TEXT NOT NULL,
                    startedAt INTEGER NOT NULL
                )
                """)
        }
        migrator.registerMigration("v2-accounts") { db in try AccountsSchema.migrate(db) }
        migrator.registerMigration("v3-messaging") { db in try MessagingSchema.migrate(db) }
        // A starting server loads recent revocations; without this index that is a scan of every token.
        migrator.registerMigration("v4-revocations") { db in
            try db.execute(sql: "CREATE INDEX refreshToken_revokedAt ON refreshToken(revokedAt) WHERE revokedAt IS NOT NULL")
        }
        migrator.registerMigration("v5-log") { db in try LogSchema.migrate(db) }
        // Session times are shown in each user's own zone (an IANA name); accounts made before have UTC.
        migrator.registerMigration("v6-time-zone") { db in
            try db.execute(sql: #"ALTER TABLE "user" ADD COLUMN timeZone TEXT NOT NULL DEFAULT 'UTC'"#)
        }
        // Video sessions are `session` records in the log; a start reads them through this index (its condition is the
        // start's query's own, `LogSQL.isSession`).
        migrator.registerMigration("v7-sessions") { db in
            try db.execute(sql: "CREATE INDEX log_session ON log(pos) WHERE \(LogSQL.isSession)")
        }
        // A client's subscription tier (`--tiers`): every account made before starts on Freemium.
        migrator.registerMigration("v8-tiers") { db in
            try db.execute(sql: #"ALTER TABLE "user" ADD COLUMN tier TEXT NOT NULL DEFAULT 'freemium'"#)
        }
        // Clients' ratings of their coach (`--ratings`); a skipped prompt has no stars.
        migrator.registerMigration("v9-ratings") { db in
            try db.execute(sql: """
                CREATE TABLE rating (
                    coachId TEXT NOT NULL,
                    clientId TEXT NOT NULL,
                    stars INTEGER CHECK (stars BETWEEN 1 AND 5),
                    feedback TEXT,
                    sessionId TEXT,
                    createdAt INTEGER NOT NULL
                );
                CREATE INDEX rating_coach ON rating(coachId, createdAt);
                """)
        }
        // Chat attachments: one row per (file, thread it was uploaded to); the files live beside the database.
        migrator.registerMigration("v10-attachments") { db in
            try db.execute(sql: """
                CREATE TABLE attachment (
                    id TEXT NOT NULL,
                    threadId TEXT NOT NULL,
                    uploaderId TEXT NOT NULL,
                    type TEXT NOT NULL,
                    bytes INTEGER NOT NULL,
                    createdAt INTEGER NOT NULL,
                    PRIMARY KEY (id, threadId)
                );
                """)
        }
        // The coaching record is `record` records and a start reads them all; the meal history and the dashboard
        // read a thread's meal logs (messages whose `a` is `mealLog`) without the rest of its messages.
        migrator.registerMigration("v11-record") { db in
            try db.execute(sql: """
                CREATE INDEX log_record ON log(pos) WHERE \(LogSQL.isCoachingRecord);
                CREATE INDEX log_meal ON log(threadNo, pos) WHERE \(LogSQL.isMealLog);
                """)
        }
        // Keys of the server-to-server API: only their SHA-256 is kept; a revoked key stays, with its time.
        migrator.registerMigration("v12-api-keys") { db in
            try db.execute(sql: """
                CREATE TABLE apiKey (
                    id TEXT PRIMARY KEY,
                    name TEXT NOT NULL,
                    keyHash TEXT NOT NULL UNIQUE,
                    createdBy TEXT NOT NULL,
                    createdAt INTEGER NOT NULL,
                    revokedAt INTEGER
                );
                """)
        }
        // The profile: a user's avatar (the SHA-256 of an image kept with the attachments) and an email change
        // waiting for its code (one per user; the old address signs in until the new one is confirmed).
        migrator.registerMigration("v13-profile") { db in
            try db.execute(sql: """
                ALTER TABLE "user" ADD COLUMN avatar TEXT;
                CREATE TABLE emailChange (
                    userId TEXT PRIMARY KEY,
                    email TEXT NOT NULL,
                    codeDigest TEXT NOT NULL,
                    issuedAt INTEGER NOT NULL,
                    failedAttempts INTEGER NOT NULL
                );
                """)
        }
        // Durable consumers of the log (`ConsumableLog`): each one's saved position, by name. Only moves forward.
        migrator.registerMigration("v14-log-consumers") { db in
            try db.execute(sql: """
                CREATE TABLE logConsumer (
                    name TEXT PRIMARY KEY NOT NULL,
                    pos INTEGER NOT NULL
                );
                """)
        }
        // Push devices (issue 28): see `AccountsSchema.devices`.
        migrator.registerMigration("v15-devices") { db in try db.execute(sql: AccountsSchema.devices) }
        // Notification preferences (issue 28): see `AccountsSchema.notifications`.
        migrator.registerMigration("v16-notifications") { db in try db.execute(sql: AccountsSchema.notifications) }
        // Where session reminders go (issue 28): see `AccountsSchema.reminderChannels`.
        migrator.registerMigration("v17-reminder-channels") { db in try db.execute(sql: AccountsSchema.reminderChannels) }
        // The push outbox (issue 28): see `AccountsSchema.pushOutbox`.
        migrator.registerMigration("v18-push-outbox") { db in try db.execute(sql: AccountsSchema.pushOutbox) }
        // Outbound webhooks (issue 29): see `AccountsSchema.webhooks`.
        migrator.registerMigration("v20-webhooks") { db in try db.execute(sql: AccountsSchema.webhooks) }
        // Tier changes from billing (issue 29): see `AccountsSchema.serviceTier`.
        migrator.registerMigration("v21-service-tier") { db in try db.execute(sql: AccountsSchema.serviceTier) }
        // Erasing an account (issue 29): the user row stays as a tombstone (id, role, when) so that threads and
        // sessions naming the id still resolve; see `AccountStore.erase`.
        migrator.registerMigration("v22-erasure") { db in
            try db.execute(sql: #"ALTER TABLE "user" ADD COLUMN erasedAt INTEGER"#)
        }
        // Onboarding fields of seed 000 steps 4–7 (issue 30): see `AccountsSchema.onboardingFields`.
        migrator.registerMigration("v23-onboarding-fields") { db in try db.execute(sql: AccountsSchema.onboardingFields) }
        // Feedback after a completed video session (issue 30): one row per side, see `AccountStore.addSessionFeedback`.
        migrator.registerMigration("v24-session-feedback") { db in
            try db.execute(sql: """
                CREATE TABLE sessionFeedback (
                    sessionId TEXT NOT NULL,
                    side TEXT NOT NULL CHECK (side IN ('coach', 'client')),
                    authorId TEXT NOT NULL,
                    rating INTEGER NOT NULL CHECK (rating BETWEEN 1 AND 5),
                    notes TEXT,
                    createdAt INTEGER NOT NULL,
                    PRIMARY KEY (sessionId, side)
                );
                CREATE INDEX sessionFeedback_author ON sessionFeedback(authorId);
                """)
        }
        // A coach's availability (issue 30): one row per coach, the whole schedule as JSON (`AccountStore.setAvailability`).
        migrator.registerMigration("v25-availability") { db in
            try db.execute(sql: """
                CREATE TABLE availability (
                    coachId TEXT PRIMARY KEY NOT NULL,
                    body TEXT NOT NULL,
                    updatedAt INTEGER NOT NULL
                );
                """)
        }
        // AI-generation quotas (issue 30 item 4): one counter per user, see `AccountStore.consumeAIGeneration`.
        migrator.registerMigration("v26-ai-quota") { db in try db.execute(sql: AccountStore.aiQuotaSchema) }
        // Sign in with Apple and Google (issue 30 item 11): the provider's subject → the user; see `AccountStore+Identity`.
        migrator.registerMigration("v28-identity-links") { db in
            try db.execute(sql: """
                CREATE TABLE identityLink (
                    provider TEXT NOT NULL,
                    subject TEXT NOT NULL,
                    userId TEXT NOT NULL,
                    linkedAt INTEGER NOT NULL,
                    PRIMARY KEY (provider, subject)
                );
                CREATE INDEX identityLink_user ON identityLink(userId);
                """)
        }
        // Goal preferences (issue 30): see `AccountStore+GoalPreferences.swift`.
        migrator.registerMigration("v29-goal-preferences") { db in
            try db.execute(sql: """
                CREATE TABLE goalPreferences (
                    userId TEXT PRIMARY KEY NOT NULL,
                    bodyFatMethod TEXT CHECK (bodyFatMethod IN ('navy', 'skinfold3', 'skinfold7')),
                    units TEXT NOT NULL DEFAULT 'metric' CHECK (units IN ('metric', 'imperial')),
                    updatedAt INTEGER NOT NULL
                )
                """)
        }
        // The checkpoint's receipts by thread number (issue 33): see `ReceiptSchema`.
        migrator.registerMigration("v30-receipt-by-number") { db in try db.execute(sql: ReceiptSchema.v30) }
        return migrator
    }()
}

/// The data directory: made (mode 0750) if missing.
public enum StoreDirectory {
    public static func make(_ path: String) throws {
        var isDirectory = stat()
        if stat(path, &isDirectory) == 0 { return }
        guard mkdir(path, 0o750) == 0 || errno == EEXIST else {
            throw StoreError.cannotCreateDirectory(path, errno: errno)
        }
    }
}

public enum StoreError: Error, CustomStringConvertible {
    case cannotCreateDirectory(String, errno: Int32)

    public var description: String {
        switch self {
        case .cannotCreateDirectory(let path, let code):
            return "cannot create data directory \(path): \(String(cString: strerror(code)))"
        }
    }
}
