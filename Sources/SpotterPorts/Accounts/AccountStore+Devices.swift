import SpotterCore

/// A row of `device`: a push address one user's app registered from one session.
public struct DeviceRecord: Sendable, Equatable {
    public var id: String
    public var userID: String
    /// The session (refresh-token family) that registered it last: its sign-out removes the device.
    public var sessionID: String
    public var address: PushAddress
    /// When this user first registered it, and when last (Unix seconds).
    public var createdAt: Int64
    public var registeredAt: Int64

    init(row: SQLRow) {
        id = row["id"]
        userID = row["userId"]
        sessionID = row["sessionId"]
        let platform: String = row["platform"]
        address = PushAddress(platform: PushAddress.Platform(rawValue: platform) ?? .fcm, token: row["token"],
                              topic: row["topic"], environment: row["environment"], p256dh: row["p256dh"], auth: row["auth"])
        createdAt = row["createdAt"]
        registeredAt = row["registeredAt"]
    }
}

/// What a registration did.
public enum DeviceRegistration: Sendable, Equatable {
    /// Stored as `device`; `removed` are the ids of the user's devices dropped to stay within the limit, oldest first.
    case registered(DeviceRecord, removed: [String])
    /// The session was revoked (signed out) before the write: nothing was stored.
    case sessionEnded
}

/// Push devices (`device`): at most `DeviceRules.maxDevicesPerUser` per user, each address (platform and token) held
/// by one user at a time, each tied to the session that registered it. A session that ends — sign-out, a password
/// change signing the others out, a refresh token reused — takes its devices with it (`revoke(familyID:)`).
extension AccountStore {
    /// Registers `address` for `userID` from session `sessionID`, in one transaction:
    /// - an address already this user's is renewed: same id, its session, keys, topic and `registeredAt` replaced;
    /// - an address another user holds moves to this one under the new `id` (a phone that changed accounts);
    /// - past `keep` devices, the user's least recently registered ones are removed.
    /// A session revoked meanwhile (its sign-out won the race with this write) stores nothing: `.sessionEnded`.
    public func registerDevice(id: String, userID: String, sessionID: String, _ address: PushAddress, now: Int64,
                               keep: Int = DeviceRules.maxDevicesPerUser) throws -> DeviceRegistration {
        try write { db in
            if try db.fetchOne("SELECT 1 FROM refreshToken WHERE familyId = ? AND revokedAt IS NOT NULL", [sessionID]) != nil {
                return .sessionEnded
            }
            // Registration order per user; a renewal takes the next number, so "oldest" means least recently registered.
            let serial: Int64 = try db.fetchValue("SELECT COALESCE(MAX(serial), 0) + 1 FROM device WHERE userId = ?", [userID]) ?? 1
            // One statement, so that two processes registering the same address at once cannot both insert it: the
            // row keeps its id and first registration only when it stays with the same user.
            try db.execute("""
                INSERT INTO device (id, userId, sessionId, platform, token, topic, environment, p256dh, auth, createdAt,
                                    registeredAt, serial)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?10, ?11)
                ON CONFLICT (platform, token) DO UPDATE SET
                    id = CASE WHEN device.userId = excluded.userId THEN device.id ELSE excluded.id END,
                    createdAt = CASE WHEN device.userId = excluded.userId THEN device.createdAt ELSE excluded.createdAt END,
                    userId = excluded.userId, sessionId = excluded.sessionId, topic = excluded.topic,
                    environment = excluded.environment, p256dh = excluded.p256dh, auth = excluded.auth,
                    registeredAt = excluded.registeredAt, serial = excluded.serial
                """, [id, userID, sessionID, address.platform.rawValue, address.token, address.topic, address.environment,
                      address.p256dh, address.auth, now, serial])
            guard let row = try db.fetchOne("SELECT * FROM device WHERE platform = ? AND token = ?",
                                            [address.platform.rawValue, address.token]) else { throw AccountStoreError.notFound }
            let newestFirst: [String] = try db.fetchValues("SELECT id FROM device WHERE userId = ? ORDER BY serial DESC, id DESC", [userID])
            let removed = Array(newestFirst.dropFirst(keep).reversed())
            for old in removed { try db.execute("DELETE FROM device WHERE id = ?", [old]) }
            return .registered(DeviceRecord(row: row), removed: removed)
        }
    }

    /// The user's devices, the most recently registered first.
    public func devices(userID: String) throws -> [DeviceRecord] {
        try read { db in
            try db.fetchAll("SELECT * FROM device WHERE userId = ? ORDER BY serial DESC, id DESC", [userID]).map(DeviceRecord.init(row:))
        }
    }

    /// Removes the user's device `id`; false when the user has no such device (another user's id included).
    public func deleteDevice(id: String, userID: String) throws -> Bool {
        try write { db in
            try db.execute("DELETE FROM device WHERE id = ? AND userId = ?", [id, userID])
            return db.changes > 0
        }
    }
}
