import GRDB
import SpotterCore

/// The "v5-log" migration: the append-only log replaces the per-thread message table, the per-user event
/// log and its cursor marks.
///
/// - `log`: one row per change a user must see (`ChatRecord`), in append order; `pos` is the cursor clients
///   resume from. Messages live here and nowhere else.
/// - `log_thread`: the one index, by (thread, seq); a record's seq never decreases along a thread, so the
///   index is in `pos` order within each thread (history and resume read it).
/// - `thread.no`: the thread's number in the log (fixed once given; rowids may change on VACUUM).
/// - The thread's columns (lastSeq, lastPreview…) and `receipt` stay as checkpointed views: the server saves
///   them every second with the log position they include (`logCheckpoint.pos`), and a start replays only
///   the records after it.
/// - Messages already stored are carried into the log; cursors of the old per-user logs cannot be
///   translated, so the log starts above every one of them and `resumeFloor` marks where resuming starts:
///   an older cursor gets `cursor_expired` (the client reloads `threads` and `history`).
enum LogSchema {
    static func migrate(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE log (
                pos INTEGER PRIMARY KEY,
                kind INTEGER NOT NULL,
                threadNo INTEGER NOT NULL,
                side INTEGER NOT NULL,
                seq INTEGER NOT NULL,
                a INTEGER NOT NULL DEFAULT 0,
                b INTEGER NOT NULL DEFAULT 0,
                ref TEXT,
                body TEXT,
                at INTEGER NOT NULL
            );
            CREATE INDEX log_thread ON log(threadNo, seq);

            ALTER TABLE thread ADD COLUMN no INTEGER;
            UPDATE thread SET no = rowid;
            CREATE UNIQUE INDEX thread_no ON thread(no);
            CREATE TRIGGER thread_number AFTER INSERT ON thread WHEN NEW.no IS NULL BEGIN
                UPDATE thread SET no = (SELECT COALESCE(MAX(no), 0) + 1 FROM thread) WHERE rowid = NEW.rowid;
            END;

            CREATE TABLE logCheckpoint (
                id INTEGER PRIMARY KEY CHECK (id = 1),
                pos INTEGER NOT NULL,
                resumeFloor INTEGER NOT NULL
            );
            """)
        // Start above every cursor the old per-user logs handed out: a placeholder row (`LogSQL.placeholderKind`,
        // thread 0, which no reader asks for) holds the position. It stays: positions come from the largest rowid,
        // and the log never deletes, so no position is ever handed out twice.
        let oldCursor = try Int64.fetchOne(db, sql: """
            SELECT MAX(c) FROM (SELECT MAX(cursor) AS c FROM userEvent UNION ALL SELECT MAX(lastCursor) FROM userCursor)
            """) ?? 0
        if oldCursor > 0 {
            try db.execute(sql: "INSERT INTO log (pos, kind, threadNo, side, seq, at) VALUES (?, \(LogSQL.placeholderKind), 0, 0, 0, 0)",
                           arguments: [oldCursor])
        }
        // The old table's `kind` is its own stored text ('text', 'meal_log', 'system'), kept as it was written.
        try db.execute(sql: """
            INSERT INTO log (kind, threadNo, side, seq, a, ref, body, at)
            SELECT \(ChatRecord.Kind.message.rawValue), t.no,
                   CASE WHEN m.senderId = t.coachId THEN \(Side.coach.rawValue) ELSE \(Side.client.rawValue) END, m.seq,
                   CASE m.kind WHEN 'meal_log' THEN \(MessageKind.mealLog.rawValue)
                               WHEN 'system' THEN \(MessageKind.system.rawValue)
                               ELSE \(MessageKind.text.rawValue) END,
                   m.clientMessageId, m.body, m.createdAt
            FROM message m JOIN thread t ON t.id = m.threadId
            ORDER BY t.no, m.seq;
            """)
        let last = try Int64.fetchOne(db, sql: "SELECT MAX(pos) FROM log") ?? 0
        let floor = max(last, oldCursor)
        try db.execute(sql: "INSERT INTO logCheckpoint (id, pos, resumeFloor) VALUES (1, ?, ?)", arguments: [floor, floor])
        try db.execute(sql: """
            DROP TABLE message;
            DROP TABLE userEvent;
            DROP TABLE userCursor;
            """)
    }
}
