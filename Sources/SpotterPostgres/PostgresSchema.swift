/// The PostgreSQL schema, as numbered migrations that never change once shipped (`spotter migrate --store
/// postgres://…` applies the missing ones; so does every start). The log and its views mirror the SQLite ones
/// (`LogSchema`): one `log` row per change a user must see, positions in commit order, thread views and
/// receipts checkpointed with the position they include.
///
/// Unlike SQLite's, the log here holds one more rule itself: a thread's messages (and the server's system
/// messages about sessions) have unique seqs (`log_message_seq`). With several processes writing, a process whose
/// memory of a thread is stale cannot store a second message under a seq already taken: its append fails (and
/// its state reloads from the store) instead of forking the thread.
public enum PostgresSchema {
    struct Migration {
        let name: String
        let sql: String
    }

    static let migrations: [Migration] = [
        Migration(name: "v1-log", sql: """
            CREATE TABLE "user" (
                id text PRIMARY KEY,
                full_name text,
                last_seen_at bigint
            );
            CREATE TABLE thread (
                no bigint PRIMARY KEY,
                id text NOT NULL UNIQUE,
                coach_id text NOT NULL,
                client_id text NOT NULL,
                created_at bigint NOT NULL,
                active boolean NOT NULL DEFAULT true,
                last_seq bigint NOT NULL DEFAULT 0,
                last_message_at bigint,
                last_preview text,
                last_side smallint,
                coach_delivered bigint NOT NULL DEFAULT 0,
                coach_read bigint NOT NULL DEFAULT 0,
                client_delivered bigint NOT NULL DEFAULT 0,
                client_read bigint NOT NULL DEFAULT 0
            );
            CREATE TABLE log (
                pos bigint PRIMARY KEY,
                kind smallint NOT NULL,
                thread_no bigint NOT NULL,
                side smallint NOT NULL,
                seq bigint NOT NULL,
                a bigint NOT NULL DEFAULT 0,
                b bigint NOT NULL DEFAULT 0,
                ref text,
                body text,
                at bigint NOT NULL
            );
            CREATE INDEX log_thread ON log (thread_no, seq);
            CREATE UNIQUE INDEX log_message_seq ON log (thread_no, seq) WHERE kind = 0 OR (kind = 3 AND a = 1);
            CREATE INDEX log_session ON log (pos) WHERE kind = 3;
            CREATE INDEX log_record ON log (pos) WHERE kind = 6;
            CREATE INDEX log_meal ON log (thread_no, pos) WHERE kind = 0 AND a = 1;
            CREATE TABLE log_checkpoint (
                id integer PRIMARY KEY CHECK (id = 1),
                pos bigint NOT NULL,
                resume_floor bigint NOT NULL
            );
            INSERT INTO log_checkpoint (id, pos, resume_floor) VALUES (1, 0, 0);
            """),
        // The sessions' invariant, held by the database: no user in two overlapping sessions that hold their time
        // (scheduled, reschedule requested, in progress). Each `session` record appended sets its session's rows
        // here in the same transaction; an overlap is refused by the exclusion constraint whichever process wrote
        // it. Slots are half-open, [start, end), as the session book's overlap test.
        Migration(name: "v2-session-slots", sql: """
            CREATE EXTENSION IF NOT EXISTS btree_gist;
            CREATE TABLE session_slot (
                session_id text NOT NULL,
                user_id text NOT NULL,
                during int8range NOT NULL,
                PRIMARY KEY (session_id, user_id),
                CONSTRAINT session_slot_no_overlap EXCLUDE USING gist (user_id WITH =, during WITH &&)
            );
            """),
    ]

    /// Applies the migrations not applied yet, each in its own transaction, under an advisory lock so that
    /// processes starting together do not race. Returns the names applied now.
    @discardableResult
    static func migrate(_ connection: PGConnection) throws -> [String] {
        try connection.exec("SELECT pg_advisory_lock($1)", [String(migrationLock)])
        defer { _ = try? connection.exec("SELECT pg_advisory_unlock($1)", [String(migrationLock)]) }
        try connection.exec("CREATE TABLE IF NOT EXISTS spotter_migration (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())")
        let done = Set(try connection.exec("SELECT name FROM spotter_migration").rows.compactMap { $0.first ?? nil })
        var applied: [String] = []
        for migration in migrations where !done.contains(migration.name) {
            try connection.exec("BEGIN")
            do {
                try connection.execScript(migration.sql)
                try connection.exec("INSERT INTO spotter_migration (name) VALUES ($1)", [migration.name])
                try connection.exec("COMMIT")
            } catch {
                _ = try? connection.exec("ROLLBACK")
                throw error
            }
            applied.append(migration.name)
        }
        return applied
    }

    /// Migrations applied to the database at `url`, oldest first.
    public static func applied(url: String) throws -> [String] {
        let connection = try PGConnection(url: url)
        return try connection.exec("SELECT name FROM spotter_migration ORDER BY applied_at, name").rows.compactMap { $0.first ?? nil }
    }

    /// Applies the missing migrations to the database at `url` (`spotter migrate`); returns those applied now.
    @discardableResult
    public static func migrate(url: String) throws -> [String] {
        try migrate(PGConnection(url: url))
    }

    static let migrationLock: Int64 = 0x5370_6f74_7465_01
}
