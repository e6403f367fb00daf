/// The log's stored form as SQL, for both engines (SQLite's `ChatLog`, `PostgresChatLog`) and their migrations:
/// every condition on `kind`, and on `a` where its meaning depends on the kind (`ChatRecord+Columns.swift`), is
/// written here from the Swift definitions (`ChatRecord.Kind`, `MessageKind`, `ChatRecord.Columns.systemMessage`),
/// so no SQL text spells those numbers.
///
/// The numbers go into the SQL text as literals, never as bound parameters: a partial index serves a query only
/// when the query's WHERE holds the index's own condition (SQLite matches the terms as written, and PostgreSQL must
/// prove it when planning, which it cannot for a parameter in a generic plan). So each partial index and the queries
/// it serves use the same constant below.
///
/// Every database written so far holds these numbers (`StoredKindTests` pins them): the migrations that created
/// the partial indexes build their SQL from here too, which is the same text they ran with only while no number
/// changes. Both migrators compare migrations by name, never by text; renumbering a kind would need a new
/// migration of the rows and of those indexes.
public enum LogSQL {
    /// `kind` of the placeholder row the SQLite "v5-log" migration may have written to hold a position: not a
    /// record, no reader asks for it.
    public static let placeholderKind: Int64 = -1

    /// The log's columns in the order both engines decode a record from them by index (`RecordQuery`,
    /// `PostgresChatLog.records`): a reader selects these, never `*`.
    public static let recordColumns = "pos, kind, threadNo, side, seq, a, b, ref, body, at"

    /// Any row that is a record (not the placeholder).
    public static let isRecord = "kind <> \(placeholderKind)"

    /// A message of a person or a service (`ChatRecord.Kind.message`), whatever its `MessageKind`.
    public static let isMessage = "kind = \(ChatRecord.Kind.message.rawValue)"

    /// A video session's record (`ChatRecord.Kind.session`).
    public static let isSession = "kind = \(ChatRecord.Kind.session.rawValue)"

    /// A coaching-record change (`ChatRecord.Kind.record`).
    public static let isCoachingRecord = "kind = \(ChatRecord.Kind.record.rawValue)"

    /// A message was edited or deleted (`ChatRecord.Kind.change`).
    public static let isChange = "kind = \(ChatRecord.Kind.change.rawValue)"

    /// An account's erasure (`ChatRecord.Kind.erasure`).
    public static let isErasure = "kind = \(ChatRecord.Kind.erasure.rawValue)"

    /// An account's change every process follows (`ChatRecord.Kind.account`), on no thread.
    public static let isAccountChange = "kind = \(ChatRecord.Kind.account.rawValue)"

    /// A message not deleted (its `b` has no deleted flag): put after `isMessage` or `isMealLog`.
    public static let isStanding = "(b & \(ChatRecord.Columns.deleted)) = 0"

    /// A meal log: a message whose `a` is `MessageKind.mealLog`.
    public static let isMealLog = "\(isMessage) AND a = \(MessageKind.mealLog.rawValue)"

    /// A message a person wrote: a message whose `a` is not `MessageKind.system` (a service's).
    public static let isPersonsMessage = "\(isMessage) AND a != \(MessageKind.system.rawValue)"

    /// A session record that is also its thread's system message (`a` is `ChatRecord.Columns.systemMessage`).
    public static let isSessionSystemMessage = "\(isSession) AND a = \(ChatRecord.Columns.systemMessage)"

    /// A message of its thread, with its own seq: `ChatRecord.isThreadMessage` in SQL. An OR: put it in
    /// parentheses when it is joined to other conditions.
    public static let isThreadMessage = "\(isMessage) OR (\(isSessionSystemMessage))"
}
