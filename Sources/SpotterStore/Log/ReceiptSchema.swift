import GRDB

/// The "v30-receipt-by-number" migration: the checkpointed delivered/read views keyed by (thread number, side)
/// instead of (thread id, user id).
///
/// Why (issue 33, LoadTests/README.md "the checkpoint's receipts"): the checkpoint saves every changed thread's
/// two views each second, in parts of `CoreRunner.checkpointPart` threads, each part its own commit. Keyed by
/// the thread's id (a random UUID) and the user's, a part's rows fell on pages all over the table, so every part
/// rewrote most of its pages: ¾ of the WAL at 10,000 msgs/s, ≈ 1.1 pages per message. Keyed by the thread's
/// number, with small integer rows, the whole table is a few dozen pages and a part sorted by number writes a
/// handful of neighbouring ones.
///
/// `side` is `Side.rawValue` (0 the coach, 1 the client). Rows of users who are neither side of their thread
/// (none are written) are not carried over.
enum ReceiptSchema {
    static let v30 = """
        CREATE TABLE threadReceipt (
            threadNo INTEGER NOT NULL,
            side INTEGER NOT NULL CHECK (side IN (0, 1)),
            deliveredSeq INTEGER NOT NULL,
            readSeq INTEGER NOT NULL,
            PRIMARY KEY (threadNo, side)
        ) WITHOUT ROWID;
        INSERT INTO threadReceipt (threadNo, side, deliveredSeq, readSeq)
            SELECT t.no, CASE r.userId WHEN t.coachId THEN 0 ELSE 1 END, r.deliveredSeq, r.readSeq
            FROM receipt r JOIN thread t ON t.id = r.threadId
            WHERE r.userId IN (t.coachId, t.clientId) AND t.no IS NOT NULL
            ORDER BY t.no;
        DROP TABLE receipt;
        """
}
