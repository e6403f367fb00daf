import Testing
import SpotterPostgres
@testable import SpotterPorts
@testable import SpotterStore
import TestSupport

/// The engines the accounts' SQL runs on: the account suites run every test on each.
enum AccountsBackend: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite
    case postgres

    var testDescription: String { rawValue }
}

/// An empty account store on one engine: SQLite in memory, or a fresh database in the test process's PostgreSQL
/// cluster (which fails the test, with what to install, where PostgreSQL is missing).
final class AccountsFixture {
    let accounts: AccountStore
    private let postgres: PostgresStore?

    init(_ backend: AccountsBackend) throws {
        switch backend {
        case .sqlite:
            accounts = AccountStore(try Store.inMemory())
            postgres = nil
        case .postgres:
            let store = try PostgresStore(url: try PostgresCluster.shared().makeDatabase())
            accounts = AccountStore(engine: PostgresAccounts(store: store))
            postgres = store
        }
    }

    /// Stops the PostgreSQL store's writer (call it in a `defer`, which also keeps the fixture alive).
    func close() { postgres?.close() }

    /// The first column of a query's rows, read behind the store's back.
    func column<Value: SQLColumnValue>(_ sql: String) throws -> [Value] {
        try accounts.engine.read { db in try db.fetchValues(sql) }
    }
}
