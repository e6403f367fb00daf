import GRDB
import SpotterCore
import SpotterPorts

/// The SQLite log as its durable consumers read it (`ConsumableLog`): reads on GRDB's reader pool, saved
/// positions in `logConsumer` (migration "v14-log-consumers") through the one writer.
extension ChatLog: ConsumableLog {
    public func newestPosition() throws -> Int64 {
        try store.writer.read { db in
            try Int64.fetchOne(db.cachedStatement(sql: "SELECT COALESCE(MAX(pos), 0) FROM log")) ?? 0
        }
    }

    /// Every thread's records after `pos` (through `through`, if given), in log order, at most `limit`. The
    /// placeholder row of an old database (`LogSQL.placeholderKind`) is no record and is skipped.
    public func recordsAfter(_ pos: Int64, through: Int64?, limit: Int) throws -> [ChatRecord] {
        guard limit > 0 else { return [] }
        return try store.writer.read { db in
            try RecordQuery.fetchAll(db, sql: """
                SELECT \(LogSQL.recordColumns) FROM log WHERE pos > ? AND pos <= ? AND \(LogSQL.isRecord) ORDER BY pos LIMIT ?
                """, arguments: [pos, through ?? Int64.max, Int64(limit)])
        }
    }

    public func recordsAfter(_ pos: Int64, through: Int64?, limit: Int, kinds: Set<ChatRecord.Kind>) throws -> [ChatRecord] {
        guard limit > 0 else { return [] }
        return try store.writer.read { db in
            try RecordQuery.fetchAll(db, sql: """
                SELECT \(LogSQL.recordColumns) FROM log WHERE pos > ? AND pos <= ? AND \(LogSQL.kindIn(kinds)) ORDER BY pos LIMIT ?
                """, arguments: [pos, through ?? Int64.max, Int64(limit)])
        }
    }

    public func consumerPosition(_ name: String) throws -> Int64? {
        try store.writer.read { db in
            try Int64.fetchOne(db.cachedStatement(sql: "SELECT pos FROM logConsumer WHERE name = ?"), arguments: [name])
        }
    }

    public func saveConsumerPosition(_ name: String, _ position: Int64) throws {
        try writer.perform { db in
            try db.cachedStatement(sql: """
                INSERT INTO logConsumer (name, pos) VALUES (?, ?)
                ON CONFLICT(name) DO UPDATE SET pos = max(pos, excluded.pos)
                """).execute(arguments: [name, position])
        }
    }
}
