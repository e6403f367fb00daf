#if canImport(Glibc)
import Glibc
#endif
import CLibPQ

/// What PostgreSQL (or the way to it) refused.
public struct PostgresError: Error, CustomStringConvertible, Sendable {
    /// The SQLSTATE when the server answered (`23505` unique violation, `40001` serialization failure…); nil
    /// when there was no answer (no connection).
    public let sqlState: String?
    public let message: String

    public init(sqlState: String?, message: String) {
        self.sqlState = sqlState
        self.message = message
    }

    /// The connection is gone (the server stopped, the network broke): the outcome of what was in flight is
    /// unknown, and the next use reconnects.
    public var isConnectionLost: Bool { sqlState == nil || sqlState!.hasPrefix("08") || sqlState == "57P01" }

    public var description: String {
        "PostgreSQL: \(message)" + (sqlState.map { " (SQLSTATE \($0))" } ?? "")
    }
}

/// The rows of one answer, as text (libpq's text format), by row then column.
struct PGRows {
    let columns: [String]
    let rows: [[String?]]
    /// Rows a command inserted, updated or deleted (PQcmdTuples).
    var affected: Int = 0

    var isEmpty: Bool { rows.isEmpty }

    /// The first column of the first row.
    var scalar: String? { rows.first?.first ?? nil }

    func index(of column: String) -> Int {
        guard let index = columns.firstIndex(of: column) else { preconditionFailure("no column \(column) in the answer") }
        return index
    }
}

/// One libpq connection. Blocking: use it from a store thread, never from the event loop. Not thread-safe
/// (libpq's connections are not): one owner at a time.
final class PGConnection {
    private var raw: OpaquePointer?
    let url: String

    init(url: String) throws {
        self.url = url
        try connect()
    }

    deinit {
        if let raw { PQfinish(raw) }
    }

    private func connect() throws {
        if let raw { PQfinish(raw) }
        raw = PQconnectdb(url)
        guard let raw, PQstatus(raw) == CONNECTION_OK else {
            let text = raw.map { String(cString: PQerrorMessage($0)) } ?? "out of memory"
            throw PostgresError(sqlState: nil, message: "cannot connect: " + text.trimmingSpace)
        }
        // Notices (e.g. "relation already exists, skipping") are not errors; keep them off stderr.
        PQsetNoticeProcessor(raw, { _, _ in }, nil)
    }

    /// Whether the connection is usable; the owner replaces a broken one.
    var isBroken: Bool { raw.map { PQstatus($0) != CONNECTION_OK } ?? true }

    /// Runs one statement with text parameters (`$1`…; nil is NULL) and returns its rows (none for commands).
    @discardableResult
    func exec(_ sql: String, _ parameters: [String?] = []) throws -> PGRows {
        guard let raw else { throw PostgresError(sqlState: nil, message: "not connected") }
        let result: OpaquePointer? = withCStrings(parameters) { pointers in
            PQexecParams(raw, sql, Int32(parameters.count), nil, pointers, nil, nil, 0)
        }
        return try rows(of: result)
    }

    /// Throws the server's error if `result` is one.
    private func check(_ result: OpaquePointer) throws {
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK:
            return
        default:
            let state = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) }
            let message = String(cString: PQresultErrorMessage(result)).trimmingSpace
            throw PostgresError(sqlState: isBroken ? nil : state, message: message)
        }
    }

    /// The rows of an answer (freed here), or its error.
    private func rows(of result: OpaquePointer?) throws -> PGRows {
        guard let result else {
            throw PostgresError(sqlState: nil, message: raw.map { String(cString: PQerrorMessage($0)).trimmingSpace } ?? "not connected")
        }
        defer { PQclear(result) }
        try check(result)
        let rowCount = Int(PQntuples(result))
        let columnCount = Int(PQnfields(result))
        let columns = (0..<columnCount).map { String(cString: PQfname(result, Int32($0))) }
        var rows: [[String?]] = []
        rows.reserveCapacity(rowCount)
        for row in 0..<rowCount {
            var values: [String?] = []
            values.reserveCapacity(columnCount)
            for column in 0..<columnCount {
                if PQgetisnull(result, Int32(row), Int32(column)) == 1 {
                    values.append(nil)
                } else {
                    values.append(String(cString: PQgetvalue(result, Int32(row), Int32(column))))
                }
            }
            rows.append(values)
        }
        return PGRows(columns: columns, rows: rows, affected: Int(String(cString: PQcmdTuples(result))) ?? 0)
    }

    /// Statements prepared on this connection, by SQL text (preparing is per connection, and a new one after a
    /// reconnect starts with none).
    private var prepared: [String: String] = [:]

    /// Runs `sql`, prepared once per connection (the server parses and plans it once).
    @discardableResult
    func execPrepared(_ sql: String, _ parameters: [String?]) throws -> PGRows {
        guard let raw else { throw PostgresError(sqlState: nil, message: "not connected") }
        let name: String
        if let known = prepared[sql] {
            name = known
        } else {
            name = "s\(prepared.count + 1)"
            guard let result = PQprepare(raw, name, sql, Int32(parameters.count), nil) else {
                throw PostgresError(sqlState: nil, message: String(cString: PQerrorMessage(raw)).trimmingSpace)
            }
            defer { PQclear(result) }
            try check(result)
            prepared[sql] = name
        }
        let result: OpaquePointer? = withCStrings(parameters) { pointers in
            PQexecPrepared(raw, name, Int32(parameters.count), pointers, nil, nil, 0)
        }
        return try rows(of: result)
    }

    /// Runs several statements in one string, in one round trip (no parameters: the simple protocol); the rows
    /// of the last one. Migrations, and the writer's transaction control.
    @discardableResult
    func execSimple(_ sql: String) throws -> PGRows {
        guard let raw else { throw PostgresError(sqlState: nil, message: "not connected") }
        return try rows(of: PQexec(raw, sql))
    }

    /// Copies each string into C memory for the length of `body` (libpq copies what it needs before returning).
    private func withCStrings<R>(_ strings: [String?], _ body: ([UnsafePointer<CChar>?]) -> R) -> R {
        var owned: [UnsafeMutablePointer<CChar>?] = []
        owned.reserveCapacity(strings.count)
        for string in strings {
            owned.append(string.map { strdup($0) })
        }
        defer { for pointer in owned { free(pointer) } }
        return body(owned.map { UnsafePointer($0) })
    }
}

extension String {
    var trimmingSpace: String {
        var view = Substring(self)
        while let last = view.last, last.isWhitespace { view.removeLast() }
        while let first = view.first, first.isWhitespace { view.removeFirst() }
        return String(view)
    }
}
