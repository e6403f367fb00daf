import SpotterPorts

/// The PostgreSQL side of the shared SQL (`SQLDatabase`): SQLite-style `?` and `?N` parameters become `$N`, every
/// value travels as text, and each statement is prepared once per connection.
struct PGSQLDatabase: SQLDatabase {
    let connection: PGConnection
    /// Rows changed by the last `execute` (a class: `SQLDatabase`'s methods are not mutating).
    private let last = Counter()

    init(_ connection: PGConnection) {
        self.connection = connection
    }

    func execute(_ sql: String, _ arguments: [any SQLBindable]) throws {
        let answer = try run(sql, arguments)
        last.value = answer.affected
    }

    func fetchAll(_ sql: String, _ arguments: [any SQLBindable]) throws -> [SQLRow] {
        let answer = try run(sql, arguments)
        return answer.rows.map { row in
            SQLRow(names: answer.columns, values: row.map { $0.map(SQLValue.text) ?? .null })
        }
    }

    var changes: Int { last.value }

    private func run(_ sql: String, _ arguments: [any SQLBindable]) throws -> PGRows {
        let text = PGSQLDatabase.numbered(sql)
        let values: [String?] = arguments.map { argument in
            switch argument.sqlValue {
            case .null: return nil
            case .integer(let number): return String(number)
            case .real(let number): return String(number)
            case .text(let text): return text
            }
        }
        return try connection.execPrepared(text, values)
    }

    /// `?` → `$1`, `$2`…, `?N` → `$N` (a bare `?` after `?N` is N+1, as in SQLite), outside quotes.
    static func numbered(_ sql: String) -> String {
        var result = ""
        result.reserveCapacity(sql.utf8.count + 8)
        var next = 1
        var quote: Character?
        var characters = sql.makeIterator()
        var pending: Character? = characters.next()
        while let character = pending {
            pending = characters.next()
            if let open = quote {
                result.append(character)
                if character == open { quote = nil }
                continue
            }
            if character == "'" || character == "\"" {
                quote = character
                result.append(character)
                continue
            }
            guard character == "?" else {
                result.append(character)
                continue
            }
            var digits = ""
            while let digit = pending, digit.isASCII, digit.isNumber {
                digits.append(digit)
                pending = characters.next()
            }
            let number = Int(digits) ?? next
            result += "$\(number)"
            next = max(next, number + 1)
        }
        return result
    }
}

private final class Counter: @unchecked Sendable {
    var value = 0
}
