import Testing
import SpotterCore

/// The log's numbers as every database holds them. SQL takes them from `ChatRecord.Kind`, `MessageKind`,
/// `ChatRecord.Columns.systemMessage` (through `LogSQL`), so a renumbered case would still read and write consistently in a
/// fresh database; it would misread every database written before, and change the text of shipped migrations.
/// Renumbering needs a migration of the rows and of the partial indexes, not an edit here.
@Suite("Stored kinds")
struct StoredKindTests {
    @Test func theNumbersInTheLogNeverChange() {
        let kinds: [ChatRecord.Kind: Int64] = [.message: 0, .receipt: 1, .link: 2, .session: 3, .ratingPrompt: 4,
                                               .tier: 5, .record: 6, .change: 7, .erasure: 8, .account: 9]
        for (kind, number) in kinds { #expect(kind.rawValue == number, "\(kind)") }
        #expect(ChatRecord.Kind(rawValue: 10) == nil, "a new kind: add it above, with its number")
        // An account record's `a`: which change it is.
        #expect([AccountChangeRecord.revokedSessionsColumn, AccountChangeRecord.profileColumn] == [1, 2])
        // A message's `b` flags and where the change time starts (`ChatRecord+Columns.swift`).
        #expect([ChatRecord.Columns.withAttachments, ChatRecord.Columns.edited, ChatRecord.Columns.deleted, ChatRecord.Columns.changedAtShift] == [1, 2, 4, 8])
        #expect([MessageKind.text, .mealLog, .system].map(\.rawValue) == [0, 1, 2])
        #expect(MessageKind(rawValue: 3) == nil, "a new message kind: add it above, with its number")
        #expect(ChatRecord.Columns.systemMessage == 1)
        #expect(LogSQL.placeholderKind == -1)
        #expect([Side.coach, .client].map(\.rawValue) == [0, 1])
    }

    /// The partial indexes' conditions exactly as the shipped migrations created them (SQLite v7 and v11,
    /// PostgreSQL v2): the migrations build them from `LogSQL`, and the queries the indexes serve must carry the
    /// same text for the planner to use them.
    @Test func theIndexConditionsAreTheShippedMigrationsText() {
        #expect(LogSQL.isSession == "kind = 3")
        #expect(LogSQL.isCoachingRecord == "kind = 6")
        #expect(LogSQL.isMealLog == "kind = 0 AND a = 1")
        #expect(LogSQL.isThreadMessage == "kind = 0 OR (kind = 3 AND a = 1)")
        #expect(LogSQL.isAccountChange == "kind = 9")
    }
}
