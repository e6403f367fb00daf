import GRDB
import GRDBSQLite

/// One of the writer's per-message statements, bound and stepped through SQLite's C API.
///
/// GRDB prepares and caches it (`cachedStatement`), so GRDB keeps owning its lifetime; only the execution skips
/// GRDB's argument arrays and execution bookkeeping, which the profile showed costing as much as SQLite's own
/// work for these small inserts. Use it only for statements that change rows and return none, inside a
/// transaction GRDB opened, with every parameter bound on each run.
struct DirectStatement {
    private let db: Database
    private let statement: Statement
    private var handle: SQLiteStatement { statement.sqliteStatement }

    init(_ db: Database, sql: String) throws {
        self.db = db
        self.statement = try db.cachedStatement(sql: sql)
    }

    func bind(_ index: Int32, _ value: String?) {
        guard var text = value else {
            sqlite3_bind_null(handle, index)
            return
        }
        if text.isEmpty {
            // An empty buffer may have no address, and a null pointer would bind NULL instead of ''.
            sqlite3_bind_text(handle, index, "", 0, DirectStatement.transient)
            return
        }
        text.withUTF8 { bytes in
            // SQLITE_TRANSIENT: SQLite copies the text before this returns.
            _ = sqlite3_bind_text(handle, index, bytes.baseAddress.map { UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self) },
                                  Int32(bytes.count), DirectStatement.transient)
        }
    }

    func bind(_ index: Int32, _ value: Int64) {
        sqlite3_bind_int64(handle, index, value)
    }

    func bind(_ index: Int32, _ value: Int64?) {
        guard let value else {
            sqlite3_bind_null(handle, index)
            return
        }
        sqlite3_bind_int64(handle, index, value)
    }

    /// Runs the statement to completion, then resets it and clears its bindings. Throws GRDB's `DatabaseError`.
    func run() throws {
        let code = sqlite3_step(handle)
        let message = code == SQLITE_DONE ? nil : db.lastErrorMessage
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        guard code == SQLITE_DONE else {
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: message, sql: statement.sql)
        }
    }

    private static let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)
}
