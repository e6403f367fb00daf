import GRDB

/// The "v3-messaging" migration: per-thread message logs with gapless `seq`, read receipts,
/// the per-user ordered event log and its never-reused cursor counter, and `user.lastSeenAt`.
///
/// Plain SQL that never changes once shipped; later changes go in new migrations.
enum MessagingSchema {
    static func migrate(_ db: Database) throws {
        try db.execute(sql: v3)
    }

    static let v3 = """
        ALTER TABLE thread ADD COLUMN lastSeq INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE thread ADD COLUMN lastMessageAt INTEGER;
        ALTER TABLE thread ADD COLUMN lastPreview TEXT;
        ALTER TABLE thread ADD COLUMN lastSenderId TEXT;

        CREATE TABLE message (
            threadId TEXT NOT NULL REFERENCES thread(id),
            seq INTEGER NOT NULL,
            senderId TEXT,
            clientMessageId TEXT NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN ('text', 'system', 'meal_log')),
            body TEXT NOT NULL,
            createdAt INTEGER NOT NULL,
            PRIMARY KEY (threadId, seq)
        ) WITHOUT ROWID;
        CREATE UNIQUE INDEX message_idempotency ON message(threadId, COALESCE(senderId, ''), clientMessageId);

        CREATE TABLE receipt (
            threadId TEXT NOT NULL REFERENCES thread(id),
            userId TEXT NOT NULL,
            deliveredSeq INTEGER NOT NULL DEFAULT 0,
            readSeq INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (threadId, userId)
        ) WITHOUT ROWID;

        CREATE TABLE userEvent (
            userId TEXT NOT NULL,
            cursor INTEGER NOT NULL,
            kind TEXT NOT NULL,
            payload TEXT NOT NULL,
            createdAt INTEGER NOT NULL,
            PRIMARY KEY (userId, cursor)
        ) WITHOUT ROWID;

        CREATE TABLE userCursor (
            userId TEXT PRIMARY KEY NOT NULL,
            lastCursor INTEGER NOT NULL
        );

        ALTER TABLE "user" ADD COLUMN lastSeenAt INTEGER;
        """
}
