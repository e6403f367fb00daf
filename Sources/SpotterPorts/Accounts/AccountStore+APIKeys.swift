/// A key another service of the app uses to call Spotter (the server-to-server API). Only the SHA-256 of the
/// key is stored; the key itself is shown once, when it is made.
public struct APIKeyRecord: Sendable, Equatable {
    public var id: String
    public var name: String
    public var createdBy: String
    public var createdAt: Int64
    public var revokedAt: Int64?
}

extension AccountStore {
    public func createAPIKey(id: String, name: String, keyHash: String, createdBy: String, now: Int64) throws -> APIKeyRecord {
        try write { db in
            try db.execute("""
                INSERT INTO apiKey (id, name, keyHash, createdBy, createdAt) VALUES (?, ?, ?, ?, ?)
                """, [id, name, keyHash, createdBy, now])
            return APIKeyRecord(id: id, name: name, createdBy: createdBy, createdAt: now, revokedAt: nil)
        }
    }

    /// Every key, newest first, without secrets.
    public func apiKeys() throws -> [APIKeyRecord] {
        try read { db in
            try db.fetchAll("SELECT id, name, createdBy, createdAt, revokedAt FROM apiKey ORDER BY createdAt DESC, id")
                .map { APIKeyRecord(id: $0["id"], name: $0["name"], createdBy: $0["createdBy"], createdAt: $0["createdAt"],
                                    revokedAt: $0["revokedAt"]) }
        }
    }

    /// Revokes a key; false when there is no such key. Revoking twice keeps the first time.
    public func revokeAPIKey(id: String, now: Int64) throws -> Bool {
        try write { db in
            guard try db.fetchOne("SELECT 1 FROM apiKey WHERE id = ?", [id]) != nil else { return false }
            try db.execute("UPDATE apiKey SET revokedAt = ? WHERE id = ? AND revokedAt IS NULL", [now, id])
            return true
        }
    }

    /// The id of the live (not revoked) key with this hash, if any.
    public func apiKeyID(hash: String) throws -> String? {
        try read { db in
            try db.fetchValue("SELECT id FROM apiKey WHERE keyHash = ? AND revokedAt IS NULL", [hash])
        }
    }
}
