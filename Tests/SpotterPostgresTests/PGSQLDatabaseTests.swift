import Testing
@testable import SpotterPostgres

/// The shared SQL's parameters in PostgreSQL's spelling.
@Suite("PostgreSQL: SQLite-style parameters")
struct PGSQLDatabaseTests {
    @Test func questionMarksAreNumberedOutsideQuotes() {
        #expect(PGSQLDatabase.numbered("SELECT * FROM t WHERE a = ? AND b = ?") == "SELECT * FROM t WHERE a = $1 AND b = $2")
        #expect(PGSQLDatabase.numbered("WHERE CAST(?1 AS TEXT) IS NULL OR status = ?1") == "WHERE CAST($1 AS TEXT) IS NULL OR status = $1")
        // A bare ? after ?N is N+1, as in SQLite.
        #expect(PGSQLDatabase.numbered("?2, ?, ?1") == "$2, $3, $1")
        #expect(PGSQLDatabase.numbered(#"SELECT '?' , "odd?name", ? FROM "user""#) == #"SELECT '?' , "odd?name", $1 FROM "user""#)
        #expect(PGSQLDatabase.numbered("SELECT 'it''s?', ?") == "SELECT 'it''s?', $1")
    }
}
