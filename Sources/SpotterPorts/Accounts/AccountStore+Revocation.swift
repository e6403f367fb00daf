import SpotterCore

extension AccountStore {
    /// The session's revocation as the accounts hold it, nil while it is not revoked (or unknown). What a process
    /// of a cluster reads before letting an access token in, so a sign-out another process acknowledged is refused
    /// before this one follows its `account` record (`API.checkedAcrossProcesses`). One indexed read on
    /// PostgreSQL (`refreshToken_familyId`); SQLite, which serves one process, is not asked.
    public func revocation(ofSession familyID: String) throws -> RevokedSession? {
        try read { db in
            guard let row = try db.fetchOne("""
                SELECT userId, MAX(revokedAt) AS revokedAt FROM refreshToken
                WHERE familyId = ? AND revokedAt IS NOT NULL GROUP BY userId
                """, [familyID]) else { return nil }
            return RevokedSession(userID: row["userId"], familyID: familyID, revokedAt: row["revokedAt"])
        }
    }
}
