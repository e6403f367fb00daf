import GRDB
import SpotterPorts

/// The SQLite side: a GRDB connection inside its transaction. Statements are cached by SQL text.
struct GRDBSQLDatabase: SQLDatabase {
    let db: Database

    init(_ db: Database) {
        self.db = db
    }

    func execute(_ sql: String, _ arguments: [any SQLBindable]) throws {
        try db.cachedStatement(sql: sql).execute(arguments: StatementArguments(arguments.map(\.sqlValue.databaseValue)))
    }

    func fetchAll(_ sql: String, _ arguments: [any SQLBindable]) throws -> [SQLRow] {
        let statement = try db.cachedStatement(sql: sql)
        let names = statement.columnNames
        return try Row.fetchAll(statement, arguments: StatementArguments(arguments.map(\.sqlValue.databaseValue))).map { row in
            SQLRow(names: names, values: row.databaseValues.map(SQLValue.init))
        }
    }

    var changes: Int { db.changesCount }
}

extension SQLValue {
    var databaseValue: DatabaseValue {
        switch self {
        case .null: return .null
        case .integer(let number): return number.databaseValue
        case .real(let number): return number.databaseValue
        case .text(let text): return text.databaseValue
        }
    }

    init(_ value: DatabaseValue) {
        switch value.storage {
        case .null: self = .null
        case .int64(let number): self = .integer(number)
        case .double(let number): self = .real(number)
        case .string(let text): self = .text(text)
        case .blob(let data): self = .text(String(decoding: data, as: UTF8.self))
        }
    }
}
