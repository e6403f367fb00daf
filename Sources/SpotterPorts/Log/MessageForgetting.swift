import SpotterCore

/// What a change record (`MessageChangeRecord`) does to the stored log, in the transaction that appends it, on
/// either engine (SQL both dialects accept; `SQLDatabase`):
/// - the message's row is rewritten as `MessageRecord.applying` says: an edit's text replaces the old one, a
///   delete empties it (the client_message_id stays, so a retry of the same send is still recognised);
/// - the text of every older change record of the same message is forgotten (NULL);
/// - a delete takes the message's files off its thread (their `attachment` rows, unless another message or the
///   coaching record of the thread still names them) and the pushes about the thread made since the message
///   (their previews held its words).
/// The bytes leave the disk at the next purge (`Purger`): SQLite overwrites what a statement frees
/// (`secure_delete`), and the purge checkpoints the WAL, vacuums PostgreSQL and removes files no row names.
public enum MessageForgetting {
    /// Runs after `record` was inserted (its `pos` set). Records of other kinds change nothing.
    public static func apply(_ db: any SQLDatabase, _ record: ChatRecord) throws {
        if let erasure = record.content.erasure { return try erase(db, erasure, at: record.at) }
        guard let change = record.content.change else { return }
        guard let row = try db.fetchOne("""
            SELECT pos, a, b, ref, body FROM log WHERE threadNo = ? AND seq = ? AND \(LogSQL.isMessage)
            """, [record.threadNo, change.target]) else { return }
        let columns = ChatRecord.Columns(kind: ChatRecord.Kind.message.rawValue, a: row["a"], b: row["b"], ref: row["ref"], body: row["body"])
        guard let message = ChatRecord.Content(columns: columns).message else { return }
        if !change.isDelete, message.isDeleted {
            // An edit decided before a delete it could not see: the message stays deleted, and the edit's text goes.
            try db.execute("UPDATE log SET body = NULL WHERE pos = ?", [record.pos])
            return
        }
        let changed = message.applying(change.change, at: record.at)
        let stored = ChatRecord.Content.message(changed).columns
        try db.execute("UPDATE log SET b = ?, body = ? WHERE threadNo = ? AND seq = ? AND \(LogSQL.isMessage)",
                       [stored.b, stored.body, record.threadNo, change.target])
        try db.execute("""
            UPDATE log SET body = NULL
            WHERE threadNo = ? AND seq >= ? AND \(LogSQL.isChange) AND a = ? AND pos < ? AND body IS NOT NULL
            """, [record.threadNo, change.target, change.target, record.pos])
        let threadID: String? = try db.fetchValue("SELECT id FROM thread WHERE no = ?", [record.threadNo])
        guard let threadID else { return }
        // A webhook's `message.created` waiting (or dead-lettered) with the old words keeps only ids.
        try AccountStore.blank(db, "threadId = ? AND seq = ?", [threadID, change.target])
        guard change.isDelete else { return }
        let messagePos: Int64 = row["pos"]
        try db.execute("DELETE FROM pushOutbox WHERE threadId = ? AND kind = 'message' AND lastPos >= ?", [threadID, messagePos])
        for id in Set(message.attachmentIDs) {
            let stillNamed: Int64 = try db.fetchValue("""
                SELECT COUNT(*) FROM log
                WHERE threadNo = ? AND ((\(LogSQL.isMessage) AND (b & \(ChatRecord.Columns.withAttachments)) <> 0) OR \(LogSQL.isCoachingRecord))
                  AND body LIKE ?
                """, [record.threadNo, "%" + id + "%"]) ?? 0
            if stillNamed == 0 {
                try db.execute("DELETE FROM attachment WHERE id = ? AND threadId = ?", [id, threadID])
            }
        }
    }

    /// An erased account, in every thread of theirs: their messages become tombstones (a service's system messages
    /// on their side stay: not their words), their edits' texts are forgotten, a client's coaching record is
    /// emptied (it is theirs: weights, photos, measurements), the files they uploaded leave the threads, and the
    /// threads' pushes are taken back. Sessions keep their records (times the other side keeps).
    static func erase(_ db: any SQLDatabase, _ erasure: ErasureRecord, at: Int64) throws {
        let user = erasure.userID
        guard !user.isEmpty else { return }
        // The names a profile record told the cluster (account records are on thread 0: the thread index finds them).
        try db.execute("""
            UPDATE log SET body = NULL
            WHERE threadNo = 0 AND \(LogSQL.isAccountChange) AND a = \(AccountChangeRecord.profileColumn) AND ref = ? AND body IS NOT NULL
            """, [user])
        let threads = try db.fetchAll("SELECT no, id, coachId FROM thread WHERE coachId = ? OR clientId = ?", [user, user])
        let tombstone = ChatRecord.Columns.messageFlags(attachments: false, editedAt: nil, deletedAt: at)
        for thread in threads {
            let no: Int64 = thread["no"]
            let threadID: String = thread["id"]
            let coachID: String = thread["coachId"]
            let side = coachID == user ? Side.coach : Side.client
            try db.execute("""
                UPDATE log SET b = ?, body = ''
                WHERE threadNo = ? AND side = ? AND \(LogSQL.isPersonsMessage) AND \(LogSQL.isStanding)
                """, [tombstone, no, side.rawValue])
            try db.execute("UPDATE log SET body = NULL WHERE threadNo = ? AND side = ? AND \(LogSQL.isChange)", [no, side.rawValue])
            if side == .client {
                try db.execute("UPDATE log SET body = '{}' WHERE threadNo = ? AND \(LogSQL.isCoachingRecord)", [no])
            }
            try db.execute("DELETE FROM pushOutbox WHERE threadId = ?", [threadID])
            try db.execute("DELETE FROM attachment WHERE threadId = ? AND uploaderId = ?", [threadID, user])
        }
        try AccountStore.blank(db, "senderId = ?", [user])
    }
}
