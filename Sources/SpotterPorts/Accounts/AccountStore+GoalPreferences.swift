import SpotterProtocol

/// Goal preferences (`goalPreferences`, SQLite "v29-goal-preferences", PostgreSQL "v19-goal-preferences"): one row
/// per user who changed them, none for the defaults (no method, metric).
extension AccountStore {
    public func goalPreferences(userID: String) throws -> GoalPreferencesView {
        try read { db in try Self.goalPreferences(db, userID: userID) }
    }

    /// Applies the given fields (nil: unchanged; `bodyFatMethod` `.some(nil)`: none) and answers the preferences now
    /// in force. The values were checked by the caller.
    public func updateGoalPreferences(userID: String, bodyFatMethod: String??, units: String?, now: Int64) throws -> GoalPreferencesView {
        try write { db in
            var next = try Self.goalPreferences(db, userID: userID)
            if let bodyFatMethod { next.bodyFatMethod = bodyFatMethod }
            if let units { next.units = units }
            try db.execute("""
                INSERT INTO goalPreferences (userId, bodyFatMethod, units, updatedAt) VALUES (?, ?, ?, ?)
                ON CONFLICT (userId) DO UPDATE SET
                    bodyFatMethod = excluded.bodyFatMethod, units = excluded.units, updatedAt = excluded.updatedAt
                """, [userID, next.bodyFatMethod, next.units, now])
            return next
        }
    }

    private static func goalPreferences(_ db: any SQLDatabase, userID: String) throws -> GoalPreferencesView {
        guard let row = try db.fetchOne("SELECT bodyFatMethod, units FROM goalPreferences WHERE userId = ?", [userID]) else {
            return .defaults
        }
        return GoalPreferencesView(bodyFatMethod: row["bodyFatMethod"], units: row["units"])
    }
}
