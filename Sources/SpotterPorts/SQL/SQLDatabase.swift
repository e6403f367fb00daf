/// One database connection inside a transaction, as the account code sees it: SQL text with `?` parameters in,
/// rows out. SQLite (GRDB) and PostgreSQL (libpq, in SpotterPostgres) both implement it, so the accounts' SQL is
/// written once and runs on either engine. What that SQL may use: what both dialects accept — `?` or `?N`
/// parameters, `"user"` quoted, unquoted camelCase names (PostgreSQL folds them to lower case, consistently),
/// `ON CONFLICT … DO UPDATE/NOTHING`, `RETURNING`, integers for booleans, and `rowid` only on tables whose
/// PostgreSQL schema gives them a `rowid` identity column.
public protocol SQLDatabase {
    func execute(_ sql: String, _ arguments: [any SQLBindable]) throws
    func fetchAll(_ sql: String, _ arguments: [any SQLBindable]) throws -> [SQLRow]
    /// Rows changed by the last `execute`.
    var changes: Int { get }
}

extension SQLDatabase {
    public func execute(_ sql: String) throws { try execute(sql, []) }

    public func fetchOne(_ sql: String, _ arguments: [any SQLBindable] = []) throws -> SQLRow? {
        try fetchAll(sql, arguments).first
    }

    public func fetchAll(_ sql: String) throws -> [SQLRow] { try fetchAll(sql, []) }

    /// The first column of the first row (nil when there is no row or it is NULL).
    public func fetchValue<Value: SQLColumnValue>(_ sql: String, _ arguments: [any SQLBindable] = []) throws -> Value? {
        guard let row = try fetchOne(sql, arguments) else { return nil }
        let value: Value? = row[0]
        return value
    }

    /// The first column of every row.
    public func fetchValues<Value: SQLColumnValue>(_ sql: String, _ arguments: [any SQLBindable] = []) throws -> [Value] {
        try fetchAll(sql, arguments).map { $0[0] }
    }
}

/// A value in or out of SQL. PostgreSQL's text protocol hands every value over as text; readers convert.
public enum SQLValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
}

/// What can be bound to a parameter.
public protocol SQLBindable {
    var sqlValue: SQLValue { get }
}

extension String: SQLBindable { public var sqlValue: SQLValue { .text(self) } }
extension Int64: SQLBindable { public var sqlValue: SQLValue { .integer(self) } }
extension Int: SQLBindable { public var sqlValue: SQLValue { .integer(Int64(self)) } }
extension Double: SQLBindable { public var sqlValue: SQLValue { .real(self) } }
extension Bool: SQLBindable { public var sqlValue: SQLValue { .integer(self ? 1 : 0) } }
extension Optional: SQLBindable where Wrapped: SQLBindable {
    public var sqlValue: SQLValue { self?.sqlValue ?? .null }
}

/// What a column can be read as. A NULL read as a non-optional type, or a value that cannot be converted, is a
/// programming error (as in GRDB): the schema says what each column holds.
public protocol SQLColumnValue {
    static func from(_ value: SQLValue, column: String) -> Self
}

extension String: SQLColumnValue {
    public static func from(_ value: SQLValue, column: String) -> String {
        switch value {
        case .text(let text): return text
        case .integer(let number): return String(number)
        case .real(let number): return String(number)
        case .null: preconditionFailure("column \(column) is NULL, read as String")
        }
    }
}

extension Int64: SQLColumnValue {
    public static func from(_ value: SQLValue, column: String) -> Int64 {
        switch value {
        case .integer(let number): return number
        case .real(let number): return Int64(number)
        case .text(let text):
            if let number = Int64(text) { return number }
            if text == "t" { return 1 }  // a PostgreSQL boolean
            if text == "f" { return 0 }
            if let number = Double(text) { return Int64(number) }
            preconditionFailure("column \(column) holds '\(text)', read as an integer")
        case .null: preconditionFailure("column \(column) is NULL, read as an integer")
        }
    }
}

extension Int: SQLColumnValue {
    public static func from(_ value: SQLValue, column: String) -> Int { Int(Int64.from(value, column: column)) }
}

extension Bool: SQLColumnValue {
    public static func from(_ value: SQLValue, column: String) -> Bool { Int64.from(value, column: column) != 0 }
}

extension Double: SQLColumnValue {
    public static func from(_ value: SQLValue, column: String) -> Double {
        switch value {
        case .real(let number): return number
        case .integer(let number): return Double(number)
        case .text(let text):
            guard let number = Double(text) else { preconditionFailure("column \(column) holds '\(text)', read as a number") }
            return number
        case .null: preconditionFailure("column \(column) is NULL, read as a number")
        }
    }
}

extension Optional: SQLColumnValue where Wrapped: SQLColumnValue {
    public static func from(_ value: SQLValue, column: String) -> Wrapped? {
        if case .null = value { return nil }
        return Wrapped.from(value, column: column)
    }
}

/// One row: values by position and by column name (names compared without case, since PostgreSQL folds
/// unquoted names to lower case).
public struct SQLRow: Sendable {
    public let names: [String]
    public let values: [SQLValue]

    public init(names: [String], values: [SQLValue]) {
        self.names = names
        self.values = values
    }

    public subscript<Value: SQLColumnValue>(_ index: Int) -> Value {
        Value.from(values[index], column: names[index])
    }

    public subscript<Value: SQLColumnValue>(_ column: String) -> Value {
        guard let index = names.firstIndex(where: { $0.caseInsensitiveEquals(column) }) else {
            preconditionFailure("no column \(column) in the row (\(names.joined(separator: ", ")))")
        }
        return Value.from(values[index], column: column)
    }
}

extension String {
    func caseInsensitiveEquals(_ other: String) -> Bool {
        utf8.count == other.utf8.count && lowercased() == other.lowercased()
    }
}
