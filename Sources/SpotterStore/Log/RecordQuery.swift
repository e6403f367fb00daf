import GRDB
import GRDBSQLite
import SpotterCore

/// Reads log records by column index straight from SQLite's C API.
///
/// The consumers read every committed record (`recordsAfter`), and GRDB's rows decoded them by column name: each
/// `row["pos"]` lowercased the name and searched the columns, which the 10,000 msgs/s profile showed costing more
/// than SQLite's own reading (issue 33). Every query here selects `LogSQL.recordColumns`, in that order, and the
/// decoding reads columns 0…9 by position. Like `DirectStatement`, the statement is GRDB's cached one (GRDB owns
/// its lifetime); run it only inside a database access GRDB opened.
enum RecordQuery {
    /// Runs `sql` (which selects `LogSQL.recordColumns` first) with integer `arguments` and decodes every row.
    static func fetchAll(_ db: Database, sql: String, arguments: [Int64], limit: Int = Int.max) throws -> [ChatRecord] {
        let statement = try db.cachedStatement(sql: sql)
        let handle = statement.sqliteStatement
        defer {
            sqlite3_reset(handle)
            sqlite3_clear_bindings(handle)
        }
        for (index, value) in arguments.enumerated() {
            sqlite3_bind_int64(handle, Int32(index + 1), value)
        }
        var records: [ChatRecord] = []
        while records.count < limit {
            let code = sqlite3_step(handle)
            if code == SQLITE_DONE { break }
            guard code == SQLITE_ROW else {
                throw DatabaseError(resultCode: ResultCode(rawValue: code), message: db.lastErrorMessage, sql: statement.sql)
            }
            records.append(record(handle))
        }
        return records
    }

    /// The record at the statement's current row (columns in `LogSQL.recordColumns` order).
    static func record(_ handle: SQLiteStatement) -> ChatRecord {
        ChatRecord(pos: sqlite3_column_int64(handle, 0), threadNo: sqlite3_column_int64(handle, 2),
                   side: sqlite3_column_int64(handle, 3), seq: sqlite3_column_int64(handle, 4),
                   at: sqlite3_column_int64(handle, 9),
                   columns: ChatRecord.Columns(kind: sqlite3_column_int64(handle, 1), a: sqlite3_column_int64(handle, 5),
                                               b: sqlite3_column_int64(handle, 6), ref: text(handle, 7), body: text(handle, 8)))
    }

    /// A text column, NULL as nil; its bytes as stored (by length, so a NUL inside the text does not cut it).
    private static func text(_ handle: SQLiteStatement, _ column: Int32) -> String? {
        guard sqlite3_column_type(handle, column) != SQLITE_NULL else { return nil }
        // sqlite3_column_text before sqlite3_column_bytes: the byte count is then the UTF-8 text's.
        guard let bytes = sqlite3_column_text(handle, column) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }
}
